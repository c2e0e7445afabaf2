"""Does not know `restart`: answers it like an input without a command (an error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

TARGET = "bash.restart.confirms"


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if isinstance(tool_input, dict) and tool_input.get("restart"):
            return {"content": "Error: no command given", "is_error": True}
        return super().__call__(tool_input)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
