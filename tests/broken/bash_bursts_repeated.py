"""Returns output that arrives in several reads partly twice: its reader keeps what it has read
so far but never drops it from the part it holds back (where the end-of-command sentinel may
begin), so the next read keeps it again. Output written at once comes back as printed."""

from __future__ import annotations

from pathlib import Path

import conformance.reference.bash as reference
from conformance.reference.bash import BashSession, BashTool, _BoundedReader

TARGET = "bash.output.written_over_time"


class RepeatingReader(_BoundedReader):
    def feed(self, chunk: bytes) -> None:
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
