"""``Simulator(replay="repeat")``: already-served exchanges are served again, statelessly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from simulator.cassette import parse_cassette
from simulator.engine import Simulator
from simulator.http import SimRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package
from benchmarks import conversation  # noqa: E402

HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01",
           "x-api-key": "test-key"}


def _sim(replay: str = "once", turns: int = 3) -> tuple[Simulator, list[bytes]]:
    pairs = conversation.build(turns)
    cassette = parse_cassette(conversation.as_cassette(pairs, "repeat"))
    return Simulator(cassette, replay=replay), [json.dumps(r).encode() for r, _ in pairs]


def _post(sim: Simulator, body: bytes) -> tuple[int, object]:
    resp = sim.handle(SimRequest("POST", "/v1/messages", HEADERS, body=body))
    return resp.status, resp.body


def test_once_refuses_a_request_for_an_exchange_already_served() -> None:
    sim, bodies = _sim()
    assert _post(sim, bodies[0])[0] == 200
    status, body = _post(sim, bodies[0])
    assert status == 400
    assert "does not match exchange 1" in json.dumps(body)


def test_repeat_serves_the_same_first_request_again_without_moving_on() -> None:
    sim, bodies = _sim("repeat")
    first = _post(sim, bodies[0])
    again = [_post(sim, bodies[0]) for _ in range(5)]
    assert first[0] == 200 and all(a == first for a in again)
    served = sim.served
    assert [s.repeated for s in served] == [False] + [True] * 5
    assert all(s.exchange_index == 0 for s in served)
    assert len(sim.remaining()) == 2  # exchanges 1 and 2 still to serve
    assert _post(sim, bodies[1])[0] == 200  # the conversation goes on where it was
    assert sim.served[-1].exchange_index == 1 and not sim.served[-1].repeated


def test_repeat_after_the_whole_cassette_serves_any_exchange_and_learns_nothing() -> None:
    sim, bodies = _sim("repeat")
    for b in bodies:
        assert _post(sim, b)[0] == 200
    assert sim.done
    pending = dict(sim.state.pending_calls)
    for i in (1, 0, 2, 1):
        status, body = _post(sim, bodies[i])
        assert status == 200 and isinstance(body, dict)
        assert body["id"] == f"msg_01Bench{i:04d}"
        assert sim.served[-1].repeated and sim.served[-1].exchange_index == i
    assert sim.state.pending_calls == pending


def test_repeat_still_refuses_what_matches_nothing_and_still_runs_rules() -> None:
    sim, bodies = _sim("repeat")
    _post(sim, bodies[0])
    other = json.loads(bodies[0])
    other["model"] = "claude-haiku-4-5"
    status, body = _post(sim, json.dumps(other).encode())
    assert status == 400 and "matcher `model`" in json.dumps(body)
    broken = json.loads(bodies[1])
    broken["messages"][-1]["content"][0]["tool_use_id"] = "toolu_unknown"
    status, body = _post(sim, json.dumps(broken).encode())
    assert status == 400
    assert sim.violations[-1].rule_id.startswith("messages.")


def test_replay_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="repeat"):
        _sim("twice")


def test_serve_parser_has_repeat() -> None:
    import argparse

    from conformance.cli import serve

    sub = argparse.ArgumentParser().add_subparsers()
    p = serve.add_parser(sub, "serve")
    assert p.parse_args(["x.json", "--repeat"]).repeat is True
    assert p.parse_args(["x.json"]).repeat is False
