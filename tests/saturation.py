"""A saturated machine, on purpose: busy processes competing with the subjects for CPU.

CI runners are shared; the suite's verdicts must not depend on how busy they are (issue 21).
:func:`saturated` starts ``per_cpu`` busy loops per saturated CPU and stops them on the way out,
whatever happens in between (a failure, Ctrl-C). If the test process dies without its
``finally`` (SIGKILL, a timeout that exits at once), the loops see their parent gone and end by
themselves.

Two ways (``pin``):

- **pinned** (the default, where ``os.sched_setaffinity`` works and the process may use more
  than one CPU): the test process is pinned to ONE CPU of its affinity set for the block (every
  thread it has; the runner's threads and the subject processes it starts inherit it), and the
  ``per_cpu`` busy loops are pinned to that same CPU: the subjects see the same contention per
  core as with the whole machine saturated (3 loops per core), while the rest of the suite
  (other pytest-xdist workers) keeps the other CPUs. The affinity the test process had is
  restored in ``finally``.
- **whole machine** (``pin=False``, or no affinity control, or a single CPU): ``per_cpu`` loops
  per CPU of the machine (6 on 2 cores), unpinned, competing with everything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

#: A busy loop that ends by itself when the test process is gone (killed with SIGKILL or by a
#: timeout that skips ``finally``): it must never go on loading a shared machine.
BUSY = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process (0.0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def affinity(pid: int = 0) -> set[int] | None:
    """The CPUs ``pid`` (0: the calling thread) may run on; None where that cannot be known."""
    try:
        return set(os.sched_getaffinity(pid))
    except (AttributeError, OSError):
        return None


def _threads() -> list[int]:
    """The thread ids of this process (Linux: /proc/self/task)."""
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


@dataclass
class Saturation:
    """The busy processes of one :func:`saturated` block, and what they show about the load."""

    procs: list[subprocess.Popen[bytes]]
    #: The CPUs the busy loops (and, when pinned, the test process) run on; None: every CPU of
    #: the machine, unpinned.
    cpus: set[int] | None = None
    started: float = field(default_factory=time.monotonic)
    load_before: float = field(default_factory=lambda: os.getloadavg()[0])

    def busy_cpu_seconds(self) -> float:
        return sum(_cpu_seconds(p.pid) for p in self.procs)

    def check(self) -> None:
        """The loops are still running and have been getting CPU: the CPUs were saturated
        all along (a loop that died would have left CPU to the subjects); pinned, every loop and
        the test process are still on the pinned CPU."""
        dead = [p.pid for p in self.procs if p.poll() is not None]
        assert dead == [], f"busy processes ended early: {dead}"
        assert self.busy_cpu_seconds() > 0.0, "the busy processes got no CPU time"
        if self.cpus is not None:
            placed = {p.pid: affinity(p.pid) for p in self.procs}
            assert all(a == self.cpus for a in placed.values()), placed
            assert affinity(0) == self.cpus, (affinity(0), self.cpus)

    def where(self) -> str:
        if self.cpus is None:
            mine = affinity(0)
            on = "?" if mine is None else ",".join(map(str, sorted(mine)))
            return f"unpinned (the test process may use CPU {on} of {os.cpu_count()})"
        return (f"pinned with the test process and its subjects to CPU "
                f"{','.join(map(str, sorted(self.cpus)))} of {os.cpu_count()}")

    def describe(self) -> str:
        wall = time.monotonic() - self.started
        cpu = self.busy_cpu_seconds()
        return (f"saturated: {len(self.procs)} busy processes {self.where()} for "
                f"{wall:.0f}s, {cpu:.1f} CPU-s between them ({cpu / max(wall, 1e-9):.2f} "
                f"cores); load average {self.load_before:.1f} before, "
                f"{os.getloadavg()[0]:.1f} now")


def _pin_target(pin: bool) -> set[int] | None:
    """The one CPU to pin to, or None for the whole machine (asked not to pin, no affinity
    control here, or a single CPU to begin with)."""
    if not pin or not hasattr(os, "sched_setaffinity"):
        return None
    mine = affinity(0)
    if mine is None or len(mine) < 2:
        return None
    return {max(mine)}


@contextlib.contextmanager
def _pinned(cpus: set[int] | None) -> Iterator[None]:
    """Every thread of this process on ``cpus`` for the block (threads and processes started
    meanwhile inherit it); each thread's own affinity back afterwards, and the one the calling
    thread had for threads started during the block."""
    if cpus is None:
        yield
        return
    own = affinity(0)
    before: dict[int, set[int]] = {}
    try:
        for tid in _threads():
            if (a := affinity(tid)) is not None:
                with contextlib.suppress(OSError):  # a thread that ended meanwhile
                    os.sched_setaffinity(tid, cpus)
                    before[tid] = a
        yield
    finally:
        for tid in _threads():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, before.get(tid, own or set()))


@contextlib.contextmanager
def saturated(per_cpu: int = 3, *, pin: bool = True) -> Iterator[Saturation]:
    cpus = _pin_target(pin)
    n = per_cpu * (len(cpus) if cpus is not None else (os.cpu_count() or 1))
    procs: list[subprocess.Popen[bytes]] = []
    with _pinned(cpus):
        try:
            for _ in range(n):
                procs.append(subprocess.Popen([sys.executable, "-c", BUSY],
                                              stdin=subprocess.DEVNULL, start_new_session=True))
                if cpus is not None:  # inherited already; said again, should that change
                    os.sched_setaffinity(procs[-1].pid, cpus)
            yield Saturation(procs, cpus)
        finally:
            for p in procs:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
            for p in procs:
                p.wait()
