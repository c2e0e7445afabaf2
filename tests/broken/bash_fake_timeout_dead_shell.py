"""A syntax error ends its shell, and the tool does not notice: it waits for the end-of-command
marker until its command timeout and answers "Error: command did not finish within N seconds
(the bash session was restarted ...)", the reference's timeout text, without restarting
anything. Every later command waits the whole timeout again on the dead shell and gets the same
answer, until `restart: true`. The words say "restarted"; what the session does says it is
dead (issue 36: a check reading the words passed it)."""

from __future__ import annotations

import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool

TARGET = "bash.errors.syntax_error_recovers"


class Session(BashSession):
    dead = False

    def run(self, command: str) -> tuple[str, int | None]:
        if not self.dead:
            out, status = super().run(command)
            if "unexpected EOF" not in out and "syntax error" not in out:
                return out, status
            self.dead = True
            self.kill()
        time.sleep(self.timeout)  # waiting for a marker a dead shell never prints
        return TIMED_OUT.format(timeout=self.timeout), None

    def restart(self) -> None:
        self.dead = False
        super().restart()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
