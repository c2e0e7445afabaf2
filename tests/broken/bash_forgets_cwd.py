"""Forgets the working directory: every command starts back in the case's directory."""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.session.cwd_persists"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        return f"cd {shlex.quote(str(self.workdir))}\n".encode() + super().script(command, sentinel)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
