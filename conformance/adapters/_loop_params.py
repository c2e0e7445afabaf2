"""What the ``--loop-cmd`` framework adapters read from the scenario's parameters file
(``TOOLUSE_LOOP_PARAMS``, :mod:`conformance.loops.command`): the opening question and the
recorded result of a call. Standard library only: it runs in the framework's environment."""

from __future__ import annotations

import json
from typing import Any


def opening_prompt(params: dict[str, Any]) -> str:
    """The first user message's text (a string, or its text blocks joined by newlines)."""
    content = params["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def recorded_result(doc: dict[str, Any], name: str, tool_input: Any) -> str:
    """The recorded result of the call of ``name`` with ``tool_input`` ("ok" when none is)."""
    for call in doc.get("tool_results_by_call") or []:
        if call["name"] == name and call["input"] == tool_input:
            content = call["content"]
            return content if isinstance(content, str) else json.dumps(content)
    return "ok"
