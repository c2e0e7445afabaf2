"""Ignores the exit status: failing commands look like successes (timeouts are still errors)."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.errors.failure_flagged"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        out, status = super().run(command)
        return out, (None if status is None else 0)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
