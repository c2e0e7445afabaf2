"""Broken worker: never heartbeats its work item, so the lease lapses mid-session."""

from __future__ import annotations

import asyncio
from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.lease.heartbeat_keeps_lease"


class NoHeartbeat(MinimalWorker):
    async def heartbeat(self, work_id: str, lost: asyncio.Event) -> None:
        await asyncio.Event().wait()


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await NoHeartbeat(client, environment_id, timeout=timeout).run()
