"""Its deadline restarts at each output: a command past the timeout that keeps printing is never
ended (seed 003 "Use command timeouts" gives *every* command a deadline). A command that sleeps
past the timeout is ended in time, as in the reference."""

from __future__ import annotations

import os
import selectors
import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool, _BoundedReader

TARGET = "bash.timeout.returns_error_in_time"


class IdleDeadlineSession(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        if self.process is None or self.process.poll() is not None:
            self.restart()
        proc = self.process
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        sentinel = self.new_sentinel()
        proc.stdin.write(self.script(command, sentinel))
        proc.stdin.flush()
        reader = _BoundedReader(f"\n{sentinel} ".encode(), self.keep_bytes)
        deadline = time.monotonic() + self.timeout
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not reader.done:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.restart()
                    return TIMED_OUT.format(timeout=self.timeout), None
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.restart()
                    return "bash exited; the session was restarted", 1
                reader.feed(chunk)
                deadline = time.monotonic() + self.timeout  # the defect: an idle timeout
        return self.format(reader.output(), reader.total_lines, reader.dropped), reader.status


class Tool(BashTool):
    session_class = IdleDeadlineSession


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
