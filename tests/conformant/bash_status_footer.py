"""A terminal-style bash tool: every result carries terminal escape codes (bracketed-paste mode,
an OSC window title, a colour reset) around the output and ends with a status footer, as
OpenHands-style tools do:

    <output>
    [Current working directory: /x]
    [Command finished with exit code 0]

The docs do not forbid decorations around the output (seed 003 "How it works": return the
command's output as the tool_result); the model reads the output intact.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

START = "\x1b[?2004l\x1b]0;tool@sandbox: {cwd}\x07"
END = "\x1b[0m"


class Tool(BashTool):
    def _cwd(self) -> str:
        proc = self.session.process
        try:
            return os.readlink(f"/proc/{proc.pid}/cwd") if proc is not None else "?"
        except OSError:
            return "?"

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str) or not command.strip() or tool_input.get("restart"):
            return super().__call__(tool_input)
        output, status = self.session.run(command)
        cwd = self._cwd()
        code = "timed out" if status is None else f"exit code {status}"
        content = (f"{START.format(cwd=cwd)}{output}{END}\n"
                   f"\x1b[2m[Current working directory: {cwd}]\x1b[0m\n"
                   f"\x1b[2m[Command finished with {code}]\x1b[0m")
        return {"content": content, "is_error": status != 0}


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
