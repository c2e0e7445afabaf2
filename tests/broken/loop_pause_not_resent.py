"""Broken loop: after pause_turn it asks the model to continue instead of resending the content."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.pause_turn.resend", "pause_turn.resend_assistant_content")


class PauseNotResent(ReferenceLoop):
    def on_pause_turn(self, content: list[dict[str, Any]]) -> None:
        self.messages.append({"role": "user", "content": "Please continue."})


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return PauseNotResent(client, params, run_tool).run()
