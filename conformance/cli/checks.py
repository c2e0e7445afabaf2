"""``tooluse checks``: list the check catalog (id, severity, tool types, source, the sentence
it rests on, statement)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from conformance.errors import UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help="list the conformance check catalog",
                              description=__doc__.splitlines()[0])
    p.add_argument("--family", default=None, metavar="F", help="only this family (bash, editor, loop, worker)")
    p.add_argument("--tool-type", default=None, metavar="T",
                   help="only the checks that apply to this tool type")
    p.add_argument("--json", action="store_true", help="the catalog as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    import conformance.checks  # noqa: F401  (registers every check)
    from conformance.basis import basis_lines
    from conformance.catalog import CATALOG

    checks = sorted(CATALOG.values(), key=lambda c: c.id)
    families = sorted({c.family for c in checks})
    if args.family is not None:
        if args.family not in families:
            raise UsageError(f"--family {args.family}: no such family; use one of "
                             f"{', '.join(families)}")
        checks = [c for c in checks if c.family == args.family]
    if args.tool_type is not None:
        known = sorted({t for c in CATALOG.values() for t in c.applies_to})
        if args.tool_type not in known:
            raise UsageError(f"--tool-type {args.tool_type}: no check applies to it; known tool "
                             f"types: {', '.join(known)}")
        checks = [c for c in checks if c.applies(args.tool_type)]
    if args.json:
        json.dump([c.to_json() for c in checks], sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    for c in checks:
        types = ", ".join(sorted(c.applies_to))
        print(f"{c.id}  [{c.severity}]  {c.statement}")
        print(f"    applies to: {types}")
        print(f"    source: {c.source.cite()}")
        for line in basis_lines(c.basis_json()):
            print(f"    {line}")
    print(f"{len(checks)} checks")
    return 0
