"""Broken worker: flags failures as errors but says nothing about what failed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_result.error_explains_failure"


class SilentError(MinimalWorker):
    async def call(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        text, is_error = await super().call(name, tool_input)
        return ("error" if is_error else text), is_error


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await SilentError(client, environment_id, timeout=timeout).run()
