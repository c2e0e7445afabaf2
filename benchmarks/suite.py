"""Suite wall time, and scale-out under pytest-xdist.

``suite``: ``tooluse run --all-reference`` (every bundled reference subject: bash, the four text
editor versions, the reference agent loop over its fixture-corpus scenarios, the reference
Managed Agents worker) with the default hypothesis profile, plus ``tooluse lint-fixtures`` (the
whole fixture corpus: identity, schemas, secrets, replay through the engine, SDK parsing), each
timed as a separate process. The split per family comes from ``results.json``: the sum of check
durations per family (checks run concurrently, so these add up to more than the wall time).

``scaleout``: the bash and text editor reference subjects as pytest items (the project's plugin,
``--tooluse-bash``/``--tooluse-editor``), under ``pytest -n 1`` then ``-n 2``, each writing ONE
merged ``results.json`` (``--tooluse-out``); the speed-up is the ratio of the two wall times.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_SECONDS = 60.0
ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
EDITORS = ("reference-editor-20241022", "reference-editor-20250124", "reference-editor-20250429",
           "reference-editor-20250728")


def _timed(argv: list[str], timeout: float | None = None,
           cwd: Path = ROOT) -> tuple[float, subprocess.CompletedProcess[str]]:
    """No wall cap by default: a loaded machine makes a run slower, never a failure."""
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return time.perf_counter() - t0, proc


def _by_family(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    fams: dict[str, dict[str, Any]] = collections.defaultdict(lambda: {"checks": 0, "seconds": 0.0})
    for r in results:
        f = fams[r["family"]]
        f["checks"] += 1
        f["seconds"] += float(r.get("duration") or 0.0)
    return {k: {"checks": v["checks"], "check_seconds": round(v["seconds"], 2)}
            for k, v in sorted(fams.items())}


def measure_suite(smoke: bool = False) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        run_args = ["--bash", "reference-bash", "--check", "bash.output.roundtrip"] if smoke \
            else ["--all-reference"]
        run_s, run = _timed([sys.executable, "-c", CLI, "run", *run_args, "--out", tmp])
        doc = json.loads((Path(tmp) / "results.json").read_text())
        # smoke: the identity step only (every cassette read; the other steps have their tests)
        lint_args = [a for step in ("sdk", "replay", "secrets", "schema")
                     for a in ("--skip", step)] if smoke else []
        lint_s, lint = _timed([sys.executable, "-c", CLI, "lint-fixtures", "--quiet", *lint_args])
    total = run_s + lint_s
    return [{
        "section": "suite", "what": "tooluse run --all-reference + tooluse lint-fixtures",
        "run_seconds": round(run_s, 2), "run_exit": run.returncode,
        "checks": doc["summary"]["total"], "verdict": doc["summary"]["verdict"],
        "lint_fixtures_seconds": round(lint_s, 2), "lint_exit": lint.returncode,
        "total_seconds": round(total, 2), "by_family": _by_family(doc["results"]),
        "target": f"total_seconds < {TARGET_SECONDS:g}", "met": total < TARGET_SECONDS
        and run.returncode == 0 and lint.returncode == 0,
    }, _progress_overhead(smoke)]


#: Progress output may cost at most this much of a run's wall time (as a ratio).
PROGRESS_RATIO = 1.05


def _progress_overhead(smoke: bool) -> dict[str, Any]:
    """The run's wall time with progress drawn (``--progress bar``: a write when each check
    starts and ends, the most any mode writes) over the same run with ``--quiet``; runs
    alternate, the fastest of each kind counts (the machine's noise is one-sided)."""
    subjects = ["--bash", "reference-bash", "--check", "bash.output.roundtrip"] if smoke else [
        "--bash", "reference-bash", "--editor", "reference-editor-20250728"]
    best = {"bar": float("inf"), "off": float("inf")}
    for _ in range(1 if smoke else 3):
        for mode in best:
            seconds, _proc = _timed([sys.executable, "-c", CLI, "run", *subjects,
                                     "--progress", mode])
            best[mode] = min(best[mode], seconds)
    ratio = best["bar"] / best["off"]
    return {"section": "suite", "what": "progress on stderr (--progress bar) vs --quiet",
            "with_progress_seconds": round(best["bar"], 3),
            "quiet_seconds": round(best["off"], 3), "ratio": round(ratio, 3),
            "target": f"ratio < {PROGRESS_RATIO:g}", "met": ratio < PROGRESS_RATIO}


#: ``--smoke``: two quick checks of the bash reference, one item for each of two workers (a run
#: costs mostly pytest's and each worker's start-up, whatever the items).
SMOKE_CHECKS = ("bash.output.roundtrip", "bash.output.stdout_and_stderr")


def _pytest(workers: int, out: Path, smoke: bool) -> tuple[float, dict[str, Any], int]:
    subjects = ["--tooluse-bash", "reference-bash"]
    for e in () if smoke else EDITORS:
        subjects += ["--tooluse-editor", e]
    checks = [a for c in SMOKE_CHECKS for a in ("--tooluse-check", c)] if smoke else []
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(out),
            "-c", str(out / "pytest.ini"), "-n", str(workers), *subjects, *checks,
            "--tooluse-out", str(out / "results"),
            f"--basetemp={out / 'basetemp'}"]  # inside out, not pytest-of-<user> in $TMPDIR
    (out / "pytest.ini").write_text("[pytest]\n")  # not the project's tests: the suite only
    seconds, proc = _timed(argv, cwd=out)
    doc = json.loads((out / "results" / "results.json").read_text())
    return seconds, doc, proc.returncode


def measure_scaleout(smoke: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    times: dict[int, float] = {}
    for workers in (1, 2):
        with tempfile.TemporaryDirectory() as tmp:
            seconds, doc, code = _pytest(workers, Path(tmp), smoke)
        times[workers] = seconds
        rows.append({"section": "scaleout", "workers": workers, "wall_seconds": round(seconds, 2),
                     "results_in_one_report": len(doc["results"]),
                     "verdict": doc["summary"]["verdict"], "pytest_exit": code})
    speedup = times[1] / times[2] if times[2] else 0.0
    rows.append({"section": "scaleout", "what": "speed-up from 1 to 2 xdist workers",
                 "speedup": round(speedup, 2),
                 "same_results": rows[0]["results_in_one_report"] == rows[1]["results_in_one_report"],
                 "note": "2 cores shared with the machine's other work; the reference subjects "
                         "spend much of their time in subprocess start-up and I/O"})
    return rows
