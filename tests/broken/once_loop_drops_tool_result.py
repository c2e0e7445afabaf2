"""Answers only the first tool_use of a turn (as loop_drops_tool_result.py) in its first run
only: the first client it is handed (one per scenario run) gets the broken loop, every later one
the reference loop. Its ``loop.client_tools.several_per_turn`` failure is real, but driven again
on a fresh loop it passes: the report must say "did not reproduce" (tests/test_rechecks.py,
which loads a fresh copy of this file per test). Not a ``loop_*`` subject: it does not fail the
same way twice."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

#: The first client seen (kept, so that no later client can reuse its id).
FIRST: list[Any] = []


class DropsToolResult(ReferenceLoop):
    def add_results(self, results: list[dict[str, Any]]) -> None:
        super().add_results(results[:1])


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    if not FIRST:
        FIRST.append(client)
    kind = DropsToolResult if client is FIRST[0] else ReferenceLoop
    return kind(client, params, run_tool).run()
