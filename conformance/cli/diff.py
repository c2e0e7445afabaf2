"""``tooluse diff A B``: compare two results files, or two fixture sets / recordings.

Results (``results.json`` or a run directory): checks that changed outcome, new and removed
checks. Traffic (a fixture or recording directory, or one cassette): block types and fields that
appeared or vanished, stop-reason and error-code distributions, tools called, turns per
conversation, and the requests the simulator's rules refuse. Probes (``tooluse probe --out``
directories): per scenario and in total, tool-call sequences, stop reasons, turns, tokens, errors,
refusals and drift that changed, regressions first (also ``--format html``). The kind of A and B
is detected.
Exit 0, or 1 with ``--fail-on-regression`` when B regressed; 2 on unusable input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.reports.diff import (
    DiffInputError,
    diff_paths,
    has_regressions,
    render_json,
    render_markdown,
)
from conformance.reports.results_file import write_atomic

from . import EXIT_FAIL, EXIT_OK, UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="compare two results files or two fixture/recording sets (model upgrades)",
        description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A", help="before: results.json, a run directory, a fixture "
                                          "or recording directory, or a cassette")
    p.add_argument("b", metavar="B", help="after: the same kind as A")
    p.add_argument("--format", choices=("md", "json", "html"), default="md",
                   help="output format (default: md; html for two probe outputs)")
    p.add_argument("--out", metavar="FILE", help="write the report to FILE (default: stdout)")
    p.add_argument("--no-refusals", action="store_true",
                   help="traffic diffs: skip replaying requests through the simulator's rules")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when a check regressed, or B has requests the simulator refuses")
    return p


def run(args: argparse.Namespace) -> int:
    from conformance.probe.run import is_probe_output

    if is_probe_output(Path(args.a)) or is_probe_output(Path(args.b)):
        return _probe(args)  # two `tooluse probe --out` directories (docs/model-upgrade.md)
    if args.format == "html":
        raise UsageError("--format html compares two probe outputs (tooluse probe --out); "
                         "use md or json here")
    try:
        diff = diff_paths(args.a, args.b, refusals=not args.no_refusals)
    except DiffInputError as e:
        raise UsageError(str(e)) from None
    text = render_json(diff) if args.format == "json" else render_markdown(diff)
    if args.out:
        write_atomic(Path(args.out), text)
        print(f"tooluse diff: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.fail_on_regression and has_regressions(diff):
        return EXIT_FAIL
    return EXIT_OK


def _probe(args: argparse.Namespace) -> int:
    from conformance.probe.compare import diff_probes
    from conformance.probe.compare import has_regressions as probe_regressions
    from conformance.probe.run import ProbeOutputError

    try:
        diff = diff_probes(args.a, args.b)
    except ProbeOutputError as e:
        raise UsageError(f"{e} (both A and B must be probe outputs)") from None
    if args.format == "html":
        from conformance.reports.diff_probe_html import render_probe_html
        text = render_probe_html(diff)
    elif args.format == "json":
        text = render_json(diff)
    else:
        from conformance.reports.diff_probe import render_probe_md
        text = render_probe_md(diff)
    if args.out:
        write_atomic(Path(args.out), text)
        print(f"tooluse diff: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_FAIL if args.fail_on_regression and probe_regressions(diff) else EXIT_OK
