"""``tooluse lint-fixtures [DIR|FILE ...]``: lint the fixture corpus (default: the bundled one).

Every cassette must load, validate against the schemas in strict mode, hold no secret, replay
through the simulator with its own recorded requests (``expect_rule`` exchanges get that rule's
error), and parse with the ``anthropic`` SDK's types without losing a field. Each problem is
printed as ``file:pointer: message``. Exit 0 when the corpus is clean, 1 on problems, 2 on usage
errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from simulator.cassette import CassetteError, default_fixtures_root, resolve_fixture
from simulator.lint import STEPS, LintReport, lint_paths

from . import EXIT_FAIL, EXIT_OK, UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="lint fixture cassettes (load, schema, secrets, replay, SDK types)",
        description=__doc__.split("\n\n")[0])
    p.add_argument("targets", nargs="*", metavar="DIR",
                   help="fixtures directories or cassette files, each a path or a corpus name "
                        "(default: the bundled corpus)")
    p.add_argument("--skip", action="append", default=[], choices=STEPS[1:], metavar="STEP",
                   help=f"skip a step (repeatable): one of {', '.join(STEPS[1:])}")
    p.add_argument("--quiet", "-q", action="store_true", help="print problems only, no summary")
    return p


def run(args: argparse.Namespace) -> int:
    targets = [resolve_fixture(t) for t in args.targets] or [default_fixtures_root()]
    for target in targets:  # every usage error before any linting
        if not target.exists():
            raise UsageError(f"{target}: no such file or directory; pass a fixtures directory or "
                             "a cassette file")
        if target.is_file() and target.suffix != ".json":
            raise UsageError(f"{target}: a cassette is a .json file")
    steps = [s for s in STEPS if s not in set(args.skip)]
    report = LintReport()
    for target in targets:
        try:
            one = lint_paths(target, steps)
        except CassetteError as e:  # an unreadable directory, a missing target
            raise UsageError(str(e)) from None
        if one.checked == 0:  # an error, not a clean corpus: no summary before it
            raise UsageError(f"{target}: no cassettes found (*.json)")
        report.checked += one.checked
        report.problems += one.problems
    for problem in report.problems:
        print(problem)
    if not args.quiet:
        files = len({p.path for p in report.problems})
        verdict = "clean" if report.ok else f"{len(report.problems)} problem(s) in {files} file(s)"
        print(f"{report.checked} cassette(s) linted: {verdict}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAIL
