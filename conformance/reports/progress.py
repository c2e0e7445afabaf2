"""Terminal progress while a run goes: counts and the current check, on one rewritten line.

Quiet when the stream is not a terminal (CI logs get the final summary from the reports).
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from typing import TextIO

from conformance.results import CheckResult, RunInfo


class Progress:
    """A :class:`~conformance.results.RunListener` drawing ``[12/140] ✓10 ✗1 –1 !0  check on subject``."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.counts: Counter[str] = Counter()
        self.planned: int | None = None
        self.current = ""
        self._drawn = False

    def on_run_started(self, run: RunInfo) -> None:
        self.planned = run.planned

    def on_check_started(self, check_id: str, subject: str) -> None:
        self.current = f"{check_id} on {subject}"
        self._draw()

    def on_check_finished(self, result: CheckResult) -> None:
        self.counts[result.outcome.value] += 1
        self.current = f"{result.check_id} on {result.subject}"
        self._draw()

    def on_run_finished(self, *, complete: bool) -> None:
        if not self.enabled:
            return
        if self._drawn:
            self.stream.write("\r\x1b[2K")
        state = "done" if complete else "interrupted"
        self.stream.write(f"{state}: {self.line(with_current=False)}\n")
        self.stream.flush()

    def line(self, *, with_current: bool = True) -> str:
        done = sum(self.counts.values())
        of = f"/{self.planned}" if self.planned else ""
        c = self.counts
        text = (f"[{done}{of}] pass {c['pass']} fail {c['fail']} skip {c['skip']} "
                f"error {c['error']}")
        if with_current and self.current:
            text += f"  {self.current}"
        return text

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = shutil.get_terminal_size((100, 20)).columns
        text = self.line()
        if len(text) > width - 1:
            text = text[: width - 2] + "…"
        self.stream.write("\r\x1b[2K" + text)
        self.stream.flush()
        self._drawn = True
