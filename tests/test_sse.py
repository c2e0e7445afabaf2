"""SSE: the synthesized stream's grammar, assembly back to the message, the SDK's accumulator,
recorded streams replayed verbatim, and real recorded streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _simkit import (
    WEATHER,
    body,
    cassette,
    exchange,
    message,
    post,
    sdk_client,
    text,
    tool_use,
    user,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.engine import Simulator
from simulator.http import SSEEvent
from simulator.sse import StreamError, assemble_message, error_event, synthesize_events

CONTAINER = {"id": "container_1", "expires_at": "2026-01-20T13:00:00Z"}
RICH = message([
    {"type": "thinking", "thinking": "Let me think about the weather in Paris.", "signature": "sig=="},
    text("I'll check the weather and run some code for you, one moment."),
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "bash_code_execution",
     "input": {"command": "python -c 'print(21)'"}},
    {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1",
     "content": {"type": "bash_code_execution_result", "stdout": "21\n", "stderr": "",
                 "return_code": 0, "content": []}},
    tool_use("toolu_1", input={"city": "Paris", "units": {"temp": "C", "nested": [1, 2, "é"]}}),
], "tool_use", container=CONTAINER,
    usage={"input_tokens": 120, "output_tokens": 80, "cache_read_input_tokens": 0,
           "server_tool_use": {"web_search_requests": 0}})


def check_grammar(events: list[SSEEvent]) -> None:
    """PROTOCOL.md §6: message_start, blocks (start, deltas, stop), message_delta, message_stop."""
    names = [e.event for e in events if e.event != "ping"]
    for e in events:
        assert e.data["type"] == e.event
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    start = events[0].data["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    open_index: int | None = None
    expected = 0
    for e in events[1:]:
        if e.event == "content_block_start":
            assert open_index is None and e.data["index"] == expected
            open_index = e.data["index"]
        elif e.event == "content_block_delta":
            assert e.data["index"] == open_index
        elif e.event == "content_block_stop":
            assert e.data["index"] == open_index
            open_index, expected = None, expected + 1
        elif e.event in ("message_delta", "message_stop"):
            assert open_index is None


def blocks(events: list[SSEEvent], index: int) -> list[SSEEvent]:
    return [e for e in events if e.data.get("index") == index]


def test_synthesized_stream_grammar_and_block_events() -> None:
    events = synthesize_events(RICH, chunk=10)
    check_grammar(events)
    names = [e.event for e in events]
    assert names[:2] == ["message_start", "content_block_start"]
    # The first ping (if any) as live streams send it: after the first block's start or after
    # its first or second delta (simulator.envelope.LIVE).
    if "ping" in names:
        assert names.index("ping") in (2, 3, 4)
        assert set(names[2:names.index("ping")]) <= {"content_block_delta"}
    thinking = blocks(events, 0)
    assert thinking[0].data["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert [e.data["delta"]["type"] for e in thinking[1:-1]][-1] == "signature_delta"
    assert {e.data["delta"]["type"] for e in thinking[1:-2]} == {"thinking_delta"}
    txt = blocks(events, 1)
    assert len(txt) > 3 and all(e.data["delta"]["type"] == "text_delta" for e in txt[1:-1])
    srv = blocks(events, 2)
    assert srv[0].data["content_block"]["input"] == {}
    assert srv[1].data["delta"] == {"type": "input_json_delta", "partial_json": ""}
    result = blocks(events, 3)
    assert [e.event for e in result] == ["content_block_start", "content_block_stop"]
    assert result[0].data["content_block"] == RICH["content"][3]
    tool = blocks(events, 4)
    assert tool[0].data["content_block"]["input"] == {} and tool[0].data["content_block"]["id"] == "toolu_1"
    md = next(e for e in events if e.event == "message_delta").data
    assert md["delta"]["stop_reason"] == "tool_use" and md["delta"]["container"] == CONTAINER
    assert md["usage"] == RICH["usage"]
    start = events[0].data["message"]
    assert "container" not in start and "server_tool_use" not in start["usage"]
    assert start["usage"]["output_tokens"] <= RICH["usage"]["output_tokens"]
    raw = "".join(e.data["delta"]["partial_json"] for e in tool[1:-1])
    assert raw.startswith('{"city": "Paris", "units": {') and json.loads(raw) == RICH["content"][4]["input"]
    assert {len(e.data["delta"]["partial_json"]) for e in tool[2:-2]} == {10}


def test_assemble_round_trips_the_message() -> None:
    assert assemble_message(synthesize_events(RICH, chunk=7)) == RICH
    assert assemble_message([{"event": e.event, "data": e.data} for e in synthesize_events(RICH)]) == RICH
    assert assemble_message([e.data for e in synthesize_events(RICH)]) == RICH


def test_pings_between_blocks_are_ignored_by_assembly() -> None:
    events = synthesize_events(RICH, chunk=5, ping_every=2)
    assert sum(e.event == "ping" for e in events) > 3
    check_grammar(events)
    assert assemble_message(events) == RICH


def test_error_event_raises_and_missing_start_is_refused() -> None:
    events = synthesize_events(RICH)[:4] + [error_event()]
    with pytest.raises(StreamError, match="overloaded_error: Overloaded"):
        assemble_message(events)
    with pytest.raises(ValueError, match="message_start"):
        assemble_message([])


text_st = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)
json_st = st.recursive(st.none() | st.booleans() | st.integers() | text_st,
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(text_st, c, max_size=3),
                       max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(text_st, min_size=0, max_size=3),
       inputs=st.lists(st.dictionaries(text_st, json_st, max_size=4), max_size=2),
       chunk=st.integers(1, 30))
def test_assembly_inverts_synthesis(texts: list[str], inputs: list[dict[str, Any]], chunk: int) -> None:
    content = [text(t) for t in texts] + [tool_use(f"toolu_{i}", input=inp or {"k": 1})
                                          for i, inp in enumerate(inputs)]
    m = message(content, "tool_use" if inputs else "end_turn")
    events = synthesize_events(m, chunk=chunk)
    check_grammar(events)
    assert assemble_message(events) == m


def _weather_sim(resp: dict[str, Any] | None = None, **kw: Any) -> tuple[Simulator, dict[str, Any]]:
    b = body([user("Weather?")], tools=[WEATHER])
    return Simulator(cassette(exchange({**b, "stream": True}, resp or RICH)), **kw), b


def test_stream_request_gets_synthesized_sse_from_recorded_json() -> None:
    sim, b = _weather_sim()
    r = sim(post({**b, "stream": True}))
    assert r.is_stream and r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["request-id"].startswith("req_")
    raw = b"".join(r.iter_bytes()).decode()
    assert raw.startswith("event: message_start\ndata: {")
    assert sim.served[0].mode == "synthesized"


def test_sdk_stream_accumulator_rebuilds_the_same_message() -> None:
    sim, b = _weather_sim()
    client = sdk_client(sim)
    with client.messages.stream(model=b["model"], max_tokens=1024, messages=b["messages"],
                                tools=b["tools"]) as stream:
        final = stream.get_final_message()
    got = final.model_dump(mode="json", exclude_none=True)
    assert [c["type"] for c in got["content"]] == [c["type"] for c in RICH["content"]]
    assert got["content"][4]["input"] == RICH["content"][4]["input"]
    assert got["content"][2]["input"] == RICH["content"][2]["input"]
    assert got["content"][1]["text"] == RICH["content"][1]["text"]
    assert got["content"][0]["signature"] == "sig=="
    assert got["content"][3] == RICH["content"][3]
    assert got["stop_reason"] == "tool_use" and got["container"]["id"] == "container_1"
    assert got["usage"]["output_tokens"] == 80


def test_sdk_raises_on_a_mid_stream_error_event() -> None:
    import anthropic

    from simulator.faults import Fault, FaultPlan
    sim, b = _weather_sim(faults=FaultPlan(at={0: Fault("stream_error", after_events=4)}))
    client = sdk_client(sim, max_retries=0)
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        with client.messages.stream(model=b["model"], max_tokens=1024, messages=b["messages"],
                                    tools=b["tools"]) as stream:
            stream.get_final_message()


def test_recorded_stream_is_replayed_verbatim_and_assembled_for_plain_requests() -> None:
    recorded = [{"event": e.event, "data": e.data} for e in synthesize_events(RICH, chunk=9)]
    recorded.insert(3, {"event": "ping", "data": {"type": "ping"}})
    b = body([user("Weather?")], tools=[WEATHER])
    c = cassette(exchange({**b, "stream": True}, None, events=recorded),
                 exchange({**b, "stream": True}, None, events=recorded))
    sim = Simulator(c)
    r = sim(post({**b, "stream": True}))
    assert [{"event": e.event, "data": e.data} for e in r.events or []] == recorded
    r2 = sim(post(b))
    assert not r2.is_stream and r2.body == RICH
    assert [e.mode for e in sim.served] == ["recorded", "assembled"]


def test_recorded_stream_ending_in_error_answers_a_plain_request_with_that_error() -> None:
    recorded = [{"event": e.event, "data": e.data} for e in synthesize_events(RICH)[:5]]
    recorded.append({"event": "error", "data": error_event().data})
    b = body([user("Weather?")], tools=[WEATHER])
    sim = Simulator(cassette(exchange(b, None, events=recorded)))
    r = sim(post(b))
    assert r.status == 529 and r.body["error"]["type"] == "overloaded_error"


def _real_streams(shared: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for p in sorted((shared / "real_traffic").glob("*_sse*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        if doc.get("kind") != "sse_events" or not isinstance(doc.get("data"), list):
            continue
        starts = sum(isinstance(e.get("data"), dict) and e["data"].get("type") == "message_start"
                     for e in doc["data"])
        if starts == 1:  # some fixtures concatenate several streams; those are not one stream
            out.append((p.name, doc["data"]))
    return out


@pytest.mark.shared
def test_real_recorded_streams_assemble_like_the_sdk(shared_dir: Path) -> None:
    from anthropic.lib.streaming._messages import accumulate_event
    streams = _real_streams(shared_dir)
    if not streams:
        pytest.skip("no sse_events captures in ../shared/real_traffic")
    compared = 0
    for name, events in streams:
        snap = None
        bufs: dict[int, bytes] = {}
        sdk_error: Exception | None = None
        try:
            for e in events:
                data = e["data"]
                if not isinstance(data, dict) or data.get("type") in ("ping", "error"):
                    continue
                snap = accumulate_event(event=data, current_snapshot=snap, json_bufs=bufs)  # type: ignore[arg-type]
        except Exception as err:  # noqa: BLE001
            sdk_error = err
        try:
            ours = assemble_message(events)
        except StreamError:
            continue
        except ValueError:
            assert sdk_error is not None or snap is None, f"{name}: the SDK accepts this stream"
            continue
        if sdk_error is not None:
            continue  # the SDK refuses some captures (unknown delta types); we are lenient
        assert snap is not None, name
        sdk = snap.model_dump(mode="json", warnings=False)
        assert [b["type"] for b in ours["content"]] == [b["type"] for b in sdk["content"]], name
        for mine, theirs in zip(ours["content"], sdk["content"], strict=True):
            for key in ("text", "input", "thinking", "signature", "tool_use_id"):
                # The SDK's (non-beta) accumulator parses input JSON only for these two types.
                if key == "input" and mine["type"] not in ("tool_use", "server_tool_use"):
                    continue
                if key in mine:
                    assert mine[key] == theirs.get(key), (name, key)
        assert ours.get("stop_reason") == sdk.get("stop_reason"), name
        assert ours["usage"]["output_tokens"] == sdk["usage"]["output_tokens"], name
        compared += 1
    assert compared >= len(streams) // 2, f"only {compared} of {len(streams)} streams compared"
    print(f"compared {compared} of {len(streams)} real streams with the SDK accumulator")


def _shape(events: list[Any]) -> list[tuple[Any, ...]]:
    """Event kinds, block types and start keys, delta types (runs collapsed), message_delta keys."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        d = e.data if isinstance(e, SSEEvent) else e["data"]
        t = d.get("type")
        if t == "ping":
            continue
        if t == "content_block_start":
            out.append(("start", d["content_block"].get("type"), tuple(sorted(d["content_block"]))))
        elif t == "content_block_delta":
            out.append(("delta", d["delta"].get("type")))
        elif t == "message_delta":
            out.append(("message_delta", tuple(sorted(d["delta"]))))
        else:
            out.append((t,))
    return [k for i, k in enumerate(out) if i == 0 or out[i - 1] != k]


