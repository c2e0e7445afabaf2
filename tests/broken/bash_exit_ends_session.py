"""After the shell exits (`exit 3`), every later command fails: the session is not restarted."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.errors.exit_recovers"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        if self.process is None or self.process.poll() is not None:
            return "Error: the bash session has ended", 1
        proc = self.process
        out, status = super().run(command)
        if status is not None and self.process is not proc:  # restarted after an exit: undo
            self.kill()
            self.process = proc
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
