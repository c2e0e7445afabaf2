"""Waits for end of file on the command's output, as a tool that runs each command with
``subprocess.run(..., capture_output=True)`` does: a background job that keeps the output pipe
open (`server &` without a redirect) holds the answer until the tool's own timeout, which then
answers with an error. (Emulated on top of the reference: after a command, while a process of
the shell's group other than the shell still holds the output pipe, the tool waits.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool

TARGET = "bash.session.background_job_does_not_hang"


class Session(BashSession):
    def _pipe_writers(self) -> list[int]:
        proc = self.process
        if proc is None or proc.stdout is None:
            return []
        pipe = f"pipe:[{os.fstat(proc.stdout.fileno()).st_ino}]"
        writers = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == proc.pid:
                continue
            try:
                if os.getpgid(int(entry)) != proc.pid:
                    continue
                fds = os.listdir(f"/proc/{entry}/fd")
                if any(os.readlink(f"/proc/{entry}/fd/{fd}") == pipe for fd in fds):
                    writers.append(int(entry))
            except OSError:
                continue
        return writers

    def run(self, command: str) -> tuple[str, int | None]:
        start = time.monotonic()
        out, status = super().run(command)
        # A job just forked may hold the pipe for a moment before its own redirect applies (the
        # end of file would come then): only a writer still there after 2 s holds the answer.
        settle = time.monotonic() + 2.0
        while status is not None and self._pipe_writers() and time.monotonic() < settle:
            time.sleep(0.02)
        if status is not None and self._pipe_writers():  # no end of file yet: wait for it
            time.sleep(max(0.0, self.timeout - (time.monotonic() - start)))
            self.restart()
            return TIMED_OUT.format(timeout=self.timeout), None
        return out, status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
