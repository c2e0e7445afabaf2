"""Answers a timed-out command with an error but leaves it running: the session stays busy and
every later command times out too."""

from __future__ import annotations

import os
import selectors
import time
from pathlib import Path

from conformance.reference.bash import TIMED_OUT, BashSession, BashTool, _BoundedReader

TARGET = "bash.timeout.session_usable_after"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        proc = self.process
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        sentinel = self.new_sentinel()
        proc.stdin.write(self.script(command, sentinel))
        proc.stdin.flush()
        reader = _BoundedReader(f"\n{sentinel} ".encode())
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout.fileno(), selectors.EVENT_READ)
            while not reader.done:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return TIMED_OUT.format(timeout=self.timeout), None  # no kill, no restart
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:  # the shell exited: start a new one, as the reference does
                    self.restart()
                    return "bash exited; the session was restarted", 1
                reader.feed(chunk)
        return self.format(reader.output(), reader.total_lines, reader.dropped), reader.status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
