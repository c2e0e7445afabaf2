"""Drops the final newline of the output (as the vendor's demo tool does) and answers a command
that printed nothing (or only empty lines) with a placeholder, "(no output)", so the model sees
a non-empty result (several tools do; an empty tool_result reads as nothing happened)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

PLACEHOLDER = "(no output)"


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        r = super().__call__(tool_input)
        if isinstance(tool_input, dict) and tool_input.get("command"):
            r["content"] = r["content"].rstrip("\n") or PLACEHOLDER
        return r


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
