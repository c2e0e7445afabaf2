"""Validation throughput: content blocks validated per second, and how cost grows with length.

Blocks are a realistic mix (text, tool_use with caller, tool_result, server_tool_use, code
execution results). The growth measurement times the rule check of one request carrying a
conversation of N turns and reports the cost per turn: it must stay flat (linear total), not grow
with N (quadratic).
"""

from __future__ import annotations

import time
from typing import Any

from . import conversation

TARGET_BLOCKS_PER_SECOND = 50_000

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "Running the analysis now."},
    {"type": "tool_use", "id": "toolu_01A", "name": "query_database", "input": {"sql": "select 1"},
     "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_01B"}},
    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "[{\"n\": 1}]"},
    {"type": "server_tool_use", "id": "srvtoolu_01C", "name": "bash_code_execution",
     "input": {"command": "ls -la"}},
    {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_01C",
     "content": {"type": "bash_code_execution_result", "stdout": "a\n", "stderr": "",
                 "return_code": 0, "content": []}},
    {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_01D",
     "content": {"type": "text_editor_code_execution_tool_result_error",
                 "error_code": "file_not_found"}},
]


def _blocks_per_second(strict: bool, seconds: float = 1.0) -> float:
    from simulator.validation import validate

    for b in BLOCKS:  # compile validators outside the timed loop; prove the mix is valid
        assert not validate(b, "block", strict=strict), b
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b in BLOCKS:
            validate(b, "block", strict=strict)
        n += len(BLOCKS)
    return n / (time.perf_counter() - t0)


def _request_cost(turns: int, reps: int) -> float:
    """Seconds the engine spends on the last request of a ``turns``-exchange conversation.

    Full path: JSON parse, every rule, matching and serving (the request carries the whole
    history, as an agent loop sends it). Earlier requests are replayed untimed to build state.
    """
    import json

    from simulator.cassette import parse_cassette
    from simulator.engine import Simulator
    from simulator.http import SimRequest

    pairs = conversation.build(turns)
    cassette = parse_cassette(conversation.as_cassette(pairs, f"growth{turns}"))
    bodies = [json.dumps(req).encode() for req, _ in pairs]
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    total = 0.0
    for _ in range(reps):
        sim = Simulator(cassette)
        for body in bodies[:-1]:
            sim.handle(SimRequest("POST", "/v1/messages", headers, body=body))
        t0 = time.perf_counter()
        resp = sim.handle(SimRequest("POST", "/v1/messages", headers, body=bodies[-1]))
        total += time.perf_counter() - t0
        assert resp.status == 200, resp.body
    return total / reps


def measure() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for strict in (False, True):
        bps = _blocks_per_second(strict)
        rows.append({"section": "validation", "what": "blocks/s", "strict": strict,
                     "value": round(bps), "target": f">= {TARGET_BLOCKS_PER_SECOND}",
                     "met": bps >= TARGET_BLOCKS_PER_SECOND})
    _request_cost(10, 2)  # warm caches and compiled validators
    costs = {n: _request_cost(n, max(3, 200 // n)) for n in (10, 50, 200)}
    per_turn = {n: c / n for n, c in costs.items()}
    growth = per_turn[200] / per_turn[10]
    rows.append({"section": "validation", "what": "engine cost of the last request, per turn of history (us)",
                 "per_turn_us": {str(n): round(v * 1e6, 2) for n, v in per_turn.items()},
                 "growth_200_vs_10": round(growth, 2),
                 "target": "per-turn cost flat (growth <= 2.0)", "met": growth <= 2.0})
    return rows
