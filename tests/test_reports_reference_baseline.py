"""The committed baseline report of the reference subjects equals a fresh run (normalised)."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

from conformance.reports import load_results

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "reports" / "baseline"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.reference_baseline import render, scrub  # noqa: E402


def test_committed_baseline_is_a_valid_results_file() -> None:
    if not (BASELINE / "results.json").exists():
        pytest.skip("reports/baseline/ is not generated yet (nox -s baseline)")
    doc = load_results(BASELINE / "results.json").doc
    assert doc["run"]["complete"] is True
    assert doc["run"]["started_at"] == "<volatile>"  # normalised, so the file diffs cleanly


@pytest.mark.slow(40)  # the whole reference run (~30 s on two cores); `-m "not slow"` skips it
def test_committed_baseline_equals_a_fresh_run(tmp_path: Path) -> None:
    """In this test process, whatever ran in it before: the reference run's results do not
    depend on it (a full-suite worker once gave the editor model check other examples, from the
    constants of the modules earlier tests imported: fixed in properties/exploration.py, see
    tests/test_model_check_isolation.py). In process it also costs no second interpreter.

    The one whole reference run of the tests (issue 21: it was run twice, ~50 s each): it is also
    `tooluse run --all-reference --out DIR` as a user runs it, so the command's own output is
    checked here too (every reference subject passes; the report files are written)."""
    pytest.importorskip("conformance.runner", reason="the runner is not there yet")
    from conformance.catalog import CATALOG
    from scripts.reference_baseline import run_reference

    out = tmp_path / "run"
    code, printed = run_reference(out)
    # the command, as a user runs it: every reference subject passes, the reports are written
    assert "PASS:" in printed and "reference-bash (bash_20250124)" in printed, printed[-3000:]
    assert (out / "junit.xml").is_file() and (out / "report.md").is_file()
    loaded = load_results(out / "results.json")
    bash_ids = {i for i in CATALOG if i.startswith("bash.")}
    assert {r.check_id for r in loaded.results if r.subject == "reference-bash"} == bash_ids
    assert all(r.outcome.value == "pass" for r in loaded.results if r.family == "bash")
    doc = scrub(loaded.doc)
    assert doc["run"]["complete"], "the reference run did not complete"
    if not (BASELINE / "results.json").exists():
        pytest.skip("reports/baseline/ is not generated yet (nox -s baseline)")
    fresh = render(doc)
    for name, text in fresh.items():
        committed = (BASELINE / name).read_text(encoding="utf-8")
        if committed != text:
            diff = "".join(list(difflib.unified_diff(committed.splitlines(True),
                                                     text.splitlines(True),
                                                     f"reports/baseline/{name}", "fresh run",
                                                     n=1))[:80])
            pytest.fail(f"reports/baseline/{name} is stale: regenerate with `nox -s baseline` "
                        f"and commit it.\n{diff}")
    # the reference subjects are conformant: the baseline run passes
    assert code == 0 and doc["summary"]["verdict"] == "pass"


def test_scrub_replaces_temporary_paths() -> None:
    import tempfile

    from test_reports_sample import sample_results

    from conformance.reports.results_file import new_document, result_record
    from conformance.results import RunInfo

    doc = new_document(RunInfo())
    r = sample_results()[4]
    r.message = f"cannot open {tempfile.gettempdir()}/tooluse-editor.view-abc123/a.txt"
    doc["results"].append(result_record(r))
    assert scrub(doc)["results"][0]["message"] == "cannot open <tmp>/a.txt"
