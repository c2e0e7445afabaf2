"""How the benchmarks reach the simulator (kept in one place so a rename touches one file)."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx2

from simulator.cassette import Cassette


def simulator_client(cassette: Cassette | Path) -> anthropic.Anthropic:
    """An SDK client served by a new simulator over ``cassette`` (a file: ``from_path``)."""
    from simulator.engine import Simulator
    from simulator.transports.httpx2_transport import SimulatorTransport

    sim = Simulator.from_path(cassette) if isinstance(cassette, Path) else Simulator(cassette)
    transport = SimulatorTransport(sim)
    return anthropic.Anthropic(api_key="placeholder-not-a-key", max_retries=0,
                               http_client=httpx2.Client(transport=transport))
