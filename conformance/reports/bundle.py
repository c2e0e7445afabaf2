"""All reports of a run in one directory, and the listener the runner hands results to.

``tooluse run --out DIR`` gives a :class:`RunReports` to the runner; it keeps
``DIR/results.json`` valid while the run goes, draws progress on a terminal, and at the end
writes ``junit.xml``, ``report.md`` and ``report.html`` (applying ``--expected-failures``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from conformance.results import CheckResult, RunInfo

from .baseline import Baseline, BaselineVerdict, apply_baseline
from .html import render_html
from .junit import render_junit
from .markdown import render_markdown
from .progress import Progress
from .results_file import ResultsWriter, RunResults, write_atomic

RESULTS = "results.json"
JUNIT = "junit.xml"
MARKDOWN = "report.md"
HTML = "report.html"
BASELINE = "baseline-verdict.json"


def write_reports(run: RunResults | dict[str, Any], out_dir: str | Path, *,
                  baseline: Baseline | None = None) -> tuple[dict[str, Path], BaselineVerdict | None]:
    """Write JUnit, Markdown and HTML next to ``results.json``; returns paths and the verdict."""
    doc = run.doc if isinstance(run, RunResults) else run
    results = RunResults(doc).results
    out = Path(out_dir)
    verdict = (apply_baseline(results, baseline, strict=bool(doc["run"].get("strict")),
                              fail_on_flaky=bool(doc["run"].get("fail_on_flaky")))
               if baseline is not None else None)
    paths = {"junit": out / JUNIT, "markdown": out / MARKDOWN, "html": out / HTML}
    write_atomic(paths["junit"], render_junit(doc, verdict))
    write_atomic(paths["markdown"], render_markdown(doc, verdict))
    write_atomic(paths["html"], render_html(doc, verdict))
    if verdict is not None:
        paths["baseline"] = out / BASELINE
        write_atomic(paths["baseline"], json.dumps(verdict.to_json(), indent=2) + "\n")
    return paths, verdict


def exit_code(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> int:
    """0 when the run passes (every MUST, or the baseline holds), 1 otherwise (incomplete too:
    the run stopped early, or a case never ran)."""
    if not doc["run"]["complete"] or doc["summary"]["verdict"] == "incomplete":
        return 1
    if verdict is not None:
        return verdict.exit_code
    return 0 if doc["summary"]["verdict"] == "pass" else 1


class RunReports:
    """The runner's listener: results.json as the run goes, progress, reports at the end.

    After ``on_run_finished``: ``.paths``, ``.verdict`` (baseline) and ``.exit_code``.
    """

    def __init__(self, out_dir: str | Path, *, baseline: Baseline | None = None,
                 progress: bool | None = None, stream: TextIO | None = None,
                 coverage_corpus: Path | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.baseline = baseline
        self.writer = ResultsWriter(self.out_dir / RESULTS, coverage_corpus=coverage_corpus)
        self.progress = Progress(stream, enabled=progress)
        self.paths: dict[str, Path] = {"results": self.writer.path}
        self.verdict: BaselineVerdict | None = None
        self.exit_code = 1

    def on_run_started(self, run: RunInfo) -> None:
        self.writer.on_run_started(run)
        self.progress.on_run_started(run)

    def on_check_started(self, check_id: str, subject: str) -> None:
        self.progress.on_check_started(check_id, subject)

    def on_check_finished(self, result: CheckResult) -> None:
        self.writer.on_check_finished(result)
        self.progress.on_check_finished(result)

    def on_run_startup(self, stats: Any) -> None:
        self.writer.on_run_startup(stats)

    def on_run_finished(self, *, complete: bool) -> None:
        self.writer.on_run_finished(complete=complete)
        self.progress.on_run_finished(complete=complete)
        assert self.writer.doc is not None
        paths, self.verdict = write_reports(self.writer.doc, self.out_dir, baseline=self.baseline)
        self.paths.update(paths)
        self.exit_code = exit_code(self.writer.doc, self.verdict)
