"""After a command with a syntax error, every later command fails until a restart (the session
is declared dead), as the SDK agent toolset's bash does after a syntax error. The errors say a
restart is required and `restart: true` brings the session back: seed 003 "Handle errors" asks
to tell Claude what happened, with is_error: true, not to recover by itself. (Formerly
tests/broken/bash_syntax_error_ends_session.py; the calibrated bash.errors.syntax_error_recovers
accepts this convention.)"""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Session(BashSession):
    dead = False

    def run(self, command: str) -> tuple[str, int | None]:
        if self.dead:
            return "bash: bash session terminated; restart required", 1
        out, status = super().run(command)
        if "unexpected EOF" in out or "syntax error" in out:
            self.dead = True
        return out, status

    def restart(self) -> None:
        self.dead = False
        super().restart()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
