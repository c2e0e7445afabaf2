"""``tooluse matrix merge DIR... --out DIR``: join the shards of ``tooluse matrix --shard K/N``.

They become the matrix.json, matrix.md, matrix.html and runs/ of one run; then the critical path
(the slowest shard, what a split by the times just recorded would save) is printed.

Exit 0 when the matrix is written and every column ran to the end, 1 when a column's run failed,
2 when the shards cannot be joined (the message names which and why).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, prog="tooluse matrix merge", help=argparse.SUPPRESS,
        description=__doc__.splitlines()[0],
        epilog="Refused (exit 2), naming the shards: another config, suite version, selection "
               "or split, a shard missing or given twice, a cell two shards ran or none did, a "
               "column whose environment differs between shards. See docs/ci.md.")
    p.add_argument("shards", nargs="+", type=Path, metavar="DIR",
                   help="a shard's --out directory (it holds shard.json and runs/)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="write matrix.json, matrix.md, matrix.html and runs/<name>/ into DIR")
    return p


def run(args: argparse.Namespace) -> int:
    from conformance.cli import EXIT_FAIL, EXIT_OK
    from conformance.errors import UsageError
    from conformance.matrix import write_matrix
    from conformance.matrix.merge import critical_path, load_matrix_shard, merge_matrix

    shards = [load_matrix_shard(d.resolve()) for d in args.shards]
    out = args.out.resolve()
    if any(out == s.where for s in shards):
        raise UsageError(f"--out {args.out} is one of the shards; write the merge elsewhere")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror})") from None
    doc, columns = merge_matrix(shards, out)
    paths = write_matrix(doc, out)
    flagged = [r["id"] for r in doc["checks"] if r["review"]]
    print(f"tooluse matrix merge: {len(shards)} shards, {len(doc['checks'])} checks x "
          f"{len(columns)} implementations; flagged for review: {', '.join(flagged) or 'none'}")
    print("\n".join(critical_path(shards, columns)))
    print(f"reports: {', '.join(str(p) for p in paths)}")
    return EXIT_FAIL if any(c.status == "error" for c in columns) else EXIT_OK
