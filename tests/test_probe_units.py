"""The probe's parts on their own: drift findings, retry waits, scenario reading, tool answers,
model-mode matching."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.probe.drift import judge_response
from conformance.probe.driver import MAX_BACKOFF, _retry_wait, call_summary
from conformance.probe.scenarios import from_cassette, load_scenarios
from conformance.probe.tools import ToolDesk
from simulator.cassette import load_cassette
from simulator.model_mode import ModelModeHandler, model_mode_cassettes
from simulator.routes import load_cassettes

DATA = Path(__file__).parent / "data" / "probe"


def _message() -> dict[str, Any]:
    return json.loads((DATA / "model_a/probe_demo/bash_20250124/list_files.json").read_text()
                      )["exchanges"][0]["response"]


def test_a_known_response_has_no_drift() -> None:
    assert judge_response("s", 0, _message()) == []


def test_drift_kinds_and_pointers() -> None:
    r = copy.deepcopy(_message())
    body = r["body"]
    body["content"][0]["caller_hint"] = "x"
    body["stop_reason"] = "thinking_budget"
    body["content"].append({"type": "hologram"})
    body["content"].append({"type": "tool_use", "id": "t", "name": "n", "input": {},
                            "caller": {"type": "code_execution_20991231", "tool_id": "x"}})
    found = {(f.kind, f.pointer) for f in judge_response("demo", 3, r)}
    base = "/exchanges/3/response/body"
    assert ("new_field", f"{base}/content/0/caller_hint") in found
    assert ("new_stop_reason", f"{base}/stop_reason") in found
    assert ("new_block_type", f"{base}/content/1/type") in found
    assert ("new_tool_version", f"{base}/content/2/caller/type") in found
    assert all(f.scenario == "demo" for f in judge_response("demo", 3, r))


def test_drift_new_error_code_and_stream_events() -> None:
    error = {"status": 400, "headers": {}, "body": {
        "type": "error", "error": {"type": "quota_exceeded_error", "message": "x"},
        "request_id": "req_1"}}
    [f] = judge_response("s", 0, error)
    assert (f.kind, f.pointer) == ("new_error_code", "/exchanges/0/response/body/error/type")
    events = {"status": 200, "headers": {}, "events": [
        {"event": "content_block_start", "data": {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": "",
                                                                     "zz": 1}}}]}
    kinds = {(f.kind, f.pointer) for f in judge_response("s", 1, events)}
    assert ("new_field", "/exchanges/1/response/events/0/data/content_block/zz") in kinds


@pytest.mark.parametrize(("headers", "attempt", "expected"), [
    ({"retry-after": "3"}, 0, 3.0),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0, 0.25),
    ({"retry-after": "100000"}, 0, MAX_BACKOFF),
])
def test_retry_after_is_honoured(headers: dict[str, str], attempt: int, expected: float) -> None:
    error = SimpleNamespace(response=SimpleNamespace(headers=headers))
    assert _retry_wait(error, attempt, 1.0) == expected


def test_backoff_grows_without_retry_after() -> None:
    error = SimpleNamespace(response=SimpleNamespace(headers={}))
    waits = [_retry_wait(error, n, 1.0) for n in range(4)]
    assert all(0.5 * 2 ** n <= w <= 2 ** n for n, w in enumerate(waits))


def test_scenario_reads_opening_seeds_and_answers() -> None:
    c = load_cassette(DATA / "model_b/probe_demo/text_editor_20250728/fix_typo.json")
    s = from_cassette(c)
    assert s is not None
    assert s.files == {"readme.txt": "teh cat sat\n"}  # the view's text, line numbers dropped
    assert "model" not in s.params and s.params["max_tokens"] == 1024
    assert s.messages == [{"role": "user", "content": "Fix the typo 'teh' in readme.txt."}]
    w = from_cassette(load_cassette(DATA / "model_a/probe_demo/custom/weather.json"))
    assert w is not None and [r["content"] for r in w.answers["get_weather"]] == ["21°C, sunny"]


def test_default_scenarios_are_the_drivable_corpus() -> None:
    from conformance.loops.corpus import plan

    scenarios, skipped = load_scenarios()
    p = plan()
    assert len(scenarios) == len(p.runs) and len(skipped) == len(p.excluded)


def test_tool_desk_answers(tmp_path: Path) -> None:
    c = load_cassette(DATA / "model_a/probe_demo/custom/weather.json")
    s = from_cassette(c)
    assert s is not None
    desk = ToolDesk(s, root=tmp_path)
    try:
        recorded = desk.answer({"id": "toolu_x", "name": "get_weather", "input": {"city": "Oslo"}})
        assert recorded == {"type": "tool_result", "tool_use_id": "toolu_x",
                            "content": "21°C, sunny"}
        missing = desk.answer({"id": "toolu_y", "name": "get_time", "input": {}})
        assert missing["is_error"] is True
        assert "no recorded answer for tool 'get_time'" in missing["content"]
    finally:
        desk.close()
    assert not desk.workdir.exists()


def test_tool_desk_editor_maps_absolute_paths(tmp_path: Path) -> None:
    c = load_cassette(DATA / "model_a/probe_demo/text_editor_20250728/insert_line.json")
    s = from_cassette(c)
    assert s is not None
    desk = ToolDesk(s, root=tmp_path)
    try:
        out = desk.answer({"id": "t1", "name": "str_replace_based_edit_tool", "input": {
            "command": "create", "path": "/repo/app.py", "file_text": "print(1)\n"}})
        assert not out.get("is_error"), out
        assert (desk.workdir / "repo/app.py").read_text() == "print(1)\n"
        assert str(desk.workdir) not in out["content"]
    finally:
        desk.close()


def test_call_summary_bash_keeps_the_program() -> None:
    call = {"type": "tool_use", "name": "bash", "input": {"command": "  ls -la /tmp"}}
    assert call_summary(call, "bash_20250124")["command"] == "ls"


def test_model_mode_drops_expect_rule_exchanges() -> None:
    cassettes = load_cassettes("bash/bash_20250124/reject_unanswered_tool_use.json")
    kept = model_mode_cassettes(cassettes)
    assert all(not ex.expect_rule for c in kept for ex in c.exchanges)
    assert [ex.index for ex in kept[0].exchanges] == list(range(len(kept[0].exchanges)))


def test_model_mode_unknown_scenario_header() -> None:
    from simulator.http import SimRequest

    handler = ModelModeHandler(load_cassettes(DATA / "model_a"))
    resp = handler(SimRequest("POST", "/v1/messages", {"x-tooluse-scenario": "nope"}, {}, b"{}"))
    assert resp.status == 400 and "no cassette 'nope'" in resp.body["error"]["message"]


def test_bash_sees_no_credentials_and_a_home_of_its_own(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-leak-0123456789")
    s = from_cassette(load_cassette(DATA / "model_a/probe_demo/bash_20250124/list_files.json"))
    assert s is not None
    desk = ToolDesk(s, root=tmp_path)
    try:
        out = desk.answer({"id": "t", "name": "bash", "input": {
            "command": "echo key=${ANTHROPIC_API_KEY:-none} home=$HOME"}})
        assert "key=none" in out["content"]
        assert f"home={desk.workdir}/.home" in out["content"]
    finally:
        desk.close()


def test_model_mode_starts_a_scenario_over_on_its_opening() -> None:
    """A cassette holding two conversations: after the first, the first's opening again (a
    resumed probe) is answered from the start, not refused for not being the second."""
    from simulator.headers import replay_headers
    from simulator.http import SimRequest

    name = "code_execution/code_execution_20260120/container_reuse.json"
    [cassette] = load_cassettes(name)
    handler = ModelModeHandler([cassette])
    opening = cassette.exchanges[0].request
    request = SimRequest("POST", "/v1/messages", {**replay_headers(opening["headers"]),
                                                  "x-tooluse-scenario": cassette.id},
                         {}, json.dumps(opening["body"]).encode())
    assert [handler(request).status for _ in range(3)] == [200, 200, 200]


def test_rule_findings_for_requests_the_api_accepted() -> None:
    """A request the simulator's rules refuse, answered 200 by the API: a ``rule`` finding
    pointing at that request; the same request answered 400 is no finding."""
    from conformance.probe.drift import judge_requests

    [c] = load_cassettes("bash/bash_20250124/reject_unknown_tool_use_id.json")
    broken = next(ex for ex in c.exchanges if ex.expect_rule)
    accepted = {"request": broken.request, "response": c.exchanges[0].response}
    doc = {**c.raw, "exchanges": [accepted]}
    found = judge_requests("demo", doc)
    assert {(f.kind, f.pointer, f.scenario) for f in found} == {
        ("rule", "/exchanges/0/request/body", "demo")}
    assert broken.expect_rule in {f.rule for f in found}
    refused = {"request": broken.request, "response": {"status": 400, "headers": {}, "body": {
        "type": "error", "error": {"type": "invalid_request_error", "message": "x"}}}}
    assert judge_requests("demo", {**c.raw, "exchanges": [refused]}) == []


def test_scenario_files_stay_inside_the_output(tmp_path: Path) -> None:
    from conformance.probe.run import scenario_file

    assert scenario_file(tmp_path, "../../etc/passwd") == tmp_path / "scenarios/etc/passwd.json"
    assert scenario_file(tmp_path, "/abs/x", "cassettes") == tmp_path / "cassettes/abs/x.json"


def test_progress_shows_tokens_and_cost_so_far() -> None:
    from conformance.probe.driver import Budget
    from conformance.probe.progress import tokens_line

    b = Budget(10_000)
    b.spend({"input_tokens": 1_000_000, "output_tokens": 100_000, "cache_read_input_tokens": 0})
    line = tokens_line(b, (3.0, 15.0))
    assert "tokens 1,000,000 in, 100,000 out" in line
    assert "$4.5000 so far" in line and "(1,100,000/10,000 of the budget)" in line
    assert b.exhausted
    assert "cost: give --price" in tokens_line(Budget(None), None)


def test_progress_lines_follow_tooluse_runs_lines(tmp_path: Path) -> None:
    """Issue 26, point 8: one plain line per scenario ended, ``[n/N]`` first as in ``tooluse run
    --progress lines``, the same on a terminal as in a log (nothing rewritten in place, no
    escape codes), every line ended by a newline, counts in words that agree with them."""
    import io

    from conformance.probe.drift import Finding
    from conformance.probe.driver import Budget, Outcome
    from conformance.probe.progress import ProgressLine

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    one = Outcome("probe_demo/messages/greeting", "m", status="completed", turns=1, requests=1,
                  wall_seconds=0.42)
    two = Outcome("probe_demo/custom/weather", "m", status="max_turns", turns=2, requests=3,
                  retried=[{"status": 529}], wall_seconds=12.0,
                  drift=[Finding("probe_demo/custom/weather", "new_field", "/x", "a field")])
    outputs = []
    for stream in (io.StringIO(), Terminal()):
        line = ProgressLine(None, stream)
        budget = Budget(None)
        line(1, 2, one, budget)
        line(2, 2, two, budget)
        line.summary([one, two], budget, 0, tmp_path)
        outputs.append(stream.getvalue())
    log, terminal = outputs
    assert log == terminal and log.endswith("\n") and "\r" not in log and "\x1b" not in log
    first, second, summary = log.splitlines()
    assert first.startswith("[1/2] completed  probe_demo/messages/greeting  1 turn, 1 request  "
                            "0.4s | tokens 0 in")
    assert second.startswith("[2/2] max_turns  probe_demo/custom/weather  2 turns, 3 requests, "
                             "1 drift, 1 retried  12.0s | tokens")
    assert summary.startswith("tooluse probe: 1 completed, 1 max_turns; 1 drift finding(s)")
    quiet = io.StringIO()
    ProgressLine(None, quiet, quiet=True)(1, 2, one, Budget(None))
    assert quiet.getvalue() == ""


def test_bash_runs_in_the_sandbox_where_it_works(tmp_path: Path) -> None:
    from conformance.subjects import sandbox

    st = sandbox.status("auto")
    if not st.active:
        pytest.skip(f"no sandbox here: {st.reason}")
    s = from_cassette(load_cassette(DATA / "model_a/probe_demo/bash_20250124/list_files.json"))
    assert s is not None
    outside = tmp_path / "outside.txt"
    (tmp_path / "work").mkdir()
    desk = ToolDesk(s, root=tmp_path / "work")
    try:
        inside = desk.answer({"id": "a", "name": "bash", "input": {"command": "echo hi > in.txt"}})
        assert not inside.get("is_error"), inside
        refused = desk.answer({"id": "b", "name": "bash", "input": {
            "command": f"echo hi > {outside}"}})
        assert refused.get("is_error") and "Read-only file system" in refused["content"]
        assert (desk.workdir / "in.txt").read_text() == "hi\n"
    finally:
        desk.close()
    assert not outside.exists()


def test_the_packaged_demo_writes_the_committed_sets(tmp_path: Path) -> None:
    """Issue 26, point 6: docs/model-upgrade.md's walk-through runs from a wheel on the sets
    ``python -m conformance.probe.demo DIR`` writes; they are tests/data/probe's, byte for byte."""
    from conformance.probe.demo import main

    committed = Path(__file__).resolve().parent / "data" / "probe"
    assert main([str(tmp_path / "probe-demo")]) == 0
    written = sorted(p.relative_to(tmp_path / "probe-demo") for p in
                     (tmp_path / "probe-demo").rglob("*.json"))
    assert written == sorted(p.relative_to(committed) for p in committed.rglob("*.json"))
    for rel in written:
        assert (tmp_path / "probe-demo" / rel).read_bytes() == (committed / rel).read_bytes()
