"""Validation throughput: content blocks validated per second, and how cost grows with length.

Blocks are a realistic mix (text, tool_use with caller, tool_result, server_tool_use, code
execution results). The growth measurement times the engine on one request carrying a
conversation of N turns, judged from scratch (cold) and after the earlier requests were replayed
(warm), and reports the cost per turn: it must stay flat (linear total) or fall, not grow with N
(quadratic). Times are this process's CPU time.
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
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for b in BLOCKS:
            validate(b, "block", strict=strict)
        n += len(BLOCKS)
    return n / (time.process_time() - t0)


def _request_cost(turns: int, reps: int, *, warm: bool) -> float:
    """CPU seconds the engine spends on the last request of a ``turns``-exchange conversation
    (median of ``reps``).

    Full path: JSON parse, depth, every default rule (``request.schema`` included), matching,
    serving, state update; the request carries the whole history, as an agent loop sends it.
    ``warm``: the earlier requests were replayed first (untimed), as in a replayed conversation,
    so the engine knows the history (:mod:`simulator.history`). Cold: a fresh engine whose
    cassette starts at that request judges all of it.
    """
    import json
    import statistics

    from simulator.cassette import parse_cassette
    from simulator.engine import Simulator
    from simulator.history import clear_facts
    from simulator.http import SimRequest

    pairs = conversation.build(turns)
    cassette = parse_cassette(conversation.as_cassette(pairs if warm else pairs[-1:],
                                                       f"growth{turns}"))
    bodies = [json.dumps(req).encode() for req, _ in pairs]
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01",
               "x-api-key": "bench-key"}
    samples = []
    for _ in range(reps):
        clear_facts()  # nothing known from earlier repetitions
        sim = Simulator(cassette)
        for body in bodies[:-1] if warm else []:
            sim.handle(SimRequest("POST", "/v1/messages", headers, body=body))
        t0 = time.process_time()
        resp = sim.handle(SimRequest("POST", "/v1/messages", headers, body=bodies[-1]))
        samples.append(time.process_time() - t0)
        assert resp.status == 200, resp.body
    return statistics.median(samples)


def measure(smoke: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for strict in (False, True):
        bps = _blocks_per_second(strict, 0.1 if smoke else 1.0)
        rows.append({"section": "validation", "what": "blocks/s", "strict": strict,
                     "value": round(bps), "target": f">= {TARGET_BLOCKS_PER_SECOND}",
                     "met": bps >= TARGET_BLOCKS_PER_SECOND})
    sizes = (5, 10, 20) if smoke else (10, 50, 200)
    _request_cost(sizes[0], 2, warm=True)  # warm caches and compiled validators
    for warm in (False, True):
        costs = {n: _request_cost(n, 1 if smoke else max(5, 400 // n), warm=warm) for n in sizes}
        per_turn = {n: c / n for n, c in costs.items()}
        growth = per_turn[sizes[-1]] / per_turn[sizes[0]]
        row: dict[str, Any] = {
            "section": "validation",
            "what": "engine CPU time of the last request, per turn of history (us), "
                    + ("after replaying the earlier requests (warm)" if warm
                       else "judged from scratch (cold)"),
            "per_turn_us": {str(n): round(v * 1e6, 2) for n, v in per_turn.items()},
            "request_us": {str(n): round(v * 1e6, 1) for n, v in costs.items()},
            f"growth_{sizes[-1]}_vs_{sizes[0]}": round(growth, 2),
            "target": "per-turn cost flat or falling (growth <= 2.0): no quadratic cost",
            "met": growth <= 2.0}
        rows.append(row)
    return rows
