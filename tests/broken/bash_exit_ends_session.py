"""After the shell exits (`exit 3`), every later command fails and no answer says what would
help: the session is not restarted, and neither the exit's answer nor the later errors mention
that `restart: true` would bring it back."""

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
            return f"bash exited with status {status}", status or 1
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
