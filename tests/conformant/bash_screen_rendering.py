"""A conformant bash tool that returns its output as a terminal screen shows it.

Tools that run the shell in tmux and read the pane (``capture-pane``; OpenHands' tmux terminal)
return what a terminal displays: a tab becomes spaces up to the next 8-column stop, a bell is
dropped, a backspace moves back over the previous character, a vertical tab or form feed starts a
new line. Printable text comes back intact. Seed 003 asks for the command's output and says
nothing of control characters in it, so the suite reports this convention
(``bash.output.control_characters``, INFO) and its MUST output checks print text without control
characters (issue 15). Everything else is the reference bash tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool


def rendered(text: str) -> str:
    """``text`` as a terminal screen shows it (columns counted per line)."""
    lines: list[str] = []
    line: list[str] = []
    for ch in text:
        if ch == "\n" or ch in "\x0b\x0c":
            lines.append("".join(line))
            line = [" "] * len(line) if ch != "\n" else []
        elif ch == "\t":
            line.extend(" " * (8 - len(line) % 8))
        elif ch == "\b":
            if line:
                line.pop()
        elif ch == "\r" or ord(ch) >= 0x20 and ch != "\x7f":
            line.append(ch)
    lines.append("".join(line))
    return "\n".join(x.rstrip() for x in lines)


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        r = super().__call__(tool_input)
        if isinstance(r.get("content"), str):
            r["content"] = rendered(r["content"])
        return r


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
