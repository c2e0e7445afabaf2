"""Deadlines judged fairly: one mechanism for every wait of the harness on a subject.

A busy machine (a shared CI runner) slows a subject down without it being wrong: its own command
timeout fires late, it waits for a core before it can answer or exit. So every deadline of the
harness (a call's grace, the close grace, readiness, the loop and worker deadlines, and the
time-related checks, which wait through the same calls) goes through :class:`Patience`:

1. **It scales with measured load.** When the nominal deadline passes, the harness adds what it
   measured while waiting: its own scheduling lag (a sleeper thread's overshoot) and how long the
   subject's processes were ready to run but got no CPU (``run_delay`` in
   ``/proc/PID/schedstat``). It keeps waiting as long as that allowance grows, up to
   :data:`MAX_ALLOWANCE` times the nominal deadline. On an idle machine the allowance is ~0 and a
   deadline is what it says.
2. **It is recorded.** A deadline that still passes is a :class:`Miss` (what, nominal, waited,
   allowance), kept for the case being run (:func:`collecting`). A failure of a case with a miss
   rests on time: the runner re-runs it alone after the run (``conformance.runner``), and only a
   failure that repeats is a FAIL; one that does not is reported with both timings.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from conformance.subjects.isolation import children, read_proc

T = TypeVar("T")

#: The allowance for load never exceeds this many times the nominal deadline.
MAX_ALLOWANCE = 3.0
#: An allowance that grew by less than this since the last extension ends the wait.
MIN_STEP = 0.05
#: The sleeper's period (seconds).
TICK = 0.02
#: The real ``time.sleep``, taken at import: a test that patches ``time.sleep`` (the module is
#: shared by every thread) must not turn the sampler into a busy loop.
_sleep = time.sleep


class _LagMeter:
    """A daemon thread sleeping :data:`TICK` at a time; the overshoot it adds up is the
    harness's own scheduling lag (it is late exactly when the harness's threads are)."""

    def __init__(self) -> None:
        self._lag = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while True:
            t = time.monotonic()
            _sleep(TICK)
            over = time.monotonic() - t - TICK
            if over > 0.002:  # timer slack is not lag
                with self._lock:
                    self._lag += over

    def total(self) -> float:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="tooluse-lag",
                                                    daemon=True)
                    self._thread.start()
        with self._lock:
            return self._lag


_METER = _LagMeter()


def harness_lag() -> float:
    """Seconds of scheduling lag the harness has seen since it started measuring (monotonic)."""
    return _METER.total()


def _schedstat_delay(pid: int, name: str = "schedstat") -> float:
    try:
        return int(read_proc(pid, name).split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def tree_delay(pid: int) -> float:
    """Seconds the process ``pid`` and those below it were runnable but not running
    (``/proc/PID/schedstat``; 0 where it cannot be read). Processes that already exited are not
    counted: an underestimate, which the re-run of a failure makes up for."""
    total, todo, seen = 0.0, [pid], set[int]()
    while todo and len(seen) < 256:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += _schedstat_delay(p)
        todo.extend(children(p))
    return total


def thread_delay(native_id: int | None) -> float:
    """:func:`tree_delay` for one thread of the harness itself (an in-process loop)."""
    if native_id is None:
        return 0.0
    return _schedstat_delay(os.getpid(), f"task/{native_id}/schedstat")


@dataclass(frozen=True)
class Miss:
    """A deadline that passed even with the allowance for load."""

    #: What was waited for: "call", "close", "readiness", "start", "loop", "worker", or
    #: "lease" (a worker's heartbeat came after its lease's TTL, a deadline in the simulation).
    what: str
    nominal: float
    waited: float
    #: Seconds added for measured load (scheduling lag, the subject's CPU wait).
    allowance: float

    def text(self) -> str:
        extra = f" + {self.allowance:.1f}s allowed for load" if self.allowance >= 0.05 else ""
        return f"{self.what}: waited {self.waited:.1f}s ({self.nominal:g}s{extra})"

    def to_json(self) -> dict[str, object]:
        return {"what": self.what, "nominal": round(self.nominal, 3),
                "waited": round(self.waited, 3), "allowance": round(self.allowance, 3)}


_misses: contextvars.ContextVar[list[Miss] | None] = contextvars.ContextVar("tooluse_misses",
                                                                            default=None)


@contextlib.contextmanager
def collecting() -> Iterator[list[Miss]]:
    """Collect the misses of the code run in this block (one case) in the yielded list."""
    found: list[Miss] = []
    token = _misses.set(found)
    try:
        yield found
    finally:
        _misses.reset(token)


def record(miss: Miss) -> None:
    found = _misses.get()
    if found is not None:
        found.append(miss)


Starved = Callable[[], float]


def process_starvation(pid: int) -> Starved:
    """How starved the process tree under ``pid`` and the harness are, as a running total."""
    return lambda: harness_lag() + tree_delay(pid)


def thread_starvation(native_id: int | None) -> Starved:
    return lambda: harness_lag() + thread_delay(native_id)


class Patience:
    """One deadline, extended by the load measured while waiting (see the module docstring).

    ``attempt(seconds)`` waits up to ``seconds`` and returns a value, or None when it is still
    waiting; :meth:`wait` calls it until it returns a value or the deadline (with its allowance)
    passes, then records a :class:`Miss` and returns None."""

    def __init__(self, nominal: float, what: str, starved: Starved | None = None,
                 *, cap: float | None = None) -> None:
        self.nominal = max(0.0, nominal)
        self.what = what
        self._starved = starved or harness_lag
        self._cap = MAX_ALLOWANCE * max(self.nominal, 1.0) if cap is None else cap
        #: Seconds added for load so far (after :meth:`wait`).
        self.allowance = 0.0
        #: Seconds waited in all (after :meth:`wait`).
        self.waited = 0.0
        self.missed: Miss | None = None

    def wait(self, attempt: Callable[[float], T | None], *, record_miss: bool = True) -> T | None:
        start = time.monotonic()
        base = self._starved()
        window = self.nominal
        try:
            while True:
                got = attempt(window)
                if got is not None:
                    return got
                grown = max(0.0, self._starved() - base)
                step = min(grown, self._cap) - self.allowance
                if step < MIN_STEP:
                    break
                self.allowance += step
                window = step
            self.missed = Miss(self.what, self.nominal, time.monotonic() - start, self.allowance)
            if record_miss:
                record(self.missed)
            return None
        finally:
            self.waited = time.monotonic() - start


def wait_until(done: Callable[[], bool], nominal: float, what: str,
               starved: Starved | None = None, *, poll: float = 0.01,
               record_miss: bool = True) -> bool:
    """Poll ``done()`` until it holds (True) or the deadline with its allowance passes (False)."""
    def attempt(seconds: float) -> bool | None:
        end = time.monotonic() + seconds
        while True:
            if done():
                return True
            left = end - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(poll, left))

    return Patience(nominal, what, starved).wait(attempt, record_miss=record_miss) is True
