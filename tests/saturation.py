"""A saturated machine, on purpose: busy processes competing with the suite for every core.

CI runners are shared; the suite's verdicts must not depend on how busy they are (issue 21).
:func:`saturated` starts ``per_cpu`` busy loops per CPU (6 on 2 cores: each process of the suite
gets a fraction of a core), and stops them on the way out, whatever happens in between (a
failure, Ctrl-C). If the test process dies without its ``finally`` (SIGKILL, a timeout that
exits at once), the loops see their parent gone and end by themselves."""

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


@dataclass
class Saturation:
    """The busy processes of one :func:`saturated` block, and what they show about the load."""

    procs: list[subprocess.Popen[bytes]]
    started: float = field(default_factory=time.monotonic)
    load_before: float = field(default_factory=lambda: os.getloadavg()[0])

    def busy_cpu_seconds(self) -> float:
        return sum(_cpu_seconds(p.pid) for p in self.procs)

    def check(self) -> None:
        """The loops are still running and have been getting CPU: the machine was saturated
        all along (a loop that died would have left a core to the suite)."""
        dead = [p.pid for p in self.procs if p.poll() is not None]
        assert dead == [], f"busy processes ended early: {dead}"
        assert self.busy_cpu_seconds() > 0.0, "the busy processes got no CPU time"

    def describe(self) -> str:
        wall = time.monotonic() - self.started
        cpu = self.busy_cpu_seconds()
        return (f"saturated: {len(self.procs)} busy processes on {os.cpu_count()} CPUs for "
                f"{wall:.0f}s, {cpu:.1f} CPU-s between them ({cpu / max(wall, 1e-9):.2f} "
                f"cores); load average {self.load_before:.1f} before, "
                f"{os.getloadavg()[0]:.1f} now")


@contextlib.contextmanager
def saturated(per_cpu: int = 3) -> Iterator[Saturation]:
    n = per_cpu * (os.cpu_count() or 1)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL,
                                          start_new_session=True))
        yield Saturation(procs)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
