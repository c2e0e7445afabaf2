"""The order in which ``pytest -n N`` hands the tests to its workers (issue 21).

pytest-xdist's ``loadgroup`` scheduler (``--no-loadscope-reorder``) hands each worker the next
unit of the collection order (a test, or a whole ``xdist_group``) when it is down to its last
couple of tests, so the order is the schedule. Two things make a good one on a machine with
fewer cores than workers:

- the longest units first (the longest-processing-time rule): a long unit started last runs
  alone at the end while the other workers have nothing left;
- the units that mostly wait (for a subject's timeout, a restart, a start-up: a broken bash
  subject's run, the broken workers, the slow start-ups, the editor hang) spread out. They are
  the long units left after the packaging and benchmark tests, so longest-first handed them
  out together: for 90 s of every fresh-clone run all four workers waited and 0.9 of the two
  cores stood idle (~80 core-seconds), while before and after it every core was busy.

:func:`order` simulates the run from the recorded seconds and keeps at most :data:`AT_ONCE` of
the units the workers run or hold waiting ones (recorded CPU use below :data:`WAITING` of a
core), longest first; the busy long units go longest first, then the short tests, which even
out the workers' last minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A unit using less than this share of a core while it runs mostly waits.
WAITING = 0.25
#: At most this many of the units the workers run or hold are waiting ones (when any other is
#: left).
AT_ONCE = 3
#: The seconds a test without a record is taken to last (most take a fraction of a second).
SHORT_SECONDS = 0.2


@dataclass(frozen=True)
class Unit:
    """A test or an ``xdist_group``: its key, expected wall seconds (0: short), and the wall and
    CPU seconds recorded for it (``cpu`` ``None``: not recorded; ``recorded`` 0: as expected).
    The expected seconds can be a ``slow`` mark's estimate, larger than what was recorded."""

    key: str
    seconds: float
    cpu: float | None = None
    recorded: float = 0.0

    @property
    def waits(self) -> bool:
        """Long, and recorded using less than :data:`WAITING` of a core while it ran (the CPU
        of the processes it starts counts when its worker reaps them)."""
        wall = self.recorded or self.seconds
        return self.seconds > 0 and self.cpu is not None and self.cpu < WAITING * wall


def order(units: list[Unit], workers: int) -> list[str]:
    """The keys of ``units`` in the order to hand them out. Deterministic: every xdist worker
    computes it, and they must all collect the same order.

    A simulation of the run as pytest-xdist hands it out: each worker runs one unit and holds
    the next; when its unit ends, the held one starts and the worker is handed the next pick.
    A pick is the longest waiting unit left while fewer than :data:`AT_ONCE` of the units the
    workers run or hold wait, else the longest busy unit left, else the next short test (taken
    to last :data:`SHORT_SECONDS`), else a waiting one."""
    workers = max(1, workers)
    long = sorted((u for u in units if u.seconds > 0), key=lambda u: -u.seconds)  # stable
    waiting = [u for u in long if u.waits]
    busy = [u for u in long if not u.waits]
    short = [u for u in units if u.seconds <= 0]
    held: list[list[Unit]] = [[] for _ in range(workers)]  # each worker: running, then held
    ends = [0.0] * workers  # when each worker's running unit ends
    out: list[str] = []

    def pick() -> Unit:
        now_waiting = sum(u.waits for units_ in held for u in units_)
        for queue in ((waiting,) if now_waiting < AT_ONCE else ()) + (busy, short, waiting):
            if queue:
                return queue.pop(0)
        raise IndexError

    def hand(w: int, now: float) -> None:
        u = pick()
        out.append(u.key)
        held[w].append(u)
        if len(held[w]) == 1:
            ends[w] = now + (u.seconds or SHORT_SECONDS)

    left = len(units)
    for _ in range(2):  # pytest-xdist's first round: a unit for each worker, then one to hold
        for w in range(workers):
            if left:
                hand(w, 0.0)
                left -= 1
    while left:
        w = min(range(workers), key=lambda i: (ends[i] if held[i] else 0.0, i))
        now = ends[w] if held[w] else 0.0
        if held[w]:
            held[w].pop(0)
        if held[w]:
            ends[w] = now + (held[w][0].seconds or SHORT_SECONDS)
        hand(w, now)
        left -= 1
    return out
