"""Timeout-based stdin handling (seed 003 "Use command timeouts": a command waiting for input
never ends, so give every command a deadline and restart the session past it). Commands read
from a pipe the tool keeps open and never writes: stdin is not closed, a command reading it
waits until the tool's command timeout, which answers with an error and restarts the session.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Session(BashSession):
    _stdin_r = _stdin_w = -1

    def start(self) -> None:
        if self._stdin_r < 0:
            self._stdin_r, self._stdin_w = os.pipe()  # the write end stays open, unused
        self.process = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"], cwd=self.workdir,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, pass_fds=(self._stdin_r,))

    def script(self, command: str, sentinel: str) -> bytes:
        text = super().script(command, sentinel).decode("utf-8", "surrogateescape")
        return text.replace("</dev/null", f"<&{self._stdin_r}", 1).encode("utf-8",
                                                                         "surrogateescape")

    def close(self) -> None:
        super().close()
        for fd in (self._stdin_r, self._stdin_w):
            if fd >= 0:
                os.close(fd)
        self._stdin_r = self._stdin_w = -1


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
