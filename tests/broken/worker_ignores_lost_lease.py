"""Broken worker: shrugs off a 412 heartbeat and keeps serving the session."""

from __future__ import annotations

from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.lease.lost_lease_stops_work"


class IgnoresLostLease(MinimalWorker):
    async def on_lease_lost(self, work_id: str) -> bool:
        return False


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await IgnoresLostLease(client, environment_id, timeout=timeout).run()
