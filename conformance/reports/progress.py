"""Progress while a run goes, on stderr (stdout keeps the summary and ``--json`` lines).

Modes (``tooluse run --progress``; ``--quiet`` is ``off``):

- ``bar`` (the default on a terminal): one rewritten line, ``[12/140] pass 10 fail 1 skip 1
  error 0  check on subject``, replaced by the final count when the run ends;
- ``counter`` (the default otherwise: CI logs, pipes): a plain line with the counts at most every
  ``every`` seconds (nothing for a run shorter than that), and the final count;
- ``lines``: one line per finished check, as ``pytest -v`` gives
  (``[12/140] FAIL  MUST   bash.session.cwd_persists  [my-bash]  0.31s``);
- ``off``: nothing.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections import Counter
from typing import TextIO

from conformance.options import PROGRESS_MODES as MODES
from conformance.options import ProgressMode as Mode
from conformance.results import CheckResult, RunInfo

__all__ = ["MODES", "Mode", "Progress"]
#: How often the ``counter`` mode prints (seconds).
EVERY = 5.0
#: The longest a ``counter`` log stays silent while a run goes on (seconds): a run whose cases
#: all wait (on start-up, on deadlines) still says it is alive.
HEARTBEAT = 10.0


class Progress:
    """A :class:`~conformance.results.RunListener` showing the run's progress (see the module)."""

    def __init__(self, stream: TextIO | None = None, *, mode: Mode = "auto",
                 every: float = EVERY, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is not None:  # the older switch: a bar or nothing
            mode = "bar" if enabled else "off"
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            mode = "bar" if isatty and isatty() else "counter"
        self.mode: Mode = mode
        self.every = every
        self.counts: Counter[str] = Counter()
        self.planned: int | None = None
        self.current = ""
        self._drawn = False
        self._started = self._printed = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def on_run_started(self, run: RunInfo) -> None:
        self.planned = run.planned
        self._started = self._printed = time.monotonic()
        if self.mode == "counter" and self._beat is None:
            self._stop.clear()
            self._beat = threading.Thread(target=self._heartbeat, name="tooluse-progress",
                                          daemon=True)
            self._beat.start()

    def _heartbeat(self) -> None:
        """In ``counter`` mode: a line when nothing was printed for :data:`HEARTBEAT` seconds."""
        while not self._stop.wait(1.0):
            now = time.monotonic()
            with self._lock:
                if now - self._printed >= HEARTBEAT:
                    self._printed = now
                    self._write(f"tooluse run: {self.line(with_current=False)}, "
                                f"{now - self._started:.0f} s (running)\n")

    def on_check_started(self, check_id: str, subject: str) -> None:
        if self.mode == "bar":
            self.current = f"{check_id} on {subject}"
            self._draw()

    def on_check_finished(self, result: CheckResult) -> None:
        self.counts[result.outcome.value] += 1
        if self.mode == "bar":
            self.current = f"{result.check_id} on {result.subject}"
            self._draw()
        elif self.mode == "lines":
            self._write(f"{self._done()} {result.outcome.value.upper():5} {result.severity:6} "
                        f"{result.check_id}  [{result.subject}]  {result.duration:.2f}s\n")
        elif self.mode == "counter":
            now = time.monotonic()
            with self._lock:
                if now - self._printed >= self.every:
                    self._printed = now
                    self._write(f"tooluse run: {self.line(with_current=False)}, "
                                f"{now - self._started:.0f} s\n")

    def on_run_finished(self, *, complete: bool) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=2)
            self._beat = None
        if self.mode == "off":
            return
        if self._drawn:
            self.stream.write("\r\x1b[2K")
        if self.mode == "bar" or time.monotonic() - self._started >= self.every:
            state = "done" if complete else "interrupted"
            self._write(f"{state}: {self.line(with_current=False)}\n")
        self.stream.flush()

    def line(self, *, with_current: bool = True) -> str:
        c = self.counts
        text = (f"{self._done()} pass {c['pass']} fail {c['fail']} skip {c['skip']} "
                f"error {c['error']}" + "".join(f" {k} {c[k]}" for k in (
                    "incomplete", "flaky", "not-run") if c.get(k)))
        if with_current and self.current:
            text += f"  {self.current}"
        return text

    def _done(self) -> str:
        of = f"/{self.planned}" if self.planned else ""
        return f"[{sum(self.counts.values())}{of}]"

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _draw(self) -> None:
        width = shutil.get_terminal_size((100, 20)).columns
        text = self.line()
        if len(text) > width - 1:
            text = text[: width - 2] + "…"
        self._write("\r\x1b[2K" + text)
        self._drawn = True
