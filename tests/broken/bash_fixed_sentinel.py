"""Uses the same sentinel for every command: output that contains it ends the result early and
the rest spills into the next result."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.session.sentinel_lookalike_output"


class Session(BashSession):
    def new_sentinel(self) -> str:
        return "__CLAUDE_BASH_DONE__"


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
