"""A long-running ``tooluse serve`` keeps the Managed Agents request log bounded (issue 9)."""

from __future__ import annotations

from simulator.cassette import iter_corpus
from simulator.http import SimRequest
from simulator.managed_agents import ManagedAgentsSimulator
from simulator.routes import build


def test_request_log_is_trimmed_and_seq_keeps_counting() -> None:
    sim = ManagedAgentsSimulator(log_limit=5)
    for _ in range(12):
        sim(SimRequest("GET", "/v1/sessions/sess_nope/events", {}))
    assert len(sim.log) == 5
    assert [r.seq for r in sim.log] == list(range(7, 12))
    assert len(sim.violations) <= 5


def test_routes_build_passes_the_engine_log_limit_to_managed_agents() -> None:
    corpus = [c for c in iter_corpus() if c.family == "bash"][:1]
    routes = build(corpus, log_limit=3)
    for _ in range(10):
        routes(SimRequest("GET", "/v1/sessions/sess_nope", {}))
    mounted = {id(h): h for _, h in routes.mounts}
    sims = [h for h in mounted.values() if isinstance(h, ManagedAgentsSimulator)]
    assert sims and all(len(s.log) <= 3 for s in sims)
