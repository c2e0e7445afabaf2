"""``tooluse fidelity DIR``: the agreement table on any directory of captures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main


def _write(root: Path, name: str, source: str, kind: str, note: str, data: Any) -> None:
    (root / name).write_text(json.dumps({"source": source, "kind": kind, "note": note,
                                         "data": data}), encoding="utf-8")


def _request(body: dict[str, Any]) -> dict[str, Any]:
    return {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "body": body,
            "headers": {"anthropic-version": "2023-06-01"}}


OK = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
RAW_STREAM = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    '"role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,'
    '"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}         }\n\n'
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"text","text":""}   }\n\n'
    'event: ping\ndata: {"type": "ping"}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"Hello"}    }\n\n'
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0 }\n\n'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
    '"stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
    'event: message_stop\ndata: {"type":"message_stop"          }\n\n')


@pytest.fixture
def captures(tmp_path: Path) -> Path:
    _write(tmp_path, "a__001.json", "r/a@1", "request", "interaction 0", _request(OK))
    _write(tmp_path, "a__002.json", "r/a@1", "sse_events", "interaction 0", RAW_STREAM)
    unknown = {**OK, "model": "this-model-does-not-exist-12345"}
    _write(tmp_path, "b__001.json", "r/b@1", "request", "interaction 0", _request(unknown))
    _write(tmp_path, "b__002.json", "r/b@1", "error", "interaction 0, HTTP 404", {
        "type": "error", "error": {"type": "not_found_error",
                                   "message": "model: this-model-does-not-exist-12345"}})
    bad = {**OK, "messages": [{"role": "user", "content": ["Invalid content"]}]}
    _write(tmp_path, "c__001.json", "r/c@1", "request", "interaction 0", _request(bad))
    _write(tmp_path, "c__002.json", "r/c@1", "error", "interaction 0, HTTP 400", {
        "type": "error", "error": {"type": "invalid_request_error",
                                   "message": "messages.0: Input does not match the expected shape."}})
    return tmp_path


def test_fidelity_prints_the_agreement_table(captures: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", str(captures), "--fail-on-disagreement"]) == 0
    out = capsys.readouterr().out
    assert "| accepted | 1 | 0 |" in out and "| refused | 0 | 2 |" in out
    assert "false refusals (live 2xx, refused here): **0** of 1" in out
    assert "false accepts (live 400/404, accepted here): **0** of 2" in out
    assert "same status and type 2 of 2, same message verbatim 2" in out
    # the raw stream's padding is measured: 5 of 6 payloads padded (1 to 10 spaces)
    assert "| payloads padded | 5 (83 %) |" in out
    assert "| padding (spaces) | 1–10 |" in out
    assert '| ping written | {"type": "ping"} x1 |' in out


def test_fidelity_json_and_a_disagreement(captures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The API served a model the simulator does not know: a false refusal, unless it is added.
    new = {**OK, "model": "claude-opus-9"}
    _write(captures, "d__001.json", "r/d@1", "request", "interaction 0", _request(new))
    _write(captures, "d__002.json", "r/d@1", "response", "interaction 0",
           {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-opus-9",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}})
    assert main(["fidelity", str(captures), "--format", "json", "--fail-on-disagreement",
                 "--no-streams"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["agreement"]["false_refusals"] == 1
    assert got["false_refusals"][0]["rule"] == "model.known"
    assert main(["fidelity", str(captures), "--format", "json", "--model", "claude-opus-9",
                 "--fail-on-disagreement", "--no-streams"]) == 0


def test_fidelity_names_unusable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", str(tmp_path / "absent")]) == 2
    assert "no such captures directory" in capsys.readouterr().err
    assert main(["fidelity", str(tmp_path), "--as-of", "yesterday"]) == 2


def test_the_estimate_is_measured_on_live_usage_counting_the_request_as_sent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def answered(name: str, body: dict[str, Any], usage: dict[str, Any],
                 content: list[dict[str, Any]] | None = None) -> None:
        _write(tmp_path, f"{name}__001.json", f"r/{name}@1", "request", "interaction 0",
               _request(body))
        _write(tmp_path, f"{name}__002.json", f"r/{name}@1", "response", "interaction 0", {
            "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
            "content": content or [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"output_tokens": 1, **usage}})

    answered("a", OK, {"input_tokens": 2, "cache_read_input_tokens": 6})  # estimate 8: 1.00
    answered("b", OK, {"input_tokens": 80})  # 0.10: the furthest
    # not counted: a server tool's results are read into the count, compaction shrinks it
    answered("c", {**OK, "tools": [{"type": "web_search_20250305", "name": "web_search"}]},
             {"input_tokens": 9000})
    answered("d", {**OK, "context_management": {"edits": [{"type": "compact_20260112"}]}},
             {"input_tokens": 1})
    answered("e", OK, {"input_tokens": 9000},
             [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}])
    assert main(["fidelity", str(tmp_path), "--no-streams"]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 (50%) answered Messages requests whose usage counts the request as sent" in out
    assert "| `b__001.json` | 80 | 8 | 0.10 |" in out.split("## Token estimate against live usage")[1]
    assert main(["fidelity", str(tmp_path), "--no-streams", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {u["id"]: (u["live"], u["estimate"]) for u in got["usage"]} == \
        {"a__001.json": (8, 8), "b__001.json": (80, 8)}
    assert got["agreement"]["usage_within_25pct"] == 1


def test_what_recorders_write_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 40: a partial header set is "headers not recorded", a stream kept as raw SSE text
    is measured (its usage too), and an answer about the account (billing) is not a refusal."""
    legacy = {**OK, "model": "claude-3-5-sonnet-20241022",
              "tools": [{"type": "bash_20241022", "name": "bash"}]}
    # go-vcr keeps a few generic headers; R's vcr writes {}: neither says what anthropic-* was sent
    for name, headers in (("g", {"Content-Type": ["application/json"], "User-Agent": ["go"]}),
                          ("r", {})):
        _write(tmp_path, f"{name}__001.json", f"r/{name}@1", "request", "interaction 0",
               {**_request(legacy), "headers": headers})
        _write(tmp_path, f"{name}__002.json", f"r/{name}@1", "response", "interaction 0", {
            "id": "msg_1", "type": "message", "role": "assistant", "model": legacy["model"],
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}})
    # the stream as raw SSE text, in a response capture as some recorders keep it
    _write(tmp_path, "s__001.json", "r/s@1", "request", "interaction 0", _request(OK))
    _write(tmp_path, "s__002.json", "r/s@1", "response", "interaction 0", RAW_STREAM)
    _write(tmp_path, "m__001.json", "r/m@1", "request", "interaction 0", _request(OK))
    _write(tmp_path, "m__002.json", "r/m@1", "error", "interaction 0, HTTP 400", {
        "type": "error", "error": {"type": "invalid_request_error", "message":
                                   "Your credit balance is too low to access the Anthropic API. "
                                   "Please go to Plans & Billing to upgrade or purchase credits."}})
    assert main(["fidelity", str(tmp_path), "--no-streams", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    agreement = got["agreement"]
    assert agreement["false_refusals"] == 0  # the legacy beta header may have been sent
    assert agreement["refused_for_a_header_not_recorded"] == 2
    assert agreement["false_accepts"] == 0 and agreement["real_400_404"] == 0
    assert agreement["account_state"] == 1
    assert {u["id"] for u in got["usage"]} >= {"s__001.json"}  # the raw text's usage is read
    assert main(["fidelity", str(tmp_path), "--no-streams"]) == 0
    assert "1 live answer(s) about the account, not the request" in capsys.readouterr().out


def test_a_retirement_is_judged_on_its_day_and_live_evidence_wins() -> None:
    from datetime import date

    from simulator.models import MODELS, lookup
    for m in MODELS:
        if m.retired_on is not None:
            assert m.retired_source, f"{m.id}: a retirement date without its source"
        if m.served_until is not None:
            assert m.served_source and m.retired_on is not None and m.served_until >= m.retired_on
    sonnet = lookup("claude-3-5-sonnet-20241022")
    assert sonnet is not None
    assert not sonnet.retired(date(2025, 10, 21))
    assert not sonnet.retired(date(2025, 10, 28))  # documented 10-22, served live on 10-28
    assert sonnet.retired(date(2025, 10, 29))


def test_a_raw_sse_text_in_a_response_capture_is_a_measured_stream(tmp_path: Path) -> None:
    from simulator.captures import load_captures
    from simulator.fidelity_streams import live_streams
    _write(tmp_path, "s__001.json", "r/s@1", "request", "interaction 0", _request(OK))
    _write(tmp_path, "s__002.json", "r/s@1", "response", "interaction 0", RAW_STREAM)
    _write(tmp_path, "t__002.json", "r/t@1", "sse_events", "interaction 0", RAW_STREAM)
    streams = list(live_streams(load_captures(tmp_path)))
    assert [name for name, _, raw in streams if raw] == ["s__002.json#0", "t__002.json#0"]
