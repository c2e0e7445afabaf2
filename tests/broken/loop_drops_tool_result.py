"""Broken loop: answers only the first tool_use of a turn."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.client_tools.several_per_turn", "messages.tool_use.answered_once_in_next_message")


class DropsToolResult(ReferenceLoop):
    def add_results(self, results: list[dict[str, Any]]) -> None:
        super().add_results(results[:1])


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return DropsToolResult(client, params, run_tool).run()
