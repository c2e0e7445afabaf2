"""Markdown, JUnit and the report bundle on the small fixed run (synthetic results)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension
from test_reports_sample import FIXED_END, SUBJECTS, sample_doc, sample_results

from conformance.reports import (
    Progress,
    RunReports,
    load_results,
    normalise,
    parse_baseline,
    render_junit,
    render_markdown,
    write_reports,
)
from conformance.reports import markdown as md_mod
from conformance.reports import results_file as rf
from conformance.results import CheckResult, Outcome, RunInfo
from conformance.run import Run

XSD = Path(__file__).parent / "data" / "junit-jenkins.xsd"

#: Coverage depends on the registry and catalog other parts grow; snapshots use a fixed one.
FIXED_COVERAGE = {
    "tool_versions": {"known": ["bash_20250124", "text_editor_20250429", "text_editor_20250728"],
                      "exercised": ["bash_20250124", "text_editor_20250728"],
                      "missing": ["text_editor_20250429"], "extra": []},
    "stop_reasons": {"known": ["end_turn", "pause_turn", "tool_use"], "exercised": ["tool_use"],
                     "missing": ["end_turn", "pause_turn"], "extra": []},
}


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    d = normalise(sample_doc(tmp_path, monkeypatch=monkeypatch))
    d["coverage"] = FIXED_COVERAGE
    return d


@pytest.fixture
def json_snapshot(snapshot: Any) -> Any:
    return snapshot.use_extension(JSONSnapshotExtension)


def test_markdown_snapshot(doc: dict[str, Any], snapshot: Any) -> None:
    assert render_markdown(doc) == snapshot


def test_markdown_with_baseline_snapshot(doc: dict[str, Any], snapshot: Any) -> None:
    from conformance.reports import apply_baseline
    from conformance.reports.results_file import RunResults

    baseline = parse_baseline("broken-editor:editor.demo.view_line_numbers  # known\n"
                              "bash.demo.session_persists\n")
    verdict = apply_baseline(RunResults(doc).results, baseline)
    assert render_markdown(doc, verdict) == snapshot


def test_results_json_snapshot(doc: dict[str, Any], json_snapshot: Any) -> None:
    assert doc == json_snapshot


def test_markdown_puts_blocking_must_failures_first(doc: dict[str, Any]) -> None:
    text = render_markdown(doc)
    must = text.index("MUST `editor.demo.str_replace_multiple_matches`")
    err = text.index("`editor.demo.undo_edit_refused` on `broken-editor`: ERROR")
    should = text.index("SHOULD `editor.demo.outside_workdir_refused`")
    assert must < err < should
    assert "- **Received:** `root:x:0:0`" in text
    assert text.count("<details><summary>Reproducer") == 3
    assert text.startswith("## ❌ tooluse conformance: FAIL")


def test_markdown_stays_under_comment_limit(doc: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    big = next(r for r in doc["results"] if r["outcome"] == "fail" and r["severity"] == "MUST")
    many = []
    for i in range(400):
        many.append(big | {"check_id": f"editor.demo.case_{i:03d}", "received": "x" * 500,
                           "reproducer": [{"command": "view", "path": "/w/" + "y" * 2000}]})
    doc["results"] = many
    text = render_markdown(doc)
    assert len(text) < 65_536
    assert "more failures: see results.json or report.html" in text
    assert "### Protocol coverage" in text  # the tail survives truncation
    monkeypatch.setattr(md_mod, "MAX_CHARS", 10**9)
    assert len(render_markdown(doc)) > 65_536


def test_incomplete_run_is_flagged(tmp_path: Path) -> None:
    d = sample_doc(tmp_path, complete=False, results=sample_results()[:3])
    text = render_markdown(d)
    assert "INCOMPLETE" in text and "did not finish" in text


# --- JUnit -------------------------------------------------------------------------------------


def _xsd() -> Any:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) validates JUnit")
    return xmlschema.XMLSchema(str(XSD))


def test_junit_validates_against_jenkins_xsd(doc: dict[str, Any]) -> None:
    xml = render_junit(doc)
    _xsd().validate(xml)
    root = ET.fromstring(xml)
    assert root.get("tests") == "11" and root.get("failures") == "2" and root.get("errors") == "1"
    # the SHOULD failure does not gate without --strict: reported as skipped, with the details
    assert root.get("skipped") == "2"
    broken = root.find("testsuite[@name='broken-editor']")
    assert broken is not None
    case = broken.find("testcase[@name='editor.demo.str_replace_multiple_matches']")
    assert case is not None and case.get("classname") == "broken-editor.editor"
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "MUST"
    assert "Received:" in (failure.text or "") and "Reproducer:" in (failure.text or "")
    should = broken.find("testcase[@name='editor.demo.outside_workdir_refused']/skipped")
    assert should is not None and "SHOULD not met" in (should.get("message") or "")
    gap = root.find("testsuite[@name='protocol-coverage']/properties/property"
                    "[@name='coverage.stop_reasons']")
    assert gap is not None and gap.get("value") == "1/3 exercised; missing: end_turn, pause_turn"


def test_junit_strict_and_baseline(doc: dict[str, Any]) -> None:
    from conformance.reports import apply_baseline
    from conformance.reports.results_file import RunResults

    doc["run"]["strict"] = True
    root = ET.fromstring(render_junit(doc))
    assert root.get("failures") == "3"
    baseline = parse_baseline("editor.demo.view_line_numbers\n")
    verdict = apply_baseline(RunResults(doc).results, baseline, strict=True)
    xml = render_junit(doc, verdict)
    _xsd().validate(xml)
    root = ET.fromstring(xml)
    assert root.get("failures") == "2"
    known = root.find(".//testcase[@name='editor.demo.view_line_numbers']/skipped")
    assert known is not None and "expected failure (baseline)" in (known.get("message") or "")


def test_junit_survives_control_characters(tmp_path: Path) -> None:
    r = sample_results()[4]
    r.message = "bad \x00\x1b[31m bytes"
    r.received = "\x07bell"
    d = sample_doc(tmp_path, results=[r])
    xml = render_junit(d)
    _xsd().validate(xml)
    assert "\x00" not in xml and "\x07" not in xml


# --- bundle and progress -----------------------------------------------------------------------


def test_run_reports_writes_everything_and_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rf, "now_iso", lambda: FIXED_END)
    out = tmp_path / "run"
    reports = RunReports(out, baseline=parse_baseline(
        "broken-editor:editor.demo.view_line_numbers\n"
        "broken-editor:editor.demo.str_replace_multiple_matches\n"
        "editor.demo.undo_edit_refused\n"), progress=False)
    reports.on_run_started(RunInfo(subjects=list(SUBJECTS)))
    for r in sample_results():
        reports.on_check_started(r.check_id, r.subject)
        reports.on_check_finished(r)
    reports.on_run_finished(complete=True)
    assert {p.name for p in out.iterdir()} == {"results.json", "junit.xml", "report.md",
                                               "report.html", "baseline-verdict.json"}
    # every failure is listed, nothing is stale: the baseline holds, the run passes
    assert reports.verdict is not None and reports.verdict.ok and reports.exit_code == 0
    assert "PASS" in (out / "report.md").read_text().splitlines()[0]
    load_results(out / "results.json")
    without = write_reports(load_results(out / "results.json"), tmp_path / "again")
    assert without[1] is None


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from conformance.reports import progress

    monkeypatch.setattr(progress.shutil, "get_terminal_size",
                        lambda fallback=(0, 0): os.terminal_size((200, 20)))
    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = Progress(stream)
        p.on_run_started(RunInfo(planned=11))
        for r in sample_results():
            p.on_check_started(r.check_id, r.subject)
            p.on_check_finished(r)
        p.on_run_finished(complete=True)
    assert pipe.getvalue() == ""
    out = tty.getvalue()
    assert "[1/11] pass 1 fail 0 skip 0 error 0" in out
    assert "editor.demo.undo_edit_refused on broken-editor" in out
    assert out.endswith("done: [11/11] pass 6 fail 3 skip 1 error 1\n")


def test_result_records_carry_catalog_statement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.catalog import CATALOG, Check, Severity
    from simulator.sources import protocol

    check = Check("editor.demo.view_line_numbers", "editor", Severity.MUST,
                  frozenset({"text_editor_20250728"}), protocol("3. Text editor tool: Commands"),
                  "view prefixes every line with its 1-based number", lambda: None)
    monkeypatch.setitem(CATALOG, check.id, check)
    r = CheckResult("editor.demo.view_line_numbers", "s", "text_editor_20250728", "editor", "MUST",
                    Outcome.PASS)
    d = sample_doc(tmp_path, results=[r])
    assert d["results"][0]["statement"] == check.statement
    assert d["results"][0]["source"]["document"] == "PROTOCOL.md"
    load_results(tmp_path / "results.json")
    assert json.loads(json.dumps(d)) == d


def test_harness_error_on_info_check_does_not_block(tmp_path: Path) -> None:
    """Same rule as the runner's exit code: only gating checks (MUST; SHOULD with --strict) block."""
    r = sample_results()[2]  # the INFO check
    r.outcome, r.message = Outcome.ERROR, "check raised KeyError"
    d = sample_doc(tmp_path, results=[r])
    assert d["summary"]["blocking"] == 0 and d["summary"]["verdict"] == "pass"
    xml = render_junit(d)
    _xsd().validate(xml)
    skipped = ET.fromstring(xml).find(".//testcase/skipped")
    assert skipped is not None and "INFO harness error (does not fail the run)" in (
        skipped.get("message") or "")


