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

import re
from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool


def typed(command: str) -> str:
    """The command a terminal passes on after its line editing."""
    out: list[str] = []
    for ch in command:
        if ch in "\x08\x7f":
            if out and out[-1] != "\n":
                out.pop()
        elif ch == "\x15":
            while out and out[-1] != "\n":
                out.pop()
        elif ch == "\x17":
            line = "".join(out).rsplit("\n", 1)
            head = line[0] + "\n" if len(line) == 2 else ""
            out = list(head + re.sub(r"\S*\s*$", "", line[-1]))
        elif ch in "\t\n" or ord(ch) >= 0x20:
            out.append(ch)
    return "".join(out)


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
            tool_input = {**tool_input, "command": typed(tool_input["command"])}
        return super().__call__(tool_input)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
