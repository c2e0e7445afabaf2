"""Returns output that arrives in bursts partly twice: after a pause in the output its reader
keeps what it has read so far but never drops it from the part it holds back (where the
end-of-command sentinel may begin), so the next read keeps it again. Output written at once
comes back as printed."""

from __future__ import annotations

import time
from pathlib import Path

import conformance.reference.bash as reference
from conformance.reference.bash import BashSession, BashTool, _BoundedReader

TARGET = "bash.output.written_over_time"


#: The defect shows after a pause in the output (a burst, then another): output written at once
#: is read in one go or in reads close together, and comes back as printed even on a busy
#: machine (so the subject fails its target alone, not bash.output.roundtrip too).
PAUSE = 0.25


class RepeatingReader(_BoundedReader):
    def feed(self, chunk: bytes) -> None:
        now = time.monotonic()
        paused = now - getattr(self, "_last_feed", now) >= PAUSE
        self._last_feed = now
        if not paused and not getattr(self, "_broken", False):
            super().feed(chunk)
            return
        self._broken = True
        self.tail += chunk
        idx = self.tail.find(self.marker)
        if idx >= 0:
            super().feed(b"")  # the reference's own end-of-command handling
            return
        window = len(self.marker) + 8
        if len(self.tail) > window:
            self._keep(self.tail[:-window])  # the defect: self.tail is not cut back


class RepeatingSession(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        saved, reference._BoundedReader = reference._BoundedReader, RepeatingReader
        try:
            return super().run(command)
        finally:
            reference._BoundedReader = saved


class Tool(BashTool):
    session_class = RepeatingSession


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
