"""After the shell exits (`exit 3`) the tool does not notice: the exit's answer and every later
command wait for the dead shell's end-of-command marker until the command timeout, and are
answered "Error: command did not finish within N seconds", until `restart: true` brings the
session back. The session is broken and every command hangs until the deadline.

(Until issue 36 this subject answered every later command at once with "Error: the bash session
has ended", with no word of a restart, and failed for the missing word. That tells Claude what
happened (seed 003 "Handle errors") and a restart brings the session back: judged by what the
session does, it is conformant now, as `tests/conformant/bash_exit_needs_restart.py` is.)"""

from __future__ import annotations

import time
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.errors.exit_recovers"
WAITED = "Error: command did not finish within {timeout:g} seconds"


class Session(BashSession):
    dead = False

    def run(self, command: str) -> tuple[str, int | None]:
        if not self.dead:
            proc = self.process
            out, status = super().run(command)
            if status is None or self.process is proc:  # the shell did not exit
                return out, status
            self.dead = True  # restarted after an exit: undo, and wait as for a dead shell
            self.kill()
        time.sleep(self.timeout)
        return WAITED.format(timeout=self.timeout), None

    def restart(self) -> None:
        self.dead = False
        super().restart()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
