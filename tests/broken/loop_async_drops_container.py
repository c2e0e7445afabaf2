"""Broken async loop (receives the async client): drops the container on the follow-up of a
turn with a pending server tool."""

from __future__ import annotations

from typing import Any

BREAKS = ("loop.ptc.several_pauses", "ptc.container.required")


async def loop(client: Any, params: dict[str, Any]) -> Any:
    messages = list(params["messages"])
    base = {k: v for k, v in params.items() if k != "messages"}
    while True:
        message = await client.messages.create(**base, messages=messages)
        if message.stop_reason != "tool_use":
            return message
        content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": "ok"}
            for b in content if b["type"] == "tool_use"]})
