"""Reports of a conformance run: results.json, JUnit, Markdown, HTML, baselines, diffs, coverage.

The runner emits :class:`~conformance.results.CheckResult` records to listeners;
:class:`RunReports` (or :class:`ResultsWriter` alone) is the listener that writes them. Every
other writer reads a validated ``results.json`` (:func:`load_results`).
"""

from __future__ import annotations

from .baseline import (
    Baseline,
    BaselineEntry,
    BaselineError,
    BaselineVerdict,
    apply_baseline,
    load_baseline,
    parse_baseline,
)
from .bundle import RunReports, exit_code, write_reports
from .coverage import coverage_for
from .html import render_html
from .junit import render_junit
from .markdown import render_markdown
from .progress import Progress
from .results_file import (
    FORMAT_VERSION,
    ResultsFileError,
    ResultsWriter,
    RunResults,
    load_results,
    normalise,
    validate_document,
)

__all__ = [
    "FORMAT_VERSION",
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "BaselineVerdict",
    "Progress",
    "ResultsFileError",
    "ResultsWriter",
    "RunReports",
    "RunResults",
    "apply_baseline",
    "coverage_for",
    "exit_code",
    "load_baseline",
    "load_results",
    "normalise",
    "parse_baseline",
    "render_html",
    "render_junit",
    "render_markdown",
    "validate_document",
    "write_reports",
]
