"""``tooluse run merge DIR... --out DIR``: join the shards of one ``tooluse run --shard K/N``.

The shards' results become one run's ``results.json``, JUnit, Markdown and HTML.

Exit codes as ``tooluse run``'s: 0 every MUST check passes (or the baseline holds), 1 otherwise,
2 when the shards cannot be joined (the message names which and why).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, prog="tooluse run merge", help=argparse.SUPPRESS,
        description=__doc__.splitlines()[0],
        epilog="Refused (exit 2), naming the directories: a shard missing or given twice, shards "
               "of different runs (subjects, checks, history) or suite versions, a case two "
               "shards ran or none did. See docs/ci.md.")
    p.add_argument("shards", nargs="+", type=Path, metavar="DIR",
                   help="a shard's --out directory (or its results.json)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="write the joined results.json and reports into DIR")
    p.add_argument("--expected-failures", type=Path, default=None, metavar="FILE",
                   help="a baseline of known failures: only new failures fail")
    return p


def run(args: argparse.Namespace) -> int:
    from conformance.cli.run import expected_failures
    from conformance.errors import UsageError
    from conformance.reports import write_reports
    from conformance.reports.bundle import RESULTS, exit_code
    from conformance.reports.merge import load_shard, merge_documents
    from conformance.reports.results_file import dumps, write_atomic

    shards = [load_shard(d) for d in args.shards]
    baseline = expected_failures(args.expected_failures)
    doc = merge_documents(shards)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror})") from None
    results = args.out / RESULTS
    write_atomic(results, dumps(doc))
    paths, verdict = write_reports(doc, args.out, baseline=baseline)
    s = doc["summary"]
    print(f"tooluse run merge: {len(shards)} shards, {s['total']} results: {s['pass']} pass, "
          f"{s['fail']} fail, {s['skip']} skip, {s['error']} error; verdict {s['verdict']}")
    print(f"reports: {', '.join(str(p) for p in [results, *paths.values()])}")
    if verdict is not None:
        print("\n".join(verdict.lines()))
    return exit_code(doc, verdict)
