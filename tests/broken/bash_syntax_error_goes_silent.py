"""After a command with a syntax error the session silently stops running commands: every
later command is answered with an empty success (no output, no error, no word about a
restart) until `restart: true`."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.errors.syntax_error_recovers"


class Session(BashSession):
    dead = False

    def run(self, command: str) -> tuple[str, int | None]:
        if self.dead:
            return "", 0
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
