"""The order in which ``pytest -n N`` hands the tests to its workers (issue 21).

pytest-xdist's ``loadgroup`` scheduler (``--no-loadscope-reorder``) hands each worker the next
unit of the collection order (a test, or a whole ``xdist_group``) as it runs short of work, so
the order is the schedule. Two things make a good one on a machine with fewer cores than workers:

- the longest units first (the longest-processing-time rule): a long unit started last runs
  alone at the end while the other workers have nothing left;
- a mix of units that use the cores and units that wait (for a subject's timeout, a restart, a
  start-up). The suite's long tests are of both kinds, and longest-first alone ran the broken
  bash subjects, the broken workers and the slow start-ups together: for 90 s a fresh-clone run
  left 0.7 of the 2 cores idle (64 core-seconds), while before and after it every core was busy.

:func:`order` simulates the run from the recorded wall and CPU seconds of each unit
(``tests/durations.json``): whenever a worker frees, it picks, among the long units left (those
at least :data:`WINDOW` times the longest left), the one whose CPU use (CPU seconds per wall
second) best fills what the running units leave of the cores to each free worker. Units without
a record are short: they follow, in collection order.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

#: A unit this share of the longest unit left, or longer, may be picked before it.
WINDOW = 0.5
#: The CPU use assumed for a unit whose CPU seconds were not recorded.
UNKNOWN_INTENSITY = 0.5
#: The most cores a unit is taken to use.
MAX_INTENSITY = 2.0


@dataclass(frozen=True)
class Unit:
    """A test or an ``xdist_group``: its key, recorded wall seconds (0: short, not recorded) and
    CPU seconds (``None``: not recorded)."""

    key: str
    seconds: float
    cpu: float | None = None

    @property
    def intensity(self) -> float:
        """Cores it uses on average while it runs (more than 1 with the processes it starts,
        counted when the worker reaps them; at most :data:`MAX_INTENSITY`)."""
        if self.seconds <= 0:
            return 0.0
        if self.cpu is None:
            return UNKNOWN_INTENSITY
        return min(MAX_INTENSITY, max(0.0, self.cpu / self.seconds))


def order(units: list[Unit], workers: int, cpus: int) -> list[str]:
    """The keys of ``units`` in the order to hand them out. Deterministic (every xdist worker
    computes it and they must collect the same order): ties go to the longer unit, then to the
    earlier one in ``units``."""
    workers, cpus = max(1, workers), max(1, cpus)
    long = sorted((u for u in units if u.seconds > 0), key=lambda u: -u.seconds)  # stable
    short = [u.key for u in units if u.seconds <= 0]
    running: list[tuple[float, int, float]] = []  # (ends at, pick number, intensity)
    now, out = 0.0, []
    while long:
        if len(running) >= workers:  # the next worker frees when the first running unit ends
            now = heapq.heappop(running)[0]
        load = sum(i for _, _, i in running)
        want = max(0.0, cpus - load) / (workers - len(running))  # each free worker's share
        floor = long[0].seconds * WINDOW
        window = [u for u in long if u.seconds >= floor]
        pick = min(window, key=lambda u: abs(u.intensity - want))  # first of equals: longest
        long.remove(pick)
        heapq.heappush(running, (now + pick.seconds, len(out), pick.intensity))
        out.append(pick.key)
    return out + short
