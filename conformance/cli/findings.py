"""``tooluse findings MATRIX_DIR [--out DIR] [--verify]``: one folder per failing matrix cell.

Each folder holds ``repro.py`` (standalone: the implementation's own API and the standard
library; exit 1 while the defect is there, 0 once fixed), ``ISSUE.md`` (an issue draft) and
``finding.json``; ``README.md`` lists them all with counts per column. ``--verify`` then runs
each reproducer in its column's pinned environment (the one ``tooluse matrix`` built; a column
whose environment is not on this machine is left unverified) and records the exit codes. Exit 0
when the findings are written (and, with ``--verify``, every reproducer ran), 1 when a reproducer
could not run, 2 on a bad directory. See docs/matrix.md "Findings a maintainer can run".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.cli import EXIT_FAIL, EXIT_OK
from conformance.errors import UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help="write a reproducer and an issue draft for every failing matrix cell",
        description=__doc__.splitlines()[0],
        epilog="Exit codes: 0 written (and verified), 1 a reproducer could not run, 2 a bad "
               "directory. See docs/matrix.md.")
    p.add_argument("matrix_dir", type=Path, metavar="MATRIX_DIR",
                   help="a tooluse matrix --out directory (matrix.json and runs/)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where to write the findings (default MATRIX_DIR/findings)")
    p.add_argument("--verify", action="store_true",
                   help="run every reproducer in its column's pinned environment and record "
                        "its exit code")
    p.add_argument("--column", dest="columns", action="extend", nargs="+", default=[],
                   metavar="NAME", help="verify only these columns")
    p.add_argument("--no-write", action="store_true",
                   help="with --verify: verify the folders already written, do not rewrite them")
    return p


def run(args: argparse.Namespace) -> int:
    from conformance.findings import generate
    from conformance.findings.verify import verify
    from conformance.findings.write import load_records

    matrix_json = args.matrix_dir / "matrix.json"
    if not matrix_json.is_file():
        raise UsageError(f"{args.matrix_dir}: no matrix.json (a tooluse matrix --out directory)")
    try:
        doc = json.loads(matrix_json.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"{matrix_json}: not a readable matrix.json: {e}") from e
    out = args.out or args.matrix_dir / "findings"
    if args.no_write:
        records = load_records(out)
    else:
        out, records = generate(args.matrix_dir, out)
    with_repro = sum(bool(r.get("repro")) for r in records)
    print(f"tooluse findings: {len(records)} finding(s), {with_repro} reproducer(s) in {out}")
    if not args.verify:
        return EXIT_OK
    impls = {i["name"]: i for i in doc["implementations"]}
    title = f"{doc.get('config') or args.matrix_dir.name} ({args.matrix_dir.as_posix()})"
    config = Path(str(doc.get("config") or ""))
    records = verify(out, impls, title=title, columns=args.columns, config=config,
                     progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    codes = [r["exit_codes"][-1]["exit_code"] for r in records
             if r.get("repro") and r.get("exit_codes")]
    print(f"tooluse findings --verify: {codes.count(1)} exit 1 (reproduces), {codes.count(0)} "
          f"exit 0 (no longer reproduces), {sum(c not in (0, 1) for c in codes)} could not run")
    return EXIT_FAIL if any(c is not None and c not in (0, 1) for c in codes) else EXIT_OK
