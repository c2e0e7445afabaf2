"""What the ``--loop-cmd`` framework adapters share: the program's entry (answer the describe
call, or run each conversation of the scenario's parameters file, ``TOOLUSE_LOOP_PARAMS``,
:mod:`conformance.loops.command`), the opening question and the recorded result of a call.
Standard library only: it runs in the framework's environment."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any


def run_program(describe: dict[str, Any],
                conversation: Callable[[dict[str, Any], dict[str, Any]], Any]) -> int:
    """A ``--loop-cmd`` program's ``main``: print ``describe`` when asked to describe itself
    (``TOOLUSE_LOOP_DESCRIBE=1``), else hold each conversation of the parameters file."""
    if os.environ.get("TOOLUSE_LOOP_DESCRIBE") == "1":
        print(json.dumps(describe))
        return 0
    with open(os.environ["TOOLUSE_LOOP_PARAMS"]) as f:
        doc = json.load(f)
    for params in doc["conversations"]:
        conversation(doc, params)
    return 0


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


def recorded_call(doc: dict[str, Any], name: str) -> Callable[..., str]:
    """A client tool's implementation for a framework: called with the tool's input as keyword
    arguments, it answers the recorded result of that call."""
    def call(**kwargs: Any) -> str:
        return recorded_result(doc, name, kwargs)
    return call
