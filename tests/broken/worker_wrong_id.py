"""Broken worker: answers with the tool's name where the custom_tool_use_id belongs."""

from __future__ import annotations

from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_use.answered_once"


class WrongId(MinimalWorker):
    def result_events(self, use: Any, text: str, is_error: bool) -> list[dict[str, Any]]:
        return [dict(ev, custom_tool_use_id=use.name)
                for ev in super().result_events(use, text, is_error)]


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await WrongId(client, environment_id, timeout=timeout).run()
