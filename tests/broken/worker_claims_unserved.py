"""Broken worker: answers tools it does not serve with a "not implemented" error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_use.unserved_left_pending"


class ClaimsUnserved(MinimalWorker):
    def serves(self, name: str) -> bool:
        return True

    async def call(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        if name not in self.served:
            return f"{name} is not implemented", True
        return await super().call(name, tool_input)


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await ClaimsUnserved(client, environment_id, timeout=timeout).run()