def test_rerender_from_results_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.reports.__main__ import main as rerender

    sample_doc(tmp_path)
    results = tmp_path / "results.json"
    assert rerender([str(results), "--out", str(tmp_path / "r")]) == 1  # MUST failures
    assert {p.name for p in (tmp_path / "r").iterdir()} == {"junit.xml", "report.md", "report.html"}
    (tmp_path / "expected.txt").write_text("editor.demo.view_line_numbers\n"
                                           "editor.demo.str_replace_multiple_matches\n"
                                           "editor.demo.undo_edit_refused\n")
    assert rerender([str(results), "--expected-failures", str(tmp_path / "expected.txt")]) == 0
    assert "3 known failures, 0 new" in capsys.readouterr().out
    assert rerender([str(tmp_path / "missing.json")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_progress_line_fits_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from conformance.reports import progress

    monkeypatch.setattr(progress.shutil, "get_terminal_size",
                        lambda fallback=(0, 0): os.terminal_size((40, 20)))
    tty = _Tty()
    p = Progress(tty)
    p.on_check_started("editor.a.very.long.check.id.that.goes.on", "a-subject-with-a-long-name")
    drawn = tty.getvalue().split("\r\x1b[2K")[-1]
    assert len(drawn) <= 39 and drawn.endswith("…")


def test_markdown_keeps_subject_text_inert(tmp_path: Path) -> None:
    r = sample_results()[4]
    r.message = "bad </details><script>x</script>"
    r.reproducer = [{"command": "create", "path": "/w/a", "file_text": "```\n</details>"}]
    text = render_markdown(sample_doc(tmp_path, results=[r]))
    assert "bad &lt;/details&gt;&lt;script&gt;" in text
    assert text.count("</details>") == 2  # the collapsible's own, and one inside a ```` fence
    assert "````json" in text


def test_progress_off_a_terminal_is_a_plain_counter_and_lines_on_request() -> None:
    """Issue 26: long runs are not silent. Off a terminal, a count line every ``every`` seconds
    (none for a run shorter than that) and the final count; ``lines``, one per finished check;
    ``off`` nothing."""
    outputs = {}
    for mode, every in (("counter", 0.0), ("counter", 3600.0), ("lines", 5.0), ("off", 0.0)):
        pipe = io.StringIO()
        p = Progress(pipe, mode=mode, every=every)  # type: ignore[arg-type]
        p.on_run_started(RunInfo(planned=11))
        for r in sample_results():
            p.on_check_started(r.check_id, r.subject)
            p.on_check_finished(r)
        p.on_run_finished(complete=True)
        outputs[(mode, every)] = pipe.getvalue()
    counter = outputs[("counter", 0.0)].splitlines()
    assert counter[0].startswith("tooluse run: [1/11] pass 1 fail 0 skip 0 error 0, ")
    assert counter[-1] == "done: [11/11] pass 6 fail 3 skip 1 error 1"
    assert "\r" not in outputs[("counter", 0.0)] and "\x1b" not in outputs[("counter", 0.0)]
    assert outputs[("counter", 3600.0)] == ""  # a short run: nothing but its summary
    lines = outputs[("lines", 5.0)].splitlines()
    assert len(lines) == 11 and lines[0].startswith("[1/11] PASS ")
    assert any(x.split()[1:2] == ["FAIL"] and "  [" in x for x in lines), lines
    assert outputs[("off", 0.0)] == ""


def test_planted_setup_comes_before_the_inputs_in_every_format(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bash failure whose check made a directory behind the subject's back: every format
    prints "before input 1, make the directory ..." before the inputs (where whoever replays
    them needs it), and whether the reproducer was verified after them."""
    import html as html_lib
    from types import SimpleNamespace

    from test_reports_sample import _r

    from conformance.catalog import CATALOG
    from conformance.pytest.items import describe
    from conformance.reports import render_html
    from conformance.reports.summary import print_summary
    from conformance.results import VERIFIED

    check = "bash.session.cwd_persists"
    r = _r(check, "reference-bash", Outcome.FAIL, message="the cd was forgotten",
           reproducer=[{"command": "cd $TOOLUSE_WORKDIR/persist-cwd"}, {"command": "pwd"}],
           setup=[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/persist-cwd",
                   "directory": True}],
           reproduced=VERIFIED)
    doc = sample_doc(tmp_path, results=[r], monkeypatch=monkeypatch)
    out = io.StringIO()
    print_summary(SimpleNamespace(
        results=[r], blocking=lambda: [r], ok=False, strict=False, duration=1.0,
        plan=SimpleNamespace(info=RunInfo(subjects=SUBJECTS[:1]), subjects=SUBJECTS[:1],
                             settings=Run()),
        counts=lambda: {"pass": 0, "fail": 1, "skip": 0, "error": 0}), out)
    junit = " ".join(f.text or "" for f in ET.fromstring(render_junit(doc)).iter("failure"))
    texts = {"terminal": out.getvalue(), "markdown": render_markdown(doc),
             "html": html_lib.unescape(render_html(doc)), "junit": junit,
             "pytest": describe(CATALOG[check], r)}
    for name, text in texts.items():
        setup = text.find("before input 1, make the directory $TOOLUSE_WORKDIR/persist-cwd")
        first_input = text.find("cd $TOOLUSE_WORKDIR/persist-cwd")
        verified = text.find("Reproducer verified")
        assert 0 <= setup < first_input < verified, (name, setup, first_input, verified, text)
        assert text.count("make the directory") == 1, name
