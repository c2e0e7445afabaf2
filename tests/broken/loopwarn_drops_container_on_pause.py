"""Broken loop (warning): keeps the container for tool calls but leaves it out when it resends a
pause_turn response, so the rest of the turn runs in a new container. The API accepts it (no
programmatic call waits); only the SHOULD warning reports it."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

WARNS = "loop.container.kept_on_continuation"


class DropsContainerOnPause(ReferenceLoop):
    def on_pause_turn(self, content: list[dict[str, Any]]) -> None:
        self.container = None
        self.add_assistant(content)


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return DropsContainerOnPause(client, params, run_tool).run()
