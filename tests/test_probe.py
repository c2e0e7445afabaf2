"""``tooluse probe`` and ``tooluse diff`` on probes, offline: a model-mode ``tooluse serve`` (in
this process, on loopback) stands for the live API, over tests/data/probe's two cassette sets
standing for two models that differ on purpose."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.probe.compare import diff_probes
from conformance.probe.driver import Budget, Limits, Outcome
from conformance.probe.run import ProbeConfig, ProbeRun
from conformance.probe.scenarios import load_scenarios
from simulator import model_mode
from simulator.http import SimRequest, SimResponse
from simulator.routes import load_cassettes
from simulator.server import start_server

DATA = Path(__file__).parent / "data" / "probe"
SCENARIOS = str(DATA / "model_a")
MODEL_A, MODEL_B = "claude-sonnet-4-6", "claude-opus-4-7"
#: What the two sets differ in, on purpose (tests/data/probe/generate.py), and nothing else.
EXPECTED = {
    ("probe_demo/text_editor_20250728/insert_line", "tool_calls"),
    ("probe_demo/text_editor_20250728/fix_typo", "tool_calls"),
    ("probe_demo/text_editor_20250728/fix_typo", "turns"),
    ("probe_demo/text_editor_20250728/fix_typo", "tokens"),
    ("probe_demo/bash_20250124/list_files", "drift"),
    ("probe_demo/custom/weather", "retried"),
}


class Counting:
    """A handler that counts the Messages requests it passes on, by scenario header."""

    def __init__(self, handler: Any) -> None:
        self.handler, self.seen = handler, list[str]()
        self.on_request: Any = None

    def __call__(self, request: SimRequest) -> SimResponse:
        if request.path.startswith("/v1/messages"):
            self.seen.append(request.headers.get(model_mode.SCENARIO_HEADER, ""))
        response = self.handler(request)
        if self.on_request is not None:
            self.on_request(self.seen)
        return response


def serve(side: str) -> tuple[str, Any, Counting]:
    app = Counting(model_mode.build(load_cassettes(DATA / side)))
    url, stop = start_server(app)
    return url, stop, app


@pytest.fixture
def server_a() -> Iterator[tuple[str, Counting]]:
    url, stop, app = serve("model_a")
    yield url, app
    stop()


@pytest.fixture
def server_b() -> Iterator[tuple[str, Counting]]:
    url, stop, app = serve("model_b")
    yield url, app
    stop()


def probe(url: str, model: str, out: Path, *extra: str) -> int:
    return main(["probe", "--model", model, "--out", str(out), "--base-url", url, "--quiet",
                 "--backoff", "0", *extra, SCENARIOS])


def scenario_doc(out: Path, sid: str) -> dict[str, Any]:
    return json.loads((out / "scenarios" / f"{sid}.json").read_text())


@pytest.fixture
def two_probes(tmp_path: Path, server_a: tuple[str, Counting],
               server_b: tuple[str, Counting]) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    assert probe(server_a[0], MODEL_A, a) == 0
    assert probe(server_b[0], MODEL_B, b) == 0
    return a, b


def test_diff_reports_exactly_the_planted_differences(two_probes: tuple[Path, Path]) -> None:
    a, b = two_probes
    d = diff_probes(a, b)
    found = {(r["scenario"], c["aspect"]) for r in d["scenarios"] for c in r["changes"]}
    assert found == EXPECTED
    by_id = {r["scenario"]: r for r in d["scenarios"]}
    assert by_id["probe_demo/messages/greeting"]["verdict"] == "same"
    assert by_id["probe_demo/bash_20250124/count_lines"]["verdict"] == "same"
    insert = by_id["probe_demo/text_editor_20250728/insert_line"]["changes"][0]
    assert "appeared: insert_text" in insert["detail"] and "vanished: new_str" in insert["detail"]
    typo = {c["aspect"]: c for c in by_id["probe_demo/text_editor_20250728/fix_typo"]["changes"]}
    assert (typo["turns"]["a"], typo["turns"]["b"]) == (2, 3)
    assert typo["tool_calls"]["b"][0].startswith("str_replace_based_edit_tool view")
    assert by_id["probe_demo/custom/weather"]["changes"][0]["b"] == ["529 overloaded_error"]
    # the new block field is the one regression, listed first
    assert d["counts"] == {"compared": 6, "regression": 1, "changed": 3, "improvement": 0,
                           "same": 2}
    assert d["scenarios"][0]["scenario"] == "probe_demo/bash_20250124/list_files"
    assert [f["pointer"] for f in d["drift_b"]] == [
        "/exchanges/1/response/body/content/0/confidence_note"]
    assert d["drift_b"][0]["scenario"] == "probe_demo/bash_20250124/list_files"


def test_diff_cli_markdown_json_html(two_probes: tuple[Path, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_probes
    assert main(["diff", str(a), str(b)]) == 0
    md = capsys.readouterr().out
    assert md.index("### Regressions") < md.index("### Other changes")
    assert "`probe_demo/bash_20250124/list_files` | drift" in md
    assert main(["diff", str(a), str(b), "--fail-on-regression"]) == 1
    capsys.readouterr()
    assert main(["diff", str(a), str(b), "--format", "json", "--out", str(tmp_path / "d.json")]) == 0
    assert json.loads((tmp_path / "d.json").read_text())["kind"] == "probe"
    assert main(["diff", str(a), str(b), "--format", "html", "--out", str(tmp_path / "d.html")]) == 0
    html = (tmp_path / "d.html").read_text()
    assert html.index("Regressions (1)") < html.index("Other changes (5)")
    assert "confidence_note" in html and "{{BODY}}" not in html
    # a probe against itself: no differences
    assert main(["diff", str(a), str(a)]) == 0
    assert "No differences between the probes." in capsys.readouterr().out


def test_probe_outputs_hold_what_each_scenario_did(two_probes: tuple[Path, Path]) -> None:
    a, b = two_probes
    index = json.loads((b / "probe.json").read_text())
    assert index["model"] == MODEL_B and index["complete"] is True
    assert index["counts"] == {"completed": 6}
    weather = scenario_doc(b, "probe_demo/custom/weather")
    assert weather["requests"] == 3 and weather["turns"] == 2
    assert weather["retried"][0]["status"] == 529
    cassette = json.loads((b / "cassettes/probe_demo/custom/weather.json").read_text())
    assert [e["response"]["status"] for e in cassette["exchanges"]] == [529, 200, 200]
    # the custom tool was answered with the recorded result
    last = cassette["exchanges"][-1]["request"]["body"]["messages"][-1]["content"][0]
    assert last["content"] == "21°C, sunny"
    # the reference editor really ran in the seeded working directory
    typo = json.loads((b / "cassettes/probe_demo/text_editor_20250728/fix_typo.json").read_text())
    view_result = typo["exchanges"][1]["request"]["body"]["messages"][-1]["content"][0]
    assert "teh cat" in view_result["content"] and not view_result.get("is_error")
    streamed = json.loads((a / "cassettes/probe_demo/bash_20250124/count_lines.json").read_text())
    assert streamed["streamed"] and "events" in streamed["exchanges"][0]["response"]
    # every request carried the probed model
    assert {e["request"]["body"]["model"] for e in typo["exchanges"]} == {MODEL_B}


def test_credentials_never_reach_disk(tmp_path: Path, server_a: tuple[str, Counting],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-api03-probe-test-credential-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    out = tmp_path / "a"
    assert probe(server_a[0], MODEL_A, out) == 0
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) == 13  # probe.json, 6 scenario files, 6 cassettes
    for p in written:
        text = p.read_text()
        assert secret not in text and "x-api-key" not in text.lower(), p


def test_interrupt_then_resume_skips_completed(tmp_path: Path,
                                               server_a: tuple[str, Counting]) -> None:
    url, app = server_a
    scenarios, _ = load_scenarios([SCENARIOS])
    out = tmp_path / "a"
    stop = threading.Event()

    def interrupt_after_two(done: int, total: int, outcome: Outcome, budget: Budget) -> None:
        if done == 2:
            stop.set()  # what Ctrl-C does: the scenarios running stop before their next request

    config = ProbeConfig(model=MODEL_A, out=out, base_url=url, concurrency=1,
                         scenario_header=True, limits=Limits(backoff=0))
    first = ProbeRun(scenarios, config, progress=interrupt_after_two, stop=stop).run()
    assert [o.status for o in first] == ["completed", "completed"]
    index = json.loads((out / "probe.json").read_text())
    assert index["complete"] is False and index["counts"] == {"completed": 2, "pending": 4}
    done = {o.scenario for o in first}
    app.seen.clear()
    again = ProbeRun(scenarios, config)
    assert {s.id for s in again.todo} == {s.id for s in scenarios} - done
    second = again.run()
    assert {o.scenario for o in second} == {s.id for s in scenarios} - done
    assert not done & set(app.seen), "a completed scenario was driven again"
    index = json.loads((out / "probe.json").read_text())
    assert index["complete"] is True and len(index["runs"]) == 2
    assert index["runs"][1]["skipped_completed"] == 2


def test_interrupted_mid_conversation_is_driven_again(tmp_path: Path,
                                                      server_b: tuple[str, Counting]) -> None:
    """A scenario stopped between two turns is not final: the resumed run drives it from its
    opening again, and the model-mode server starts that conversation over."""
    url, app = server_b
    sid = "probe_demo/text_editor_20250728/fix_typo"
    scenarios, _ = load_scenarios([str(DATA / "model_a" / f"{sid}.json")])
    out = tmp_path / "b"
    stop = threading.Event()
    app.on_request = lambda seen: stop.set() if len(seen) == 2 else None
    config = ProbeConfig(model=MODEL_B, out=out, base_url=url, concurrency=1,
                         scenario_header=True, limits=Limits(backoff=0))
    [first] = ProbeRun(scenarios, config, stop=stop).run()
    assert first.status == "interrupted" and first.turns == 2
    assert json.loads((out / "probe.json").read_text())["complete"] is False
    app.on_request = None
    [again] = ProbeRun(scenarios, config).run()
    assert (again.status, again.turns, again.requests) == ("completed", 3, 3)
    assert scenario_doc(out, sid)["status"] == "completed"


def test_budget_stops_cleanly_and_resume_finishes(tmp_path: Path, server_a: tuple[str, Counting],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a"
    assert probe(server_a[0], MODEL_A, out, "--budget", "500", "--concurrency", "1") == 1
    err = capsys.readouterr().err
    assert "not run (run again to resume)" in err
    index = json.loads((out / "probe.json").read_text())
    assert index["complete"] is False
    assert index["counts"].get("completed", 0) < 6
    assert probe(server_a[0], MODEL_A, out) == 0
    assert json.loads((out / "probe.json").read_text())["counts"] == {"completed": 6}


def test_limits_max_turns_and_output_tokens(tmp_path: Path, server_b: tuple[str, Counting]) -> None:
    out = tmp_path / "b"
    assert probe(server_b[0], MODEL_B, out, "--max-turns", "2") == 0
    typo = scenario_doc(out, "probe_demo/text_editor_20250728/fix_typo")
    assert typo["status"] == "max_turns" and typo["turns"] == 2
    out2 = tmp_path / "b2"
    assert main(["probe", "--model", MODEL_B, "--out", str(out2), "--base-url", server_b[0],
                 "--quiet", "--max-output-tokens", "50",
                 str(DATA / "model_a/probe_demo/text_editor_20250728")]) == 0
    typo = scenario_doc(out2, "probe_demo/text_editor_20250728/fix_typo")
    # view used 40 output tokens, so the second request was capped at 10 and its 70 overran
    assert typo["status"] == "max_output_tokens"
    cassette = json.loads((out2 / "cassettes/probe_demo/text_editor_20250728/fix_typo.json")
                          .read_text())
    assert [e["request"]["body"]["max_tokens"] for e in cassette["exchanges"]] == [50, 10]


def test_model_mode_judges_rules_whatever_the_results(tmp_path: Path) -> None:
    """Model mode answers the next turn whatever the tool result says, and still refuses a
    request that breaks a rule."""
    import anthropic

    url, stop, _ = serve("model_a")
    try:
        client = anthropic.Anthropic(api_key="x", base_url=url, max_retries=0,
                                     default_headers={model_mode.SCENARIO_HEADER:
                                                      "probe_demo/custom/weather"})
        opening = {"model": "claude-haiku-4-5", "max_tokens": 512,
                   "tools": json.loads((DATA / "model_a/probe_demo/custom/weather.json")
                                       .read_text())["tools"],
                   "messages": [{"role": "user", "content": "What's the weather in Lisbon?"}]}
        first = client.messages.create(**opening)
        use = first.content[0].model_dump(mode="json", exclude_none=True)
        broken = {**opening, "messages": [*opening["messages"],
                                          {"role": "assistant", "content": [use]},
                                          {"role": "user", "content": "never mind"}]}
        with pytest.raises(anthropic.BadRequestError, match="tool_result"):
            client.messages.create(**broken)
        answered = {**opening, "messages": [*opening["messages"],
                                            {"role": "assistant", "content": [use]},
                                            {"role": "user", "content": [{
                                                "type": "tool_result", "tool_use_id": use["id"],
                                                "content": "something else entirely"}]}]}
        assert client.messages.create(**answered).stop_reason == "end_turn"
    finally:
        stop()


def test_serve_cli_model_mode_option() -> None:
    from conformance.cli import build_parser

    args = build_parser().parse_args(["serve", "--model-mode", SCENARIOS])
    assert args.model_mode is True


@pytest.mark.parametrize(("argv", "message"), [
    (["--budget", "0"], "--budget 0: give a positive number"),
    (["--price", "cheap"], "--price 'cheap': expected IN,OUT"),
    (["--base-url", "http://127.0.0.1:9", "no/such/scenario"], "no/such/scenario:/: no such file or directory"),
])
def test_usage_errors(argv: list[str], message: str, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--model", MODEL_A, "--out", str(tmp_path / "o"),
                 "--base-url", "http://127.0.0.1:9", *argv]) == 2
    assert message in capsys.readouterr().err


def test_live_api_needs_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert main(["probe", "--model", MODEL_A, "--out", str(tmp_path / "o"), SCENARIOS]) == 2
    assert "set ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_another_models_output_is_refused(two_probes: tuple[Path, Path],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = two_probes
    assert main(["probe", "--model", MODEL_B, "--out", str(a), "--base-url",
                 "http://127.0.0.1:9", SCENARIOS]) == 2
    assert f"holds a probe of model '{MODEL_A}'" in capsys.readouterr().err


@pytest.mark.slow  # a subprocess and a slowed server (~20 s on two shared cores)
def test_ctrl_c_stops_the_command_and_the_same_command_resumes(
        tmp_path: Path, server_a: tuple[str, Counting]) -> None:
    import signal
    import subprocess
    import sys
    import time

    from hostile import sigint_as_at_a_terminal

    url, app = server_a
    app.on_request = lambda seen: time.sleep(0.2)  # a slow model: time to interrupt
    out = tmp_path / "a"
    argv = ["probe", "--model", MODEL_A, "--out", str(out), "--base-url", url, "--quiet",
            "--concurrency", "1", SCENARIOS]
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from conformance.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", *argv],
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
    deadline = time.monotonic() + 60
    while not list((out / "scenarios").rglob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted; run the same command to resume" in err
    index = json.loads((out / "probe.json").read_text())
    assert index["complete"] is False
    finished = {sid for sid, v in index["scenarios"].items() if v["status"] == "completed"}
    assert 1 <= len(finished) < 6
    app.on_request = None
    app.seen.clear()
    assert main(argv) == 0
    assert json.loads((out / "probe.json").read_text())["complete"] is True
    assert not finished & set(app.seen)


def test_expired_container_is_dropped_and_the_request_sent_again(tmp_path: Path) -> None:
    """An opening that names a container the API no longer has: the probe sends the same request
    again without ``container`` (as the protocol says), and the scenario completes."""
    cassette = json.loads((DATA / "model_a/probe_demo/messages/greeting.json").read_text())
    first = cassette["exchanges"][0]
    stale = copy.deepcopy(first)
    stale["request"]["body"]["container"] = "container_stale"
    stale["response"] = {"status": 400, "headers": {"content-type": "application/json"},
                         "body": {"type": "error", "error": {
                             "type": "invalid_request_error", "message":
                             "container: container `container_stale` has expired and cannot be "
                             "reused. Send the request again without the `container` parameter."}}}
    cassette["exchanges"] = [stale, first]
    path = tmp_path / "cassettes/probe_demo/messages/greeting.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(cassette))
    url, stop = start_server(model_mode.build(load_cassettes(path)))
    try:
        out = tmp_path / "out"
        assert main(["probe", "--model", MODEL_A, "--out", str(out), "--base-url", url,
                     "--quiet", str(path)]) == 0
    finally:
        stop()
    doc = scenario_doc(out, "probe_demo/messages/greeting")
    assert (doc["status"], doc["requests"]) == ("completed", 2)
    assert doc["retried"][0]["type"] == "container_expired"
    sent = json.loads((out / "cassettes/probe_demo/messages/greeting.json").read_text())
    assert [("container" in e["request"]["body"]) for e in sent["exchanges"]] == [True, False]
