"""simulator.captures pairs captures by recording and index (not by file name);
simulator.count_tokens estimates and answers as documented; ids and error headers have the live
API's forms."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from simulator.captures import CaptureError, exchanges, load_captures, recordings
from simulator.count_tokens import (
    CHARS_PER_TOKEN,
    IMAGE_TOKENS,
    TOOL_SYSTEM_PROMPT,
    count_tokens_response,
    estimate_tokens,
)
from simulator.errors import BASE58, RequestIds, api_error, invalid_request
from simulator.fidelity import Replay, agreement_table, judge

REC_A = "org/repo/tests/cassettes/a.yaml@1111"
REC_B = "org/repo/tests/cassettes/b.yaml@2222"
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]}
MSG = {"id": "msg_011CaaaaaaaaaaaaaaaaaaaaA", "type": "message", "role": "assistant",
       "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "hello"}],
       "stop_reason": "end_turn", "stop_sequence": None,
       "usage": {"input_tokens": 1, "output_tokens": 1}}


def _write(root: Path, name: str, source: str, kind: str, note: str, data: Any) -> None:
    (root / name).write_text(json.dumps({"source": source, "kind": kind, "note": note,
                                         "data": data}), encoding="utf-8")


def _req(body: dict[str, Any], url: str = "https://api.anthropic.com/v1/messages") -> dict[str, Any]:
    return {"method": "POST", "url": url, "body": body}


def test_pairs_by_recording_and_index_not_by_file_name(tmp_path: Path) -> None:
    # Interleaved numbering: a's request i1 is file 002, its answer file 004; b's i0 sits between.
    _write(tmp_path, "x__001__a_i0_request.json", REC_A, "request", "interaction 0", _req(BODY))
    _write(tmp_path, "x__002__a_i1_request.json", REC_A, "request", "interaction 1",
           _req({**BODY, "model": "claude-sonet-4-5"}))
    _write(tmp_path, "x__003__b_i0_response_200.json", REC_B, "response",
           "interaction 0; HTTP 200", MSG)
    _write(tmp_path, "x__004__a_i1_error_404.json", REC_A, "error", "interaction 1; HTTP 404",
           {"type": "error", "error": {"type": "not_found_error",
                                       "message": "model: claude-sonet-4-5"}})
    _write(tmp_path, "x__005__a_i0_response_200.json", REC_A, "response",
           "interaction 0; HTTP 200", MSG)
    recs = {r.source: r for r in recordings(load_captures(tmp_path))}
    a = recs[REC_A].exchanges
    assert [(e.index, e.request.id if e.request else None, e.answer.id if e.answer else None)
            for e in a] == [(0, "x__001", "x__005"), (1, "x__002", "x__004")]
    assert a[1].status == 404 and a[1].error == {"type": "not_found_error",
                                                 "message": "model: claude-sonet-4-5"}
    assert a[0].message == MSG and a[0].path == "/v1/messages" and a[0].headers is None
    assert [(e.request, e.answer.id if e.answer else None) for e in recs[REC_B].exchanges] == \
        [(None, "x__003")]
    verdicts = {v.id: v for v in judge(load_captures(tmp_path), Replay())}
    assert verdicts["x__001"].accepted and not verdicts["x__002"].accepted
    assert verdicts["x__002"].first is not None and verdicts["x__002"].first.status == 404
    table = agreement_table(verdicts.values())
    assert "| accepted | 1 | 0 |" in table and "| refused | 0 | 1 |" in table


def test_a_wrapper_without_index_pairs_its_request_and_answer(tmp_path: Path) -> None:
    _write(tmp_path, "v__001__w_request.json", REC_A, "request", "wrapper; request body", BODY)
    _write(tmp_path, "v__002__w_error_400.json", REC_A, "error", "wrapper; HTTP status 400",
           {"type": "error", "error": {"type": "invalid_request_error", "message": "m"}})
    (ex,) = exchanges(load_captures(tmp_path))
    assert ex.index is None and ex.body == BODY and ex.status == 400


def test_two_requests_for_one_index_are_refused_with_the_file_named(tmp_path: Path) -> None:
    _write(tmp_path, "x__001__a_i0_request.json", REC_A, "request", "interaction 0", _req(BODY))
    _write(tmp_path, "x__002__a_i0_request.json", REC_A, "request", "interaction 0", _req(BODY))
    with pytest.raises(CaptureError, match="x__002__a_i0_request.json"):
        recordings(load_captures(tmp_path))


def test_a_file_that_is_not_a_capture_is_named(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"kind": "request"}', encoding="utf-8")
    with pytest.raises(CaptureError, match=r"x\.json: not a capture"):
        load_captures(tmp_path)
    with pytest.raises(CaptureError, match="no such captures directory"):
        load_captures(tmp_path / "absent")


def test_count_tokens_estimate_grows_with_the_prompt_and_counts_images_flat() -> None:
    short = estimate_tokens(BODY)
    longer = estimate_tokens({**BODY, "messages": [{"role": "user", "content": "hi " * 400}]})
    assert 0 < short < longer and longer >= 1200 // CHARS_PER_TOKEN
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                       "data": "A" * 400_000}}
    with_image = estimate_tokens({**BODY, "messages": [{"role": "user", "content": [img]}]})
    assert IMAGE_TOKENS <= with_image < IMAGE_TOKENS + 50
    tools = estimate_tokens({**BODY, "tools": [{"type": "bash_20250124", "name": "bash"}]})
    assert tools - short >= TOOL_SYSTEM_PROMPT["auto"] + 245


def test_count_tokens_answers_like_the_api() -> None:
    ok = count_tokens_response({"model": "claude-sonnet-4-5", "messages": BODY["messages"]})
    assert ok.status == 200 and set(ok.body) == {"input_tokens"}
    missing = count_tokens_response({"model": "claude-does-not-exist", "messages": []})
    assert missing.status == 404
    assert missing.body["error"] == {"type": "not_found_error",
                                     "message": "model: claude-does-not-exist"}
    bad = count_tokens_response({"model": "claude-sonnet-4-5"})
    assert bad.status == 400 and "messages" in bad.body["error"]["message"]


def test_ids_are_base58_of_the_live_length_and_reproducible_by_seed() -> None:
    a, b = RequestIds(7), RequestIds(7)
    ids = [a.new() for _ in range(200)] + [a.message() for _ in range(50)]
    assert ids[:3] == [b.new() for _ in range(3)]
    for i in ids:
        assert re.fullmatch(rf"(req|msg)_011C[{BASE58}]{{20}}", i), i
        assert len(i) == 28
    assert not set("".join(i[8:] for i in ids)) & set("0OIl")
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("status", "retry"), [(400, "false"), (401, "false"), (404, "false"),
                                                (429, "true"), (529, "true"), (500, "true")])
def test_errors_say_whether_to_retry_as_the_api_does(status: int, retry: str) -> None:
    assert api_error(status, None, "x").headers["x-should-retry"] == retry
    assert invalid_request("x").headers["x-should-retry"] == "false"


@pytest.mark.parametrize(("model", "served"), [
    ("claude-sonnet-4-5", True), ("claude-sonnet-4-5-20250929", True), ("claude-opus-4-8", True),
    ("claude-3-haiku-20240307", True),
    # any name the API does not serve, whatever its spelling (issue 25, pydai__056, pydai__326)
    ("claude-sonet-4-5", False), ("claude-does-not-exist", False), ("claude-", False),
    ("claude-opus-9", False), ("this-model-does-not-exist-12345", False), ("gpt-4o", False),
    ("m", False), ("", False)])
def test_a_model_the_api_does_not_serve_is_answered_404(model: str, served: bool) -> None:
    from simulator.models import is_model_id
    from simulator.rules import RULES, RuleContext
    from simulator.state import SimState
    assert is_model_id(model) is served
    body = {"model": model, "max_tokens": 1, "messages": []}
    got = RULES["model.known"].check(RuleContext(body, {}, SimState()))
    assert got == (None if served else f"model: {model}")


def test_a_model_is_added_by_option_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from simulator.rules import RULES, RuleContext
    from simulator.state import SimState
    body = {"model": "claude-opus-9", "max_tokens": 1, "messages": []}
    state = SimState()
    assert RULES["model.known"].check(RuleContext(body, {}, state)) == "model: claude-opus-9"
    state.extra_models = frozenset({"claude-opus-9"})
    assert RULES["model.known"].check(RuleContext(body, {}, state)) is None
    monkeypatch.setenv("TOOLUSE_MODELS", "my-model, claude-opus-9 other")
    assert RULES["model.known"].check(RuleContext(body, {}, SimState())) is None
    assert RULES["model.known"].check(RuleContext({**body, "model": "other"}, {}, SimState())) \
        is None


@pytest.mark.parametrize(("model", "day", "refused"), [
    # Sonnet 3.5: documented for 2025-10-22, served live on 2025-10-28 (the evidence wins)
    ("claude-3-5-sonnet-latest", "2025-10-21", False), ("claude-3-5-sonnet-latest", "2025-10-28", False),
    ("claude-3-5-sonnet-latest", "2025-10-29", True),
    ("claude-3-5-sonnet-latest", "2025-11-05", True), ("claude-3-5-sonnet-20241022", "2026-12-02", True),
    ("claude-3-7-sonnet-latest", "2026-02-18", False), ("claude-3-7-sonnet-20250219", "2026-02-19", True),
    ("claude-3-5-haiku-latest", "2026-03-01", True), ("claude-sonnet-4-5", "2030-01-01", False)])
def test_a_retired_model_is_answered_404_from_its_retirement_day(model: str, day: str,
                                                                  refused: bool) -> None:
    from datetime import datetime

    from simulator.clock import FakeClock
    from simulator.rules import RULES, RuleContext
    from simulator.state import SimState
    state = SimState(FakeClock(datetime.fromisoformat(day + "T12:00:00+00:00")))
    body = {"model": model, "max_tokens": 1, "messages": []}
    got = RULES["model.not_retired"].check(RuleContext(body, {}, state))
    assert got == (f"model: {model}" if refused else None)
    assert RULES["model.known"].check(RuleContext(body, {}, state)) is None  # known, retired


def test_the_engine_alone_serves_count_tokens_with_its_seeded_ids() -> None:
    from _simkit import API_HEADERS, cassette, exchange

    from simulator.engine import Simulator
    from simulator.http import SimRequest
    c = cassette(exchange(BODY, MSG))
    sim, again = Simulator(c, seed=3), Simulator(c, seed=3)
    ok = sim(SimRequest("POST", "/v1/messages/count_tokens", API_HEADERS, body=json.dumps(
        {"model": "claude-sonnet-4-5", "messages": BODY["messages"]}).encode()))
    assert ok.status == 200 and ok.body["input_tokens"] > 0 and ok.headers["request-id"]
    bad = json.dumps({"model": "claude-sonet-4-5", "messages": []}).encode()
    a = sim(SimRequest("POST", "/v1/messages/count_tokens", API_HEADERS, body=bad))
    again(SimRequest("POST", "/v1/messages/count_tokens", API_HEADERS, body=b"{}"))
    b = again(SimRequest("POST", "/v1/messages/count_tokens", API_HEADERS, body=bad))
    assert a.status == 404 and a.body["request_id"] == a.headers["request-id"] == b.body["request_id"]
