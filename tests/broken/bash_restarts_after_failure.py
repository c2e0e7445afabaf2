"""Restarts the shell, without a word, after every command that exits with a non-zero status
(as a tool that treats a failed command as a broken session does): the failure is answered
correctly (is_error: true), but the working directory, variables and everything else the
session held are gone at the next command. Seed 003 "Bash tool": state persists between
commands until a restart the model asks for. The fixed checks never set state before a failing
command and read it after, so they pass."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.model.agrees_with_session_model"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        out, status = super().run(command)
        if status not in (0, None):
            self.restart()
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
