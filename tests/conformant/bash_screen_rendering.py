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

from conformance.properties.conventions import rendered
from conformance.reference.bash import BashTool


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        r = super().__call__(tool_input)
        if isinstance(r.get("content"), str):
            r["content"] = rendered(r["content"])
        return r


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
