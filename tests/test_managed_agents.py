"""The Managed Agents simulation: sessions, events and the work API, judged by the SDK's types."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types.beta import BetaEnvironment, BetaManagedAgentsSession
from anthropic.types.beta.environments import (
    BetaHeartbeatPreconditionFailedErrorDetails,
    BetaSelfHostedWork,
    BetaSelfHostedWorkHeartbeatResponse,
    BetaSelfHostedWorkQueueStats,
)
from anthropic.types.beta.sessions import BetaManagedAgentsSessionEvent
from pydantic import TypeAdapter

from simulator.clock import FakeClock
from simulator.http import SimRequest, parse_query
from simulator.managed_agents import ManagedAgentsSimulator, Scenario, scenario_from_events
from simulator.managed_agents.stream import LiveEvents
from simulator.wire import sim_request

EVENT = TypeAdapter(BetaManagedAgentsSessionEvent)
ORDER_TOOL = {"type": "custom", "name": "get_order_status",
              "description": "Look up an order in the internal fulfillment system by order ID.",
              "input_schema": {"type": "object",
                               "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}
TWO_THEN_ONE = Scenario.of("two-then-one",
                           [("get_order_status", {"order_id": "1"}),
                            ("get_order_status", {"order_id": "2"})],
                           [("get_order_status", {"order_id": "3"})], final_text="All shipped.")


def _transport(sim: ManagedAgentsSimulator) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        url = request.url  # as the simulator's own transports turn a request into a SimRequest
        sim_req = sim_request(request.method, url.raw_path.split(b"?", 1)[0], url.query,
                              request.headers.raw, request.read())
        resp = sim(sim_req)
        return httpx2.Response(resp.status, headers=resp.headers, content=resp.body_bytes())
    return httpx2.MockTransport(handle)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sim(clock: FakeClock) -> ManagedAgentsSimulator:
    return ManagedAgentsSimulator(clock=clock)


def sdk(sim: ManagedAgentsSimulator, token: str = "sk-test") -> anthropic.Anthropic:
    return anthropic.Anthropic(auth_token=token, base_url="http://sim.test", max_retries=0,
                               http_client=httpx2.Client(transport=_transport(sim),
                                                         base_url="http://sim.test"))


def raw(sim: ManagedAgentsSimulator, method: str, path: str, body: Any = None,
        query: dict[str, str] | None = None, token: str | None = None,
        beta: bool = True) -> tuple[int, Any]:
    headers = {"anthropic-beta": "managed-agents-2026-04-01"} if beta else {}
    if token:
        headers["authorization"] = f"Bearer {token}"
    resp = sim(SimRequest(method, path, headers, query or {},
                          json.dumps(body).encode() if body is not None else b""))
    return resp.status, json.loads(resp.body_bytes() or b"null")


def setup(sim: ManagedAgentsSimulator, scenario: Scenario = TWO_THEN_ONE, ttl: int = 90):
    env = sim.create_environment("ci", lease_ttl_seconds=ttl)
    agent = sim.create_agent([{"type": "agent_toolset_20260401"}, ORDER_TOOL])
    session = sim.create_session(scenario, agent=agent, environment_id=env.id, start=True)
    return env, agent, session


def test_created_objects_have_the_sdk_shapes(sim: ManagedAgentsSimulator) -> None:
    client = sdk(sim)
    env = client.beta.environments.create(name="ci", config={"type": "self_hosted"})
    BetaEnvironment.model_validate(client.beta.environments.with_raw_response.retrieve(env.id).json())
    agent = client.beta.agents.create(name="a", model="claude-opus-5", tools=[ORDER_TOOL])
    session = client.beta.sessions.create(agent=agent.id, environment_id=env.id)
    assert session.status == "idle"
    raw_session = client.beta.sessions.with_raw_response.retrieve(session.id).json()
    BetaManagedAgentsSession.model_validate(raw_session)
    assert raw_session["agent"]["tools"][0]["name"] == "get_order_status"


def test_custom_tool_flow_partial_resolution_reemits_idle_with_the_remainder(
        sim: ManagedAgentsSimulator) -> None:
    env, _, session = setup(sim)
    client = sdk(sim)
    events = list(client.beta.sessions.events.list(session.id, limit=1000))
    kinds = [e.type for e in events]
    assert kinds == ["user.message", "session.status_running", "agent.custom_tool_use",
                     "agent.custom_tool_use", "session.status_idle"]
    uses = [e for e in events if e.type == "agent.custom_tool_use"]
    idle = events[-1]
    assert idle.stop_reason.type == "requires_action"
    assert idle.stop_reason.event_ids == [u.id for u in uses]

    sent = client.beta.sessions.events.send(session.id, events=[{
        "type": "user.custom_tool_result", "custom_tool_use_id": uses[0].id,
        "content": [{"type": "text", "text": "Order 1: shipped"}]}])
    assert sent.data[0].processed_at is not None
    latest = sim.session(session.id).events[-1]
    assert latest["type"] == "session.status_idle"
    assert latest["stop_reason"] == {"type": "requires_action", "event_ids": [uses[1].id]}

    client.beta.sessions.events.send(session.id, events=[{
        "type": "user.custom_tool_result", "custom_tool_use_id": uses[1].id, "is_error": True,
        "content": [{"type": "text", "text": "lookup failed"}]}])
    s = sim.session(session.id)
    assert [e["type"] for e in s.events[-3:]] == ["session.status_running",
                                                  "agent.custom_tool_use", "session.status_idle"]
    third = s.events[-2]["id"]
    client.beta.sessions.events.send(session.id, events=[{
        "type": "user.custom_tool_result", "custom_tool_use_id": third,
        "content": [{"type": "text", "text": "Order 3: shipped"}]}])
    assert s.events[-1]["stop_reason"] == {"type": "end_turn"}
    assert s.events[-2]["content"][0]["text"] == "All shipped."
    for ev in raw(sim, "GET", f"/v1/sessions/{session.id}/events",
                  query={"limit": "1000"})[1]["data"]:
        EVENT.validate_python(ev)


def test_events_list_pages_with_next_page(sim: ManagedAgentsSimulator) -> None:
    _, _, session = setup(sim)
    status, page = raw(sim, "GET", f"/v1/sessions/{session.id}/events", query={"limit": "2"})
    assert status == 200 and len(page["data"]) == 2 and page["next_page"] == "2"
    ids = [e.id for e in sdk(sim).beta.sessions.events.list(session.id, limit=2)]
    assert len(ids) == len(sim.session(session.id).events) == len(set(ids))


def test_events_list_keeps_every_type_the_sdk_sends(sim: ManagedAgentsSimulator) -> None:
    """The SDK sends a list parameter as ``types[]=a&types[]=b`` (2.17's session runner reads
    its history so): every type named is kept, not the last one alone."""
    _, _, session = setup(sim)
    kinds = ["agent.custom_tool_use", "session.status_idle"]
    listed = [e.type for e in sdk(sim).beta.sessions.events.list(session.id, types=kinds)]
    assert listed == ["agent.custom_tool_use", "agent.custom_tool_use", "session.status_idle"]
    one = [e.type for e in sdk(sim).beta.sessions.events.list(session.id, types=kinds[1:])]
    assert one == ["session.status_idle"]
    # the worker checks' request log (and so a reproducer) shows both values
    logged = [r.query for r in sim.store.log if r.path.endswith("/events")]
    assert logged[0] == {"types[]": kinds}


def test_a_query_parameter_sent_twice_keeps_both_values() -> None:
    query, repeated = parse_query("types%5B%5D=a&limit=5&types%5B%5D=b&empty=")
    assert query == {"types[]": "b", "limit": "5", "empty": ""}
    assert repeated == {"types[]": ["a", "b"]}
    request = SimRequest("GET", "/", {}, query, b"", repeated)
    assert request.query_values("types[]") == ["a", "b"]
    assert request.query_values("limit") == ["5"] and request.query_values("page") == []
    assert request.query_record() == {"types[]": ["a", "b"], "limit": "5", "empty": ""}
    assert parse_query("a=1&b=2") == ({"a": "1", "b": "2"}, {})


@pytest.mark.parametrize("case", ["unknown", "twice", "not_a_result_block"])
def test_bad_results_are_refused_under_their_rule(sim: ManagedAgentsSimulator, case: str) -> None:
    _, _, session = setup(sim)
    use = next(e for e in sim.session(session.id).events if e["type"] == "agent.custom_tool_use")
    result = {"type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
              "content": [{"type": "text", "text": "ok"}]}
    path = f"/v1/sessions/{session.id}/events"
    if case == "unknown":
        result["custom_tool_use_id"] = "sevt_nope"
        rule = "managed_agents.custom_tool_result.answers_pending_use"
    elif case == "twice":
        assert raw(sim, "POST", path, {"events": [result]})[0] == 200
        rule = "managed_agents.custom_tool_result.answered_once"
    else:
        result["content"] = [{"type": "tool_reference", "tool_name": "x"}]
        rule = "managed_agents.events.schema"
    status, body = raw(sim, "POST", path, {"events": [result]})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    assert body["request_id"].startswith("req_")
    assert sim.violations[-1].rule == rule
    assert sim.violations[-1].request["body"] == {"events": [result]}


def test_missing_beta_header_and_wrong_key_are_refused(sim: ManagedAgentsSimulator) -> None:
    env, _, _ = setup(sim)
    status, _ = raw(sim, "GET", f"/v1/environments/{env.id}/work/poll", token=env.key, beta=False)
    assert status == 400 and sim.violations[-1].rule == "managed_agents.beta_header_required"
    status, body = raw(sim, "GET", f"/v1/environments/{env.id}/work/poll", token="wrong")
    assert status == 401 and body["error"]["type"] == "authentication_error"
    assert sim.violations[-1].rule == "work.auth.environment_key"


@pytest.mark.parametrize("block_ms", ["0", "1000", "x"])
def test_poll_block_ms_out_of_range_is_refused(sim: ManagedAgentsSimulator, block_ms: str) -> None:
    env, _, _ = setup(sim)
    status, _ = raw(sim, "GET", f"/v1/environments/{env.id}/work/poll",
                    query={"block_ms": block_ms}, token=env.key)
    assert status == 400 and sim.violations[-1].rule == "work.poll.block_ms_range"


def test_work_lifecycle_through_the_sdk(sim: ManagedAgentsSimulator, clock: FakeClock) -> None:
    env, _, session = setup(sim, ttl=30)
    work = sdk(sim, env.key).beta.environments.work
    item = work.poll(env.id, block_ms=5, anthropic_worker_id="w1")
    assert item is not None and item.data.id == session.id and item.state == "queued"
    assert work.poll(env.id, block_ms=1) is None  # handed out, not yet reclaimable
    acked = work.ack(item.id, environment_id=env.id)
    assert acked.state == "starting" and acked.acknowledged_at
    beat = work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat="NO_HEARTBEAT")
    assert beat.lease_extended and beat.state == "active" and beat.ttl_seconds == 30
    clock.advance(10)
    beat2 = work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat=beat.last_heartbeat)
    assert beat2.last_heartbeat > beat.last_heartbeat
    stats = raw(sim, "GET", f"/v1/environments/{env.id}/work/stats", token=env.key)[1]
    BetaSelfHostedWorkQueueStats.model_validate(stats)
    assert stats["pending"] == 1 and stats["depth"] == 0 and stats["workers_polling"] == 1
    for w in raw(sim, "GET", f"/v1/environments/{env.id}/work", token=env.key)[1]["data"]:
        BetaSelfHostedWork.model_validate(w)
    stopped = work.stop(item.id, environment_id=env.id, force=True)
    assert stopped.state == "stopped" and stopped.stopped_at
    with pytest.raises(anthropic.ConflictError):
        work.stop(item.id, environment_id=env.id)


def test_stale_heartbeat_gets_412_with_the_current_state(sim: ManagedAgentsSimulator) -> None:
    env, _, _ = setup(sim)
    work = sdk(sim, env.key).beta.environments.work
    item = work.poll(env.id)
    assert item is not None
    work.ack(item.id, environment_id=env.id)
    beat = work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat="NO_HEARTBEAT")
    sim.take_lease(item.id)
    with pytest.raises(anthropic.APIStatusError) as err:
        work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat=beat.last_heartbeat)
    assert err.value.status_code == 412
    assert err.value.error_code == "heartbeat_precondition_failed"
    details = BetaHeartbeatPreconditionFailedErrorDetails.model_validate(
        err.value.body["error"]["details"])  # type: ignore[index]
    assert details.current_state.lease_extended is False
    assert details.current_state.last_heartbeat != beat.last_heartbeat


def test_expired_lease_requeues_the_item(sim: ManagedAgentsSimulator, clock: FakeClock) -> None:
    env, _, _ = setup(sim, ttl=20)
    work = sdk(sim, env.key).beta.environments.work
    item = work.poll(env.id)
    assert item is not None
    work.ack(item.id, environment_id=env.id)
    beat = work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat="NO_HEARTBEAT")
    clock.advance(21)
    again = work.poll(env.id)
    assert again is not None and again.id == item.id and again.state == "queued"
    with pytest.raises(anthropic.APIStatusError) as err:
        work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat=beat.last_heartbeat)
    assert err.value.status_code == 412
    assert sim.work_items()[0].leases_lost == 1


def test_stopping_item_answers_heartbeat_without_lease(sim: ManagedAgentsSimulator) -> None:
    env, _, session = setup(sim)
    work = sdk(sim, env.key).beta.environments.work
    item = work.poll(env.id)
    assert item is not None
    work.ack(item.id, environment_id=env.id)
    sim.archive(session.id)
    beat = work.heartbeat(item.id, environment_id=env.id, expected_last_heartbeat="anything")
    BetaSelfHostedWorkHeartbeatResponse.model_validate(beat.model_dump())
    assert beat.state == "stopping" and beat.lease_extended is False


def test_live_stream_delivers_new_events_and_ends_on_termination(
        sim: ManagedAgentsSimulator) -> None:
    _, _, session = setup(sim)
    stream = LiveEvents(sim.store, session.id)
    sim.archive(session.id)
    assert [e.event for e in stream] == ["session.status_terminated"]
    closed = LiveEvents(sim.store, session.id)
    closed.close()
    assert list(closed) == []


def test_agent_declarations_are_checked_on_create(sim: ManagedAgentsSimulator) -> None:
    status, body = raw(sim, "POST", "/v1/agents", {"name": "a", "model": "claude-opus-5", "tools": [
        dict(ORDER_TOOL, name="mcp__orders")]})
    assert status == 400 and "reserved prefix" in body["error"]["message"]
    assert sim.violations[-1].rule == "managed_agents.custom_tool.declaration"


def test_scenario_from_recorded_events() -> None:
    events = [
        {"type": "agent.message", "content": [{"type": "text", "text": "Looking."}]},
        {"type": "agent.custom_tool_use", "id": "a", "name": "t", "input": {"x": 1}},
        {"type": "agent.custom_tool_use", "id": "b", "name": "u", "input": {}},
        {"type": "session.status_idle", "stop_reason": {"type": "requires_action",
                                                        "event_ids": ["a", "b"]}},
        {"type": "user.custom_tool_result", "custom_tool_use_id": "a"},
        {"type": "session.status_idle", "stop_reason": {"type": "requires_action",
                                                        "event_ids": ["b"]}},
        {"type": "agent.message", "content": [{"type": "text", "text": "Bye."}]},
        {"type": "session.status_idle", "stop_reason": {"type": "end_turn"}},
    ]
    sc = scenario_from_events("rec", events)
    assert [[u.name for u in t.tool_uses] for t in sc.turns] == [["t", "u"]]
    assert sc.turns[0].text == "Looking." and sc.final_text == "Bye."


def test_two_results_for_one_use_in_one_request_are_refused(sim: ManagedAgentsSimulator) -> None:
    _, _, session = setup(sim)
    use = next(e for e in sim.session(session.id).events if e["type"] == "agent.custom_tool_use")
    result = {"type": "user.custom_tool_result", "custom_tool_use_id": use["id"]}
    status, _ = raw(sim, "POST", f"/v1/sessions/{session.id}/events", {"events": [result, result]})
    assert status == 400
    assert sim.violations[-1].rule == "managed_agents.custom_tool_result.answered_once"
    assert use["id"] not in sim.session(session.id).results  # nothing of the batch was applied


@pytest.mark.parametrize("body", [b"{", b"[1]", b'{"events": ' + b"[" * 5000 + b"]" * 5000 + b"}"])
def test_hostile_bodies_get_api_shaped_4xx(sim: ManagedAgentsSimulator, body: bytes) -> None:
    _, _, session = setup(sim)
    resp = sim(SimRequest("POST", f"/v1/sessions/{session.id}/events",
                          {"anthropic-beta": "managed-agents-2026-04-01"}, {}, body))
    assert 400 <= resp.status < 500
    assert json.loads(resp.body_bytes())["type"] == "error"


def test_a_long_poll_returns_work_queued_while_it_waits() -> None:
    import threading

    sim = ManagedAgentsSimulator()
    env = sim.create_environment()
    agent = sim.create_agent([ORDER_TOOL])
    threading.Timer(0.05, lambda: sim.create_session(TWO_THEN_ONE, agent=agent,
                                                     environment_id=env.id)).start()
    status, item = raw(sim, "GET", f"/v1/environments/{env.id}/work/poll",
                       query={"block_ms": "999"}, token=env.key)
    assert status == 200 and item is not None and item["state"] == "queued"


def test_without_long_polls_an_empty_poll_asks_the_transport_to_wait() -> None:
    sim = ManagedAgentsSimulator(long_poll=False)
    env = sim.create_environment()
    resp = sim(SimRequest("GET", f"/v1/environments/{env.id}/work/poll",
                          {"anthropic-beta": "managed-agents-2026-04-01",
                           "authorization": f"Bearer {env.key}"}, {"block_ms": "250"}))
    assert resp.status == 200 and resp.body_bytes() == b"null" and resp.delay == 0.25


def test_system_message_while_waiting_needs_a_result_first(sim: ManagedAgentsSimulator) -> None:
    _, _, session = setup(sim)
    use = next(e for e in sim.session(session.id).events if e["type"] == "agent.custom_tool_use")
    note = {"type": "system.message", "content": [{"type": "text", "text": "fyi"}]}
    result = {"type": "user.custom_tool_result", "custom_tool_use_id": use["id"]}
    path = f"/v1/sessions/{session.id}/events"
    assert raw(sim, "POST", path, {"events": [note, result]})[0] == 400
    assert sim.violations[-1].rule == "managed_agents.system_message.after_tool_result"
    assert raw(sim, "POST", path, {"events": [result, note]})[0] == 200
