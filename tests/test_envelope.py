"""The stream envelope (simulator.envelope): pings and padding drawn per stream exchange as
live streams show them, the same at every run, and measurable on any set of streams."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from simulator.envelope import (
    FIRST_PING_AFTER_DELTAS,
    MAX_PAD,
    StreamShape,
    measure,
    padding_of,
    parse_raw_sse,
    shape_table,
    split_streams,
)
from simulator.http import SSEEvent
from simulator.sse import synthesize_events

MSG = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-7",
       "content": [{"type": "text", "text": "The weather in Paris is sunny and mild today. " * 4},
                   {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                    "input": {"city": "Paris", "unit": "celsius"}}],
       "stop_reason": "tool_use", "stop_sequence": None,
       "usage": {"input_tokens": 10, "output_tokens": 40}}


def wire(events: list[SSEEvent]) -> list[bytes]:
    return [e.encode() for e in events]


def test_the_same_exchange_gets_the_same_bytes_and_others_differ() -> None:
    a = wire(synthesize_events(MSG, seed="c#0"))
    assert a == wire(synthesize_events(MSG, seed="c#0"))
    others = {tuple(wire(synthesize_events(MSG, seed=f"c#{i}"))) for i in range(1, 30)}
    assert len(others) == 29  # each exchange its own envelope


def test_first_ping_follows_the_live_distribution() -> None:
    got: Counter[int | None] = Counter()
    n = 2000
    for i in range(n):
        names = [e.event for e in synthesize_events(MSG, seed=f"dist#{i}")]
        if "ping" not in names:
            got[None] += 1
            continue
        k = names.index("ping") - names.index("content_block_start") - 1
        assert set(names[2:2 + k]) <= {"content_block_delta"}
        got[k] += 1
    total = sum(FIRST_PING_AFTER_DELTAS.values())
    for k, live in FIRST_PING_AFTER_DELTAS.items():
        # 2000 draws: a share off by more than 4 points would be a wrong distribution.
        assert abs(got[k] / n - live / total) < 0.04, (k, got[k], live)


def test_a_stream_opening_with_a_whole_block_gets_no_first_ping() -> None:
    msg = {**MSG, "content": [{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                               "content": []}, MSG["content"][0]]}
    for i in range(50):
        names = [e.event for e in synthesize_events(msg, seed=f"whole#{i}")]
        assert names.count("ping") <= 1  # only a rare later keepalive


def test_payloads_are_padded_as_the_api_pads_them() -> None:
    pads: Counter[int] = Counter()
    for i in range(200):
        for e in synthesize_events(MSG, seed=f"pad#{i}"):
            line = e.encode().split(b"\n")[1]
            assert line.startswith(b"data: ")
            raw = line[6:].decode()
            assert json.loads(raw) == e.data  # the value unchanged
            if e.event == "ping":
                assert raw == '{"type": "ping"}'
                continue
            pad = padding_of(raw)
            assert pad is not None and 0 <= pad <= MAX_PAD
            pads[pad] += 1
    total = sum(pads.values())
    assert set(pads) == set(range(MAX_PAD + 1))
    for k in range(MAX_PAD + 1):  # uniform: about 1 in 16 each
        assert abs(pads[k] / total - 1 / 16) < 0.02, (k, pads[k], total)


def test_raw_sse_is_parsed_and_its_padding_measured() -> None:
    text = ('event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            '"content":[],"usage":{"output_tokens":1}}   }\n\n'
            'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            '"content_block":{"type":"text","text":""}      }\n\n'
            'event: ping\ndata: {"type": "ping"}\n\n'
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            '"delta":{"type":"text_delta","text":"Hi"}}\n\n')
    events = parse_raw_sse(text)
    assert [n for n, _ in events] == ["message_start", "content_block_start", "ping",
                                      "content_block_delta"]
    assert [padding_of(r) for _, r in events] == [3, 6, None, 0]
    payloads = [json.loads(r) for _, r in events]
    shape = measure([(s, [r for _, r in events]) for s in split_streams(payloads)])
    assert shape.padding == Counter({0: 1, 3: 1, 6: 1})
    assert shape.first_ping["after start"] == 1
    table = shape_table({"live": shape, "simulator": StreamShape()})
    assert "| payloads padded | 2 (67 %) | raw bytes not kept |" in table


@pytest.mark.shared
def test_synthesized_envelope_matches_the_live_captures(shared_dir: Path) -> None:
    """The live messages of ../shared/real_traffic streamed again by the simulator: the share of
    each first-ping position and of streams with several pings is within 10 points of live."""
    root = shared_dir / "real_traffic"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    from simulator.fidelity_streams import live_and_simulated
    live, sim = live_and_simulated(root)
    assert live.streams == sim.streams > 100
    n_live, n_sim = sum(live.first_ping.values()), sum(sim.first_ping.values())
    for k in ("after start", "after 1 delta", "after 2 deltas", "none"):
        assert abs(live.first_ping[k] / n_live - sim.first_ping[k] / n_sim) < 0.10, k
    several = sum(v for k, v in live.ping_count.items() if k >= 2) / live.streams
    sim_several = sum(v for k, v in sim.ping_count.items() if k >= 2) / sim.streams
    assert abs(several - sim_several) < 0.10
