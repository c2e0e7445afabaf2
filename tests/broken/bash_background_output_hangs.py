"""Keeps reading after the end of a command until its output has been quiet for a moment (as a
tool that waits for output to "settle" does, to catch what a command prints late): a background
job that keeps printing to the session's output (`(while ...; do echo tick; sleep 1; done) &`, a
dev server's log) holds every answer until the tool's timeout, which then answers with an error.
Jobs that print nothing, the form ``bash.session.background_job_does_not_hang`` used to try
alone, are answered at once. Seed 003 "Implement the bash tool": the sentinel line ends a
command's output."""

from __future__ import annotations

import os
import selectors
import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool

TARGET = "bash.session.background_job_does_not_hang"
#: Output quiet for this long counts as settled.
SETTLE = 0.3


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        start = time.monotonic()
        out, status = super().run(command)
        proc = self.process
        if status is None or proc is None or proc.stdout is None:
            return out, status
        late = b""
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout.fileno(), selectors.EVENT_READ)
            while sel.select(SETTLE):
                if time.monotonic() - start > self.timeout:
                    self.restart()
                    return TIMED_OUT.format(timeout=self.timeout), None
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                late += chunk
        return out + late.decode("utf-8", "replace"), status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
