"""Broken worker: posts every result twice."""

from __future__ import annotations

from typing import Any

from conformance.workers.minimal import MinimalWorker

BREAKS = "worker.custom_tool_use.answered_once"


class AnswersTwice(MinimalWorker):
    def result_events(self, use: Any, text: str, is_error: bool) -> list[dict[str, Any]]:
        return super().result_events(use, text, is_error) * 2


async def serve(client: Any, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    await AnswersTwice(client, environment_id, timeout=timeout).run()
