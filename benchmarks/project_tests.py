"""``tests``: the project's own tests as ``nox -s tests`` runs them (``scripts/warm_imports.py``,
then ``pytest -n 4 -q``: four workers on two cores, while tests wait for their subjects the others
use the cores), against their budget.

The budget is for an idle 2-core machine: :data:`BUDGET_SECONDS` of wall time. The row also
gives the CPU time (user + system of pytest, its workers and every subject they started), which
a busy machine does not inflate the way it inflates wall time, and the load average before and
after, so that a run on a busy machine is read as such. Never a timed test: the suite only has
to pass on a loaded machine, as fast as the machine lets it.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: ``nox -s tests`` on an idle 2-core machine (issue 21: ~10 minutes before, 5 or less after).
BUDGET_SECONDS = 300.0
ROOT = Path(__file__).resolve().parents[1]
#: pytest-xdist workers, as in noxfile.py's ``tests`` session.
WORKERS = 4
#: In ``--smoke``: two quick tests, to check the row's shape.
SMOKE = ["tests/test_timing.py", "-k", "grows_by_the_load or has_a_cap"]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _counts(output: str) -> dict[str, int]:
    tail = output.strip().splitlines()[-1] if output.strip() else ""
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed)",
                                                   tail)}


def measure(smoke: bool = False) -> list[dict[str, Any]]:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += ["-n", "0", *SMOKE] if smoke else ["-n", str(WORKERS)]
    load = os.getloadavg()
    # pytest's own directories in one removed at the end (not pytest-of-<user> in $TMPDIR, which
    # is the test session's when tests/test_benchmarks.py runs this)
    with tempfile.TemporaryDirectory(prefix="tooluse-bench-tests-") as tmp:
        # As noxfile.py's bytecode_env: bytecode cached, here in a cold cache (as on a fresh CI
        # machine), whatever PYTHONDONTWRITEBYTECODE the machine sets. --smoke only checks the
        # row's shape: it keeps the caller's settings (the warm cache of the nox session that
        # runs tests/test_benchmarks.py; 6.7 to 1.7 CPU-s).
        env = dict(os.environ)
        if not smoke:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        cpu0, t0 = _children_cpu(), time.perf_counter()
        if not smoke:  # as nox -s tests does first
            subprocess.run([sys.executable, str(ROOT / "scripts" / "warm_imports.py")],
                           capture_output=True, cwd=ROOT, env=env)
        proc = subprocess.run([*argv, f"--basetemp={Path(tmp) / 'basetemp'}"],
                              capture_output=True, text=True, cwd=ROOT, env=env)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    cpus = os.cpu_count() or 1
    return [{
        "section": "tests", "what": f"the project's tests (nox -s tests: pytest -n {WORKERS} -q)"
        + (" — smoke: two tests" if smoke else ""),
        "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "exit": proc.returncode,
        "counts": _counts(proc.stdout), "cpus": cpus,
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "idle": load[0] < 0.5 * cpus,
        "budget": f"wall_seconds <= {BUDGET_SECONDS:g} on an idle 2-core machine",
        "ratio_to_budget": round(wall / BUDGET_SECONDS, 3),
        "met": wall <= BUDGET_SECONDS and proc.returncode == 0,
    }]
