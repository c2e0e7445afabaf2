"""Broken worker: sends a failed tool's message as an ordinary (non-error) result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_result.failure_is_error"


class ErrorNotFlagged(MinimalWorker):
    async def call(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        text, _ = await super().call(name, tool_input)
        return text, False


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await ErrorNotFlagged(client, environment_id, timeout=timeout).run()
