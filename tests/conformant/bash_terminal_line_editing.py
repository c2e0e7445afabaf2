"""A conformant bash tool whose commands are typed into a terminal: control characters in a
command are line-editing keys, as readline and a pty's line discipline read them.

Tools that drive an interactive bash through a pseudo-terminal (pexpect, tmux ``send-keys``) do
this: ``^H``/``DEL`` erase the previous character, ``^U`` erases the line so far, ``^W`` the
previous word, and other control characters (``^G``, ``^[``...) are swallowed. Seed 003 and
PROTOCOL.md say nothing of commands holding control characters, so the output checks must not
depend on them (issue 15: ``bash.output.roundtrip`` prints its text with printf escapes).
Everything else is the reference bash tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.properties.conventions import typed
from conformance.reference.bash import BashTool


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
            tool_input = {**tool_input, "command": typed(tool_input["command"])}
        return super().__call__(tool_input)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
