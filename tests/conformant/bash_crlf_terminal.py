"""A pseudo-terminal bash tool: line ends come back as CRLF (a pty's output processing turns
every "\\n" into "\\r\\n"), with a prompt's colour codes after the output. The model reads the
same lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        r = super().__call__(tool_input)
        if isinstance(tool_input, dict) and tool_input.get("command"):
            r["content"] = r["content"].replace("\n", "\r\n") + "\x1b[01;32m\x1b[00m"
        return r


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
