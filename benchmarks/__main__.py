"""``python -m benchmarks``: run every section, print a table, write ``reports/bench.json``."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from . import replay, validation

SECTIONS = {"replay": replay.measure, "validation": validation.measure}


def _fmt(row: dict[str, Any]) -> str:
    keys = [k for k in row if k != "section"]
    return "  ".join(f"{k}={row[k]}" for k in keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append")
    parser.add_argument("--out", default="reports/bench.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "sections": {}}
    for name, fn in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"== {name}", flush=True)
        rows = fn()
        results["sections"][name] = rows
        for row in rows:
            print("  " + _fmt(row), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
