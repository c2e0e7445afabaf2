"""``python -m benchmarks``: run every section, print a table, write ``reports/bench.json``.

Sections: ``replay`` (in-process SDK replay: simulator vs VCR.py vs the transport floor),
``serve`` (``tooluse serve`` throughput under load from a second process), ``validation``
(blocks/s; cost growth with conversation length), ``suite`` (``tooluse run --all-reference`` +
``tooluse lint-fixtures`` wall time), ``scaleout`` (the suite under pytest-xdist, 1 vs 2 workers),
``sandbox`` (the reference run with and without the subject sandbox; start-up added per case),
``startpool`` (the bash family on a subject with an 8 s start-up, with the start pool and without:
under 2 minutes, the same verdicts as with no start-up), ``shards`` (the committed tool matrix
split over 1, 2 and 4 shards by its recorded durations: each shard's load, ideal against real
speed-up, a real merge of synthetic shards, one more shard's start-up), ``tests`` (the project's own tests as
``nox -s tests`` runs them: wall and CPU time against the budget for an idle 2-core machine).
``--smoke`` runs each in a tiny mode (for tests: the JSON shape, not the speed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import project_tests, replay, sandbox, serve, shards, startpool, suite, validation

SECTIONS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "replay": replay.measure, "serve": serve.measure, "validation": validation.measure,
    "suite": suite.measure_suite, "scaleout": suite.measure_scaleout,
    "sandbox": sandbox.measure, "startpool": startpool.measure, "shards": shards.measure,
    "tests": project_tests.measure,
}


def _fmt(row: dict[str, Any]) -> str:
    return "  ".join(f"{k}={v}" for k, v in row.items() if k != "section")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append",
                        help="run only this section (repeatable)")
    parser.add_argument("--smoke", action="store_true",
                        help="a few iterations of each section: checks it runs, not the speed")
    parser.add_argument("--out", default="reports/bench.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                               "cpus": os.cpu_count(), "smoke": args.smoke,
                               "load_average": list(os.getloadavg()),
                               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "sections": {}}
    for name, fn in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        rows = fn(smoke=args.smoke)
        results["sections"][name] = rows
        for row in rows:
            print("  " + _fmt(row), flush=True)
        print(f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    results["load_average_end"] = list(os.getloadavg())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
