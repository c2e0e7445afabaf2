"""How the benchmarks reach the simulator (kept in one place so a rename touches one file)."""

from __future__ import annotations

import anthropic
import httpx2

from simulator.cassette import Cassette


def simulator_client(cassette: Cassette) -> anthropic.Anthropic:
    from simulator.engine import Simulator
    from simulator.transports.httpx2_transport import SimulatorTransport

    transport = SimulatorTransport(Simulator(cassette))
    return anthropic.Anthropic(api_key="placeholder-not-a-key", max_retries=0,
                               http_client=httpx2.Client(transport=transport))
