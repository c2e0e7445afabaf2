"""Properties of the session flow: however results are batched, the session idles with exactly
the tool uses still pending, and ends its turn once the script is done."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.clock import FakeClock
from simulator.managed_agents import ManagedAgentsSimulator, Scenario
from simulator.managed_agents import sessions as S

turns = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=4)


@settings(max_examples=30, deadline=None)
@given(turns=turns, data=st.data())
def test_any_batching_of_results_keeps_requires_action_exact(turns: list[int],
                                                             data: st.DataObject) -> None:
    sim = ManagedAgentsSimulator(clock=FakeClock())
    env = sim.create_environment()
    agent = sim.create_agent([])
    scenario = Scenario.of("p", *[[("t", {"i": i}) for i in range(n)] for n in turns])
    session = sim.create_session(scenario, agent=agent, environment_id=env.id, start=True)
    live = sim.session(session.id)
    for _ in turns:
        pending = list(live.pending)
        assert live.stop_reason == {"type": "requires_action", "event_ids": pending}
        order = data.draw(st.permutations(pending))
        while order:
            k = data.draw(st.integers(min_value=1, max_value=len(order)))
            batch, order = order[:k], order[k:]
            with sim.store.lock:
                for n, use_id in enumerate(batch):
                    S.receive(sim.store, live, {"type": "user.custom_tool_result",
                                                "custom_tool_use_id": use_id},
                              settle_now=n == len(batch) - 1)
            if order:  # the remainder, in the order the agent emitted them
                remainder = [u for u in pending if u in order]
                assert live.stop_reason == {"type": "requires_action", "event_ids": remainder}
    assert live.finished and live.stop_reason == {"type": "end_turn"}
    uses = [e["id"] for e in live.events if e["type"] == "agent.custom_tool_use"]
    assert len(uses) == sum(turns) and set(live.results) == set(uses)
