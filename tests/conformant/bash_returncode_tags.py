"""Answers in tags, as SWE-agent-style tools do: the exit status and the output each in a tag of
its own,

    <returncode>0</returncode>
    <output>
    ...
    </output>

Seed 003 "How it works" asks for the command's output as the tool_result, not for a format; the
model reads the output intact between the tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str) or not command.strip() or tool_input.get("restart"):
            return super().__call__(tool_input)
        output, status = self.session.run(command)
        code = "timeout" if status is None else str(status)
        end = "" if not output or output.endswith("\n") else "\n"
        return {"content": f"<returncode>{code}</returncode>\n<output>\n{output}{end}</output>",
                "is_error": status != 0}


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
