"""The report listener under the real runner: interruption mid-run, progress, reports written."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.reports import RunReports, load_results

runner = pytest.importorskip("conformance.runner", reason="the runner is not there yet")


def _reference_bash() -> Any:
    from conformance.subjects.spec import factory_subject

    return factory_subject("conformance.reference.bash:factory", family="bash",
                           tool_type="bash_20250124", name="reference-bash")


class _Interrupt:
    """A listener that raises KeyboardInterrupt (as Ctrl-C would) after ``after`` results."""

    def __init__(self, after: int) -> None:
        self.after, self.seen = after, 0

    def on_check_finished(self, result: Any) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise KeyboardInterrupt


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_interrupted_run_leaves_valid_incomplete_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tty = _Tty()
    reports = RunReports(out, stream=tty)
    with pytest.raises(KeyboardInterrupt):
        runner.run([_reference_bash()], checks=["bash.session.*"], jobs=1,
                   listeners=[reports, _Interrupt(after=2)])
    doc = load_results(out / "results.json").doc
    assert doc["run"]["complete"] is False and doc["run"]["interrupted"] is True
    assert doc["summary"]["verdict"] == "incomplete" and len(doc["results"]) >= 2
    assert doc["run"]["planned"] and doc["run"]["planned"] > len(doc["results"])
    assert "INCOMPLETE" in (out / "report.md").read_text().splitlines()[0]
    assert reports.exit_code == 1
    assert "interrupted: [" in tty.getvalue()  # progress said so on the terminal


def test_complete_run_through_the_runner(tmp_path: Path) -> None:
    out = tmp_path / "run"
    reports = RunReports(out, progress=False)
    summary = runner.run([_reference_bash()], checks=["bash.session.*"], listeners=[reports])
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["complete"] is True and doc["summary"]["total"] == len(summary.results)
    assert reports.exit_code == summary.exit_code == 0
    assert {r["check_id"] for r in doc["results"]} == {r.check_id for r in summary.results}
    assert all(r.get("statement") for r in doc["results"])  # enriched from the catalog
