"""Broken loop: puts a text block before the tool results."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.client_tools.one_per_turn", "messages.tool_result.before_other_content")


class TextBeforeResults(ReferenceLoop):
    def add_results(self, results: list[dict[str, Any]]) -> None:
        self.messages.append({"role": "user", "content": [
            {"type": "text", "text": "Here is what the tools returned:"}, *results]})


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return TextBeforeResults(client, params, run_tool).run()
