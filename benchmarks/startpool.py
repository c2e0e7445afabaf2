"""A slow start-up paid once, not per case (issue 41): the start pool.

``tooluse run`` of the whole bash family against ``tests/conformant/slow_start_bash.py``, a
conformant bash subject that sleeps ``SLOW_START_SECONDS`` before it reads its first input (an
interpreter importing a large SDK), with an 8 s start-up:

- with the start pool (command subjects started ahead of need: conformance/subjects/pool.py);
- without it (``TOOLUSE_START_POOL=0``: each case, example and replay starts its own subject when
  it needs one, as before);
- and with no start-up at all, whose verdicts both must equal (``verdicts_equal``).

Target: under 2 minutes with the pool on an idle 2-core machine (``load_average`` says how idle it
was). ``--smoke``: a 1 s start-up and a few checks, with the pool and with no start-up (the row's
shape and the verdicts; no run without the pool).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .suite import CLI, ROOT

TARGET_SECONDS = 120.0
DELAY = 8.0
SMOKE_DELAY = 1.0
SMOKE_CHECKS = ["bash.session.*", "bash.output.roundtrip"]
SUBJECT = ROOT / "tests" / "conformant" / "slow_start_bash.py"


def _run(delay: float, checks: list[str], *, pool: bool) -> dict[str, Any]:
    """One ``tooluse run`` of the subject with a ``delay`` s start-up: wall seconds, verdicts,
    what starting the subjects cost (results.json's ``run.startup``)."""
    command = (f"env SLOW_START_SECONDS={delay:g} {shlex.quote(sys.executable)} "
               f"{shlex.quote(str(SUBJECT))}")
    env = {**os.environ, "TOOLUSE_START_POOL": "1" if pool else "0"}
    with tempfile.TemporaryDirectory(prefix="tooluse-bench-startpool-") as tmp:
        argv = [sys.executable, "-c", CLI, "run", "--bash-cmd", command, "--name", "slow-start",
                "--quiet", "--out", tmp, *[a for c in checks for a in ("--check", c)]]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
        seconds = time.perf_counter() - t0
        try:
            doc = json.loads((Path(tmp) / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {"results": [], "run": {}}
    return {"seconds": seconds, "exit": proc.returncode,
            "verdicts": {r["check_id"]: r["outcome"] for r in doc["results"]},
            "startup": doc["run"].get("startup", {}), "stderr": proc.stderr[-400:]}


def measure(smoke: bool = False) -> list[dict[str, Any]]:
    delay = SMOKE_DELAY if smoke else DELAY
    checks = SMOKE_CHECKS if smoke else ["bash.*"]
    quick = _run(0, checks, pool=True)
    after = _run(delay, checks, pool=True)
    before = None if smoke else _run(delay, checks, pool=False)
    same = bool(quick["verdicts"]) and after["verdicts"] == quick["verdicts"] and (
        before is None or before["verdicts"] == quick["verdicts"])
    row: dict[str, Any] = {
        "section": "startpool",
        "what": f"tooluse run: the bash family ({len(quick['verdicts'])} checks) on a bash subject "
                f"with a {delay:g} s start-up" + (" (smoke: a few checks)" if smoke else ""),
        "startup_delay_seconds": delay, "checks": len(after["verdicts"]),
        "seconds": round(after["seconds"], 2),
        "before_seconds": round(before["seconds"], 2) if before is not None else None,
        "no_delay_seconds": round(quick["seconds"], 2),
        "startup": after["startup"],
        "before_startup": before["startup"] if before is not None else None,
        "verdicts_equal": same,
        "exit_codes": [quick["exit"], after["exit"], *([before["exit"]] if before else [])],
        "target": f"seconds < {TARGET_SECONDS:g} on an idle 2-core machine, verdicts equal",
        "met": after["seconds"] < TARGET_SECONDS and same,
    }
    if not same:
        row["verdicts"] = {"no_delay": quick["verdicts"], "pool": after["verdicts"],
                           "no_pool": before["verdicts"] if before is not None else None}
        row["stderr"] = after["stderr"]
    return [row]
