"""A saturated machine, on purpose: busy processes competing with the suite for every core.

CI runners are shared; the suite's verdicts must not depend on how busy they are (issue 21).
:func:`saturated` starts ``per_cpu`` busy loops per CPU (6 on 2 cores: each process of the suite
gets a fraction of a core), and stops them on the way out, whatever happens in between."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

#: A busy loop that ends by itself when the test process is gone (killed with SIGKILL or by a
#: timeout that skips ``finally``): it must never go on loading a shared machine.
BUSY = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"


@contextlib.contextmanager
def saturated(per_cpu: int = 3) -> Iterator[list[subprocess.Popen[bytes]]]:
    n = per_cpu * (os.cpu_count() or 1)
    procs = [subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL,
                              start_new_session=True) for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
