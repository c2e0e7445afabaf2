"""Broken worker: serves the first work item it gets, then stops polling."""

from __future__ import annotations

import asyncio
from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.sessions.served_in_turn"


class SingleSession(MinimalWorker):
    async def run(self) -> None:
        while True:
            item = await self.work.poll(self.environment_id, block_ms=999)
            if item is not None:
                break
        await self.work.ack(item.id, environment_id=self.environment_id)
        await self.handle(item.id, item.data.id)
        await asyncio.Event().wait()


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await SingleSession(client, environment_id, timeout=timeout).run()