@pytest.mark.shared
def test_synthesized_streams_have_the_shape_of_real_ones(shared_dir: Path) -> None:
    """Assemble each real stream, synthesize it again: same events, block starts and deltas."""
    streams = _real_streams(shared_dir)
    if not streams:
        pytest.skip("no sse_events captures in ../shared/real_traffic")
    differ = []
    for name, events in streams:
        try:
            m = assemble_message(events)
        except (StreamError, ValueError):
            continue
        if not any(isinstance(e["data"], dict) and e["data"].get("type") == "content_block_stop"
                   for e in events[-4:]) and m.get("stop_reason") == "max_tokens":
            continue  # a stream cut short leaves its last block open; ours closes it
        if _shape(events) != _shape(synthesize_events(m)):
            differ.append(name)
    assert not differ, differ


def test_calls_made_from_code_arrive_whole_and_compaction_in_one_delta() -> None:
    call = tool_use("toolu_c", "query_database", {"sql": "select 1"},
                    caller={"type": "code_execution_20260120", "tool_id": "srvtoolu_1"})
    compaction = {"type": "compaction", "content": "Summary of the conversation so far."}
    m = message([compaction, call], "tool_use")
    m["stop_details"] = None
    events = synthesize_events(m)
    check_grammar(events)
    assert [e.event for e in blocks(events, 1)] == ["content_block_start", "content_block_stop"]
    assert blocks(events, 1)[0].data["content_block"] == call
    comp = blocks(events, 0)
    assert comp[0].data["content_block"] == {"type": "compaction", "content": None}
    assert comp[1].data["delta"] == {"type": "compaction_delta", "content": compaction["content"]}
    md = next(e for e in events if e.event == "message_delta").data
    assert "stop_details" in md["delta"] and events[0].data["message"]["stop_details"] is None
    assert assemble_message(events) == m


def test_a_broken_recorded_stream_is_reported_for_a_plain_request() -> None:
    b = body([user("Weather?")], tools=[WEATHER])
    broken = [{"event": "content_block_delta", "data": {"type": "content_block_delta", "index": 0,
                                                        "delta": {"type": "text_delta", "text": "x"}}}]
    r = Simulator(cassette(exchange(b, None, events=broken)))(post(b))
    assert r.status == 500 and "cannot be assembled" in r.body["error"]["message"]
