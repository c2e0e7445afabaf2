"""Runs whatever it gets: an input with neither command nor restart runs an empty command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

TARGET = "bash.input.invalid_rejected"


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if isinstance(tool_input, dict) and not tool_input.get("restart"):
            if not tool_input.get("command"):
                return {"content": "", "is_error": False}
        return super().__call__(tool_input)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
