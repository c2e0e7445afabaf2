"""Fault injection: API-shaped errors, retries get the exchange, drops, slow and stalled
responses, mid-stream errors, seeded rates, and the SDK's retry logic against them."""

from __future__ import annotations

from typing import Any

import pytest
from _simkit import (
    WEATHER,
    body,
    cassette,
    error_of,
    exchange,
    message,
    post,
    record_sleeps,
    sdk_client,
    text,
    user,
)

from simulator.clock import FakeClock
from simulator.engine import Simulator
from simulator.faults import Fault, FaultPlan
from simulator.sse import StreamError, assemble_message

B = body([user("Weather?")], tools=[WEATHER])
R = message([text("It is sunny in Paris today, with a light breeze from the west.")])


def sim_with(plan: FaultPlan, **kw: Any) -> Simulator:
    return Simulator(cassette(exchange(B, R), exchange(B, message([text("again")], id="msg_2"))),
                     faults=plan, **kw)


@pytest.mark.parametrize("kind,status,etype", [
    ("rate_limit", 429, "rate_limit_error"), ("api_error", 500, "api_error"),
    ("overloaded", 529, "overloaded_error"), ("request_too_large", 413, "request_too_large"),
])
def test_error_faults_are_api_shaped_and_do_not_consume_the_exchange(
        kind: Any, status: int, etype: str) -> None:
    sim = sim_with(FaultPlan(at={0: Fault(kind)}))
    r = sim(post(B))
    got = error_of(r)
    assert got[:2] == (status, etype) and got[2]
    assert r.headers["request-id"] == r.body["request_id"]
    assert ("retry-after" in r.headers) == (kind == "rate_limit")
    assert sim.log[-1].kind == "fault_injected" and sim.faults_injected[-1].fault == kind
    retry = sim(post(B))
    assert retry.status == 200 and retry.body["id"] == "msg_01"
    assert [e.exchange_index for e in sim.served] == [0]


def test_a_list_of_faults_is_met_attempt_by_attempt() -> None:
    sim = sim_with(FaultPlan(at={1: [Fault("overloaded", retry_after=2), Fault("rate_limit", retry_after=0.5)]}))
    assert sim(post(B)).status == 200
    r1, r2, r3 = sim(post(B)), sim(post(B)), sim(post(B))
    assert (r1.status, r1.headers["retry-after"]) == (529, "2")
    assert (r2.status, r2.headers["retry-after"]) == (429, "0.5")
    assert (r3.status, r3.body["id"]) == (200, "msg_2") and sim.done


def test_drop_before_the_body_and_after_n_stream_events() -> None:
    sim = sim_with(FaultPlan(at={0: [Fault("drop"), Fault("drop", after_events=3)]}))
    r = sim(post(B))
    assert r.drop_after == 0
    rs = sim(post({**B, "stream": True}))
    assert rs.is_stream and rs.drop_after == 3
    assert not sim.served
    assert sim(post(B)).status == 200


def test_slow_response_is_served_late_and_consumed_and_a_timed_out_retry_gets_it_again() -> None:
    sim = sim_with(FaultPlan(at={0: Fault("slow", delay=7.5)}))
    r = sim(post(B))
    assert (r.status, r.delay) == (200, 7.5)
    again = sim(post(B))  # the client timed out and retried the same request
    assert again.status == 200 and again.body["id"] == "msg_01" and again.delay == 0
    assert [e.replayed for e in sim.served] == [False, True]
    nxt = sim(post(B))
    assert nxt.body["id"] == "msg_2" and sim.done


def test_stalled_stream_waits_on_the_clock_then_drops() -> None:
    clock = FakeClock()
    start = clock.now()
    sim = sim_with(FaultPlan(at={0: Fault("stall", after_events=2, stall_seconds=45)}), clock=clock)
    r = sim(post({**B, "stream": True}))
    assert r.drop_after == 2 and clock.now() == start  # nothing happens until the body is read
    events = list(r.events or [])
    assert [e.event for e in events] == ["message_start", "content_block_start"]  # ping after it
    assert (clock.now() - start).total_seconds() == 45
    assert not sim.served and sim(post(B)).status == 200


def test_stalled_plain_response_is_a_long_delay_then_a_drop() -> None:
    sim = sim_with(FaultPlan(at={0: Fault("stall", stall_seconds=60)}))
    r = sim(post(B))
    assert (r.delay, r.drop_after) == (60, 0)


def test_mid_stream_error_event_and_plain_request_fallback() -> None:
    sim = sim_with(FaultPlan(at={0: [Fault("stream_error", after_events=4), Fault("stream_error")]}))
    r = sim(post({**B, "stream": True}))
    events = list(r.events or [])
    assert r.status == 200 and events[-1].event == "error" and len(events) == 5
    assert events[-1].data == {"type": "error", "error": {"type": "overloaded_error",
                                                          "message": "Overloaded"}}
    with pytest.raises(StreamError):
        assemble_message(events)
    assert error_of(sim(post(B)))[:2] == (529, "overloaded_error")
    assert sim(post(B)).status == 200


def test_rates_are_reproducible_by_seed() -> None:
    def statuses(seed: int) -> list[int]:
        plan = FaultPlan(rates={"overloaded": 0.3, "rate_limit": 0.3}, seed=seed)
        sim = Simulator(cassette(*[exchange(B, R) for _ in range(30)]), faults=plan)
        return [sim(post(B)).status for _ in range(40)]
    a, b = statuses(7), statuses(7)
    assert a == b and {429, 529, 200} <= set(a)
    assert statuses(8) != a


def test_fault_plan_validation() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("boom")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="within"):
        FaultPlan(rates={"overloaded": 2.0})


def test_sdk_retries_honouring_retry_after_and_529(monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic._base_client as base
    sleeps = record_sleeps(monkeypatch, base.time)
    plan = FaultPlan(at={0: [Fault("rate_limit", retry_after=3), Fault("overloaded", retry_after=1)]})
    sim = sim_with(plan)
    client = sdk_client(sim, max_retries=2)
    msg = client.messages.create(model=B["model"], max_tokens=1024, messages=B["messages"],
                                 tools=B["tools"])
    assert msg.id == "msg_01"
    assert sleeps == [3.0, 1.0]
    assert [e.fault for e in sim.faults_injected] == ["rate_limit", "overloaded"]
