"""On a timeout it kills the shell's process group and restarts, then waits until the old
shell's output pipe reaches end of file before it answers (as seed 003's Python
`execute_with_timeout` does: its `with` block joins the reader thread). A job that left the group
(`setsid sleep 60 &`, its output not redirected) still holds that pipe, so a later command past
the timeout is not answered until the job ends."""

from __future__ import annotations

import os
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.timeout.returns_error_in_time"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        if self.process is None or self.process.poll() is not None:
            self.restart()
        stdout = self.process.stdout if self.process is not None else None
        fd = os.dup(stdout.fileno()) if stdout is not None else -1
        try:
            out, status = super().run(command)
            if status is None and fd >= 0:  # timed out: the old reader runs to end of file
                while os.read(fd, 65536):
                    pass
            return out, status
        finally:
            if fd >= 0:
                os.close(fd)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
