"""The simulation against the Managed Agents cassettes of the corpus: a session scripted from a
recording, driven with the recorded client events, emits the recorded sequence of events."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.cassette import Cassette, iter_corpus
from simulator.managed_agents import ManagedAgentsSimulator, scenario_from_cassette
from simulator.managed_agents import sessions as S

CORPUS = [c for c in iter_corpus() if c.family == "managed_agents"]


def recorded_agent_events(cassette: Cassette) -> list[dict[str, Any]]:
    return [e["data"] for ex in cassette.exchanges for e in ex.response.get("events") or []
            if isinstance(e.get("data"), dict)]


def sent_batches(cassette: Cassette) -> list[list[dict[str, Any]]]:
    """The events the recorded client sent, one list per request."""
    out = []
    for ex in cassette.exchanges:
        body = ex.request.get("body")
        if ex.request.get("method") == "POST" and isinstance(body, dict) and ex.response["status"] == 200:
            out.append([e for e in body.get("events") or [] if isinstance(e, dict)])
    return out


@pytest.mark.skipif(not CORPUS, reason="no Managed Agents cassettes in the corpus")
@pytest.mark.parametrize("cassette", CORPUS, ids=[c.id.rsplit("/", 1)[-1] for c in CORPUS])
def test_a_scripted_session_replays_the_recorded_event_sequence(cassette: Cassette) -> None:
    scenario = scenario_from_cassette(cassette)
    recorded = recorded_agent_events(cassette)
    assert [u.name for t in scenario.turns for u in t.tool_uses] == [
        e["name"] for e in recorded if e["type"] == "agent.custom_tool_use"]

    sim = ManagedAgentsSimulator()
    env = sim.create_environment()
    agent = sim.create_agent(cassette.tools)
    session = sim.create_session(scenario, agent=agent, environment_id=env.id)
    live = sim.session(session.id)
    ids: dict[str, str] = {}  # recorded custom_tool_use id -> simulated id, in emission order
    recorded_uses = [e["id"] for e in recorded if e["type"] == "agent.custom_tool_use"]
    with sim.store.lock:
        for batch in sent_batches(cassette):
            for n, sent in enumerate(batch):
                uses = [e["id"] for e in live.events if e["type"] == "agent.custom_tool_use"]
                ids.update(zip(recorded_uses, uses, strict=False))
                ev = dict(sent)
                if ev["type"] == "user.custom_tool_result":
                    ev["custom_tool_use_id"] = ids[ev["custom_tool_use_id"]]
                S.receive(sim.store, live, ev, settle_now=n == len(batch) - 1)
    simulated = [e["type"] for e in live.events if not e["type"].startswith("user.")]
    assert simulated == [e["type"] for e in recorded]
    rec_idle = [e["stop_reason"]["type"] for e in recorded if e["type"] == "session.status_idle"]
    assert [e["stop_reason"]["type"] for e in live.events
            if e["type"] == "session.status_idle"] == rec_idle


def test_corpus_scenarios_are_reachable_by_cassette_id_over_http() -> None:
    if not CORPUS:
        pytest.skip("no Managed Agents cassettes in the corpus")
    sim = ManagedAgentsSimulator()
    scenario = sim._scenario_named(CORPUS[0].id)
    assert scenario.name == CORPUS[0].id
