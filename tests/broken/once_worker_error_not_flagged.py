"""Sends a failed tool's message as an ordinary result (as worker_error_not_flagged.py) in its
first run only: the first client it is handed (one per worker run) gets the broken worker, every
later one the minimal worker. Its ``worker.custom_tool_result.failure_is_error`` failure is
real, but run again with a fresh worker the check passes: the report must say "did not
reproduce" (tests/test_rechecks.py, which loads a fresh copy of this file per test). Not a
``worker_*`` subject: it does not fail the same way twice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.workers.minimal import MinimalWorker

#: The first client seen (kept, so that no later client can reuse its id).
FIRST: list[Any] = []


class ErrorNotFlagged(MinimalWorker):
    async def call(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        text, _ = await super().call(name, tool_input)
        return text, False


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    if not FIRST:
        FIRST.append(client)
    kind = ErrorNotFlagged if client is FIRST[0] else MinimalWorker
    await kind(client, environment_id, timeout=timeout).run()
