"""The seed's `if sentinel in line: break` bug: a last line without a newline is dropped."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.output.partial_last_line"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        out, status = super().run(command)
        if status is not None and not out.endswith("\n"):
            out = out[:out.rfind("\n") + 1]
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
