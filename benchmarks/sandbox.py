"""The cost of the subject sandbox (issue 17).

``run``: ``tooluse run --all-reference`` with ``--sandbox required`` and with ``--sandbox off``,
alternated (off, on, on, off, ...) so that drifting machine load hits both alike; the ratio of the
medians of wall time (target <= 1.2x) and of the CPU time of the run's processes (harness and
subjects: ``RUSAGE_CHILDREN``), which load disturbs less.

``startup``: the added start-up per case: a subject opened and made ready (the runner's readiness
call) and closed, with and without the sandbox: a command subject (``python`` speaking JSON lines:
a fresh ``bwrap`` per case) and an in-process subject (forked by the fork server, which runs in
one ``bwrap`` per subject: per case it costs nothing more than the fork).

Skipped (a row saying why) where no sandbox works.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .suite import CLI, ROOT

TARGET_RATIO = 1.2
ECHO = ("import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'content': ''}), flush=True)\n")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _one_run(mode: str, args: list[str]) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, t0 = _children_cpu(), time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CLI, "run", "--sandbox", mode, *args,
                               "--out", tmp], capture_output=True, text=True, cwd=ROOT)
        return time.perf_counter() - t0, _children_cpu() - cpu0, proc.returncode


def measure_run(smoke: bool = False) -> list[dict[str, Any]]:
    args = ["--bash", "reference-bash", "--check", "bash.output.roundtrip"] if smoke \
        else ["--all-reference"]
    rounds = 1 if smoke else 2
    wall: dict[str, list[float]] = {"off": [], "required": []}
    cpu: dict[str, list[float]] = {"off": [], "required": []}
    codes = []
    for i in range(rounds):
        for mode in (("off", "required") if i % 2 == 0 else ("required", "off")):
            w, c, code = _one_run(mode, args)
            wall[mode].append(w)
            cpu[mode].append(c)
            codes.append(code)
    ratio = statistics.median(wall["required"]) / statistics.median(wall["off"])
    cpu_ratio = statistics.median(cpu["required"]) / statistics.median(cpu["off"])
    return [{
        "section": "sandbox", "what": f"tooluse run {' '.join(args)}: --sandbox required / off",
        "rounds": rounds, "off_seconds": [round(x, 2) for x in wall["off"]],
        "sandboxed_seconds": [round(x, 2) for x in wall["required"]],
        "wall_ratio": round(ratio, 3), "cpu_ratio": round(cpu_ratio, 3),
        "off_cpu_seconds": [round(x, 2) for x in cpu["off"]],
        "sandboxed_cpu_seconds": [round(x, 2) for x in cpu["required"]],
        "exit_codes": codes, "target": f"wall_ratio <= {TARGET_RATIO}",
        "met": ratio <= TARGET_RATIO and all(c == 0 for c in codes),
    }]


def _open_close(subject: Any, work: Path) -> float:
    t0 = time.perf_counter()
    from conformance.subjects.case import CaseSettings
    from conformance.subjects.launch import Confinement

    s = subject.open(work, CaseSettings(timeout=3.0, startup_timeout=30.0,
                                        confinement=Confinement.from_environ(os.environ)))
    s.wait_ready(30.0)
    s.close()
    return time.perf_counter() - t0


def measure_startup(smoke: bool = False) -> list[dict[str, Any]]:
    from conformance.subjects import forkserver
    from conformance.subjects.spec import command_subject, factory_subject

    n = 1 if smoke else 30  # cases timed after the first (which starts the fork server)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "echo.py"
        script.write_text(ECHO)
        subjects = {
            "command (python JSON lines)": command_subject(f"{sys.executable} {script}",
                                                           family="bash"),
            "in-process (reference bash, fork server)": factory_subject(
                "conformance.reference.bash:factory", family="bash", name="reference-bash"),
        }
        for name, subject in subjects.items():
            per: dict[str, float] = {}
            for mode in ("off", "required"):
                os.environ["TOOLUSE_SANDBOX"] = mode
                root = Path(tempfile.mkdtemp(prefix="tooluse-run-", dir=tmp))
                times = []
                for i in range(n + 1):
                    work = root / f"case-{i}"
                    work.mkdir()
                    times.append(_open_close(subject, work.resolve()))
                forkserver.shutdown()
                per[mode] = statistics.median(times[1:])  # the first starts the fork server
            os.environ.pop("TOOLUSE_SANDBOX", None)
            rows.append({"section": "sandbox", "what": f"start-up per case: {name}",
                         "cases": n, "off_ms": round(per["off"] * 1000, 1),
                         "sandboxed_ms": round(per["required"] * 1000, 1),
                         "added_ms": round((per["required"] - per["off"]) * 1000, 1)})
    return rows


def measure(smoke: bool = False) -> list[dict[str, Any]]:
    from conformance.subjects import sandbox

    st = sandbox.status("required")
    if not st.active:
        return [{"section": "sandbox", "skipped": f"no sandbox here: {st.reason}"}]
    return measure_startup(smoke) + measure_run(smoke)
