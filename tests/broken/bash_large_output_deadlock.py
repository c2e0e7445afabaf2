"""Waits for the command before draining its pipe: past a pipe's worth of output (64 KiB) the
command blocks, and the subject answers only with its own timeout error. (Emulated on top of
the reference so that the rest of the behaviour stays conformant.)"""

from __future__ import annotations

import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool

TARGET = "bash.output.large_output_returns"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        start = time.monotonic()
        out, status = super().run(command)
        if len(out) > 65536 or "Output truncated" in out:
            time.sleep(max(0.0, self.timeout - (time.monotonic() - start)))
            self.restart()
            return TIMED_OUT.format(timeout=self.timeout), None
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
