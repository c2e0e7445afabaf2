"""``tooluse lint-tools FILE...``: check tool declarations against the documented rules.

One line per violation: ``FILE:POINTER: LEVEL rule.id: message [source]``. Exit 0 when every file
is clean, 1 when any violation is found, 2 on usage errors (missing file, broken JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import EXIT_FAIL, EXIT_OK, UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="check custom tool declarations and Messages tool lists",
        description=__doc__.splitlines()[0],
        epilog="FILE holds a tools list, a Managed Agents agent, or a Messages request (JSON).")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--kind", choices=("auto", "agent", "messages"), default="auto",
                   help="which rules apply (default: guessed from the file)")
    p.add_argument("--max-tools", type=int, default=None, metavar="N",
                   help="the agent tools limit (default 256, as the translated custom-tools page says; the English page says 128)")
    p.add_argument("--json", action="store_true", help="one JSON report per file")
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.declarations import DEFAULT_MAX_TOOLS

    from ..lint_tools import LintInputError, lint_file

    max_tools = DEFAULT_MAX_TOOLS if args.max_tools is None else args.max_tools
    if max_tools < 1:
        raise UsageError(f"--max-tools {max_tools}: give a positive number")
    reports = []
    for path in args.files:
        try:
            reports.append(lint_file(path, kind=args.kind, max_tools=max_tools))
        except LintInputError as e:
            raise UsageError(str(e)) from None
    found = 0
    for report in reports:
        found += len(report.findings)
        if args.json:
            print(json.dumps(report.to_json()))
            continue
        for f in report.findings:
            print(f"{report.path}:{f.pointer or '/'}: {f.level} {f.rule}: {f.message} "
                  f"[{f.source.cite()}]")
    if not args.json:
        clean = sum(1 for r in reports if not r.findings)
        print(f"{len(reports)} file(s), {found} violation(s), {clean} clean", file=sys.stderr)
    return EXIT_FAIL if found else EXIT_OK
