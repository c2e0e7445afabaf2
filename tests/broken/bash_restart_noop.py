"""Confirms `restart` but does nothing: directory, variables and processes survive it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import RESTARTED, BashTool

TARGET = "bash.restart.clears_state"


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if isinstance(tool_input, dict) and tool_input.get("restart") is True:
            return {"content": RESTARTED, "is_error": False}
        return super().__call__(tool_input)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
