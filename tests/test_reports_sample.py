"""A small fixed run (synthetic results) the report tests share, and tests of results.json itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.reports import ResultsFileError, ResultsWriter, load_results, normalise
from conformance.reports import results_file as rf
from conformance.results import CheckResult, Outcome, RunInfo, SubjectInfo

SUBJECTS = [
    SubjectInfo("reference-bash", "bash", "bash_20250124", "conformance.reference:bash"),
    SubjectInfo("reference-editor", "editor", "text_editor_20250728", "conformance.reference:editor"),
    SubjectInfo("broken-editor", "editor", "text_editor_20250728", "tests.broken:editor"),
]


def _r(check: str, subject: str, outcome: Outcome, severity: str = "MUST", **kw: Any) -> CheckResult:
    sub = next(s for s in SUBJECTS if s.name == subject)
    return CheckResult(check_id=check, subject=subject, tool_type=sub.tool_type, family=sub.family,
                       severity=severity, outcome=outcome, duration=kw.pop("duration", 0.01), **kw)


def sample_results() -> list[CheckResult]:
    P, F, S, E = Outcome.PASS, Outcome.FAIL, Outcome.SKIP, Outcome.ERROR
    return [
        _r("bash.demo.session_persists", "reference-bash", P),
        _r("bash.demo.output_truncated", "reference-bash", P, "SHOULD"),
        _r("bash.demo.restart_observed", "reference-bash", S, "INFO", message="no restart seen"),
        _r("editor.demo.view_line_numbers", "reference-editor", P,
           observed="view: a file ending in \\n shows no empty last line"),
        _r("editor.demo.view_line_numbers", "broken-editor", F,
           message="view output has no line numbers",
           received="hello\nworld", documented="1\thello\n2\tworld",
           reproducer=[{"command": "create", "path": "/w/a.txt", "file_text": "hello\nworld"},
                       {"command": "view", "path": "/w/a.txt"}]),
        _r("editor.demo.str_replace_multiple_matches", "reference-editor", P),
        _r("editor.demo.str_replace_multiple_matches", "broken-editor", F,
           message="several matches replaced instead of refused",
           received={"is_error": False, "file": "b b"}, documented={"is_error": True, "file": "a a"},
           reproducer=[{"command": "create", "path": "/w/x", "file_text": "a a"},
                       {"command": "str_replace", "path": "/w/x", "old_str": "a", "new_str": "b"}]),
        _r("editor.demo.outside_workdir_refused", "reference-editor", P, "SHOULD"),
        _r("editor.demo.outside_workdir_refused", "broken-editor", F, "SHOULD",
           message="/etc/passwd was readable", received="root:x:0:0", documented="an error result",
           reproducer=[{"command": "view", "path": "/etc/passwd"}]),
        _r("editor.demo.undo_edit_refused", "reference-editor", P),
        _r("editor.demo.undo_edit_refused", "broken-editor", E,
           message="harness: subject process exited before answering (exit code 139)"),
    ]


FIXED_START = "2026-01-02T03:04:05Z"
FIXED_END = "2026-01-02T03:04:09Z"


def sample_doc(tmp_path: Path, *, complete: bool = True, results: list[CheckResult] | None = None,
               monkeypatch: pytest.MonkeyPatch | None = None) -> dict[str, Any]:
    """Run the fixed results through a ResultsWriter and return the written document."""
    mp = monkeypatch or pytest.MonkeyPatch()
    mp.setattr(rf, "now_iso", lambda: FIXED_END)
    w = ResultsWriter(tmp_path / "results.json")
    w.on_run_started(RunInfo(subjects=list(SUBJECTS), seed=1234, started_at=FIXED_START,
                             planned=11))
    for r in results if results is not None else sample_results():
        w.on_check_finished(r)
    if complete:
        w.on_run_finished(complete=True)
    if monkeypatch is None:
        mp.undo()
    return json.loads((tmp_path / "results.json").read_text())


# --- results.json ------------------------------------------------------------------------------


def test_sample_run_validates_and_round_trips(tmp_path: Path) -> None:
    doc = sample_doc(tmp_path)
    loaded = load_results(tmp_path / "results.json")
    assert loaded.complete and loaded.doc["run"]["finished_at"] == FIXED_END
    assert [r.to_json() for r in loaded.results] == [r.to_json() for r in sample_results()]
    s = doc["summary"]
    assert (s["total"], s["pass"], s["fail"], s["skip"], s["error"]) == (11, 6, 3, 1, 1)
    # two MUST failures + one harness error; the SHOULD failure does not block without --strict
    assert s["blocking"] == 3 and s["verdict"] == "fail"
    assert doc["suite"]["anthropic_sdk_version"]  # the SDK is installed in the dev venv


def test_file_is_valid_after_every_result(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    w = ResultsWriter(path)
    w.on_run_started(RunInfo(subjects=list(SUBJECTS)))
    assert load_results(path).doc["results"] == []
    for i, r in enumerate(sample_results(), 1):
        w.on_check_finished(r)
        loaded = load_results(path)
        assert len(loaded.doc["results"]) == i and not loaded.complete
        assert loaded.doc["summary"]["verdict"] in ("incomplete", "fail")
    assert not list(tmp_path.glob(".results.json.*")), "temp files left behind"


def test_interrupted_run_leaves_valid_incomplete_file(tmp_path: Path) -> None:
    """Simulate Ctrl-C in the middle: the runner reports complete=False; a hard kill reports nothing."""
    path = tmp_path / "results.json"
    w = ResultsWriter(path)
    w.on_run_started(RunInfo(subjects=list(SUBJECTS)))
    results = sample_results()
    try:
        for i, r in enumerate(results):
            if i == 4:
                raise KeyboardInterrupt
            w.on_check_finished(r)
    except KeyboardInterrupt:
        hard_killed = json.loads(path.read_text())  # the state a SIGKILL would leave
        w.on_run_finished(complete=False)
    load_results(path)  # valid
    doc = json.loads(path.read_text())
    assert doc["run"]["complete"] is False and doc["run"]["interrupted"] is True
    assert doc["summary"]["verdict"] == "incomplete" and len(doc["results"]) == 4
    assert hard_killed["run"]["complete"] is False and hard_killed["run"]["finished_at"] is None
    rf.validate_document(hard_killed)


def test_write_failure_keeps_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    w = ResultsWriter(path)
    w.on_run_started(RunInfo(subjects=list(SUBJECTS)))
    w.on_check_finished(sample_results()[0])
    before = path.read_text()

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(rf.os, "replace", boom)
    with pytest.raises(OSError):
        w.on_check_finished(sample_results()[1])
    assert path.read_text() == before
    assert not list(tmp_path.glob(".results.json.*"))


@pytest.mark.parametrize(("mutate", "pointer", "words"), [
    (lambda d: d["results"][0].update(outcome="maybe"), "/results/0/outcome", "'maybe' is not one of"),
    (lambda d: d.pop("run"), "/", "'run' is a required property"),
    (lambda d: d["results"][1].update(severity="MAY"), "/results/1/severity", "MAY"),
    (lambda d: d.update(format_version=2), "/format_version", "newer tooluse"),
])
def test_loader_names_pointer_and_problem(tmp_path: Path, mutate: Any, pointer: str, words: str) -> None:
    doc = sample_doc(tmp_path)
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError) as e:
        load_results(bad)
    assert e.value.pointer == pointer and words in e.value.message
    assert str(bad) in str(e.value)


def test_loader_rejects_non_json_and_missing(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(ResultsFileError, match="broken JSON at line 1"):
        load_results(tmp_path / "x.json")
    with pytest.raises(ResultsFileError, match="file not found"):
        load_results(tmp_path / "missing.json")


def test_unserialisable_received_values_are_kept_readable(tmp_path: Path) -> None:
    r = _r("editor.demo.view_line_numbers", "broken-editor", Outcome.FAIL,
           received=b"\xff\xfe", documented={"bytes": b"ok"}, reproducer=[{"path": Path("/w")}])
    doc = sample_doc(tmp_path, results=[r])
    rec = doc["results"][0]
    assert rec["received"] == {"bytes_hex": "fffe"} and rec["documented"] == {"bytes": "ok"}
    assert rec["reproducer"] == [{"path": "PosixPath('/w')"}]


def test_normalise_removes_volatile_fields(tmp_path: Path) -> None:
    a = sample_doc(tmp_path)
    b = json.loads(json.dumps(a))
    b["run"]["started_at"] = "2030-01-01T00:00:00Z"
    b["suite"]["anthropic_sdk_version"] = "9.9.9"
    b["results"] = list(reversed(b["results"]))
    for r in b["results"]:
        r["duration"] = 3.5
    assert normalise(a) == normalise(b)
    rf.validate_document(normalise(a))  # a normalised document is still a valid results file
    c = json.loads(json.dumps(a))
    c["results"][0]["outcome"] = "fail"
    assert normalise(a) != normalise(c)


def test_coverage_from_corpus_and_results(tmp_path: Path) -> None:
    from conformance.reports.coverage import coverage_for
    from simulator import registry

    cassette = {"version": 1, "id": "t/one", "title": "t", "source": {"document": "PROTOCOL.md",
                "section": "x"}, "exchanges": [
        {"request": {"method": "POST", "path": "/v1/messages", "body": {
            "model": "m", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "bash_20250124", "name": "bash"}]}},
         "response": {"status": 200, "body": {"type": "message", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}],
             "stop_reason": "tool_use"}}},
        {"request": {"method": "POST", "path": "/v1/messages", "body": {}},
         "expect_rule": "messages.roles.alternate",
         "response": {"status": 400, "body": {"type": "error", "error": {
             "type": "invalid_request_error", "message": "x"}}}}]}
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "one.json").write_text(json.dumps(cassette))
    doc = sample_doc(tmp_path)
    cov = coverage_for(doc, corpus=corpus)
    assert cov["tool_versions"]["exercised"] == ["bash_20250124", "text_editor_20250728"]
    assert set(cov["tool_versions"]["missing"]) == set(registry.TOOLS) - {
        "bash_20250124", "text_editor_20250728"}
    assert cov["stop_reasons"]["exercised"] == ["tool_use"]
    assert "end_turn" in cov["stop_reasons"]["missing"]
    assert "tool_use" in cov["block_types"]["exercised"]
    if cov["rules"]["known"] is not None:
        assert cov["rules"]["exercised"] == ["messages.roles.alternate"]
        assert "request.schema" in cov["rules"]["missing"]
    # the demo checks are not in the catalog: they show up as extra, not as exercised
    assert "editor.demo.view_line_numbers" in cov["checks"]["extra"]


def test_coverage_counts_cassettes_the_loop_checks_replayed(tmp_path: Path) -> None:
    scenarios = pytest.importorskip("conformance.loops.scenarios",
                                    reason="the agent-loop scenarios are not there yet")
    from conformance.reports.coverage import coverage_for
    from conformance.reports.traffic import collect

    scenario = scenarios.SCENARIOS[0]
    r = _r("editor.demo.view_line_numbers", "reference-editor", Outcome.PASS)
    r.check_id, r.family = scenario.id, "loop"
    doc = sample_doc(tmp_path, results=[r])
    expected = collect([scenario.load()])
    cov = coverage_for(doc)
    assert set(expected.stop_reasons) <= set(cov["stop_reasons"]["exercised"]) | set(
        cov["stop_reasons"]["extra"])
    assert expected.stop_reasons, "the scenario's cassette has responses"
    skipped = dict(doc["results"][0], outcome="skip")
    assert coverage_for(dict(doc, results=[skipped]))["stop_reasons"]["exercised"] == []


def test_coverage_counts_the_corpus_the_loop_corpus_check_replayed(tmp_path: Path) -> None:
    corpus = pytest.importorskip("conformance.loops.corpus", reason="the loop corpus check is absent")
    from conformance.reports.coverage import CORPUS_CHECK, coverage_for
    from conformance.reports.traffic import collect

    r = _r("editor.demo.view_line_numbers", "reference-editor", Outcome.PASS)
    r.check_id, r.family = CORPUS_CHECK, "loop"
    doc = sample_doc(tmp_path, results=[r])
    expected = collect(corpus.replayed_cassettes())
    cov = coverage_for(doc)
    seen = set(cov["stop_reasons"]["exercised"]) | set(cov["stop_reasons"]["extra"])
    assert set(expected.stop_reasons) <= seen and len(expected.stop_reasons) >= 3
