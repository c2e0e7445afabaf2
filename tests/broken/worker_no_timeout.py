"""Broken worker: waits for every tool forever (no timeout), so a hung tool hangs the session."""

from __future__ import annotations

from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_use.timeout_becomes_error"


class NoTimeout(MinimalWorker):
    timeout = None


async def serve(client: Any, environment_id: str, environment_key: str) -> None:
    await NoTimeout(client, environment_id).run()
