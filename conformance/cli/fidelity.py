"""``tooluse fidelity DIR``: measure the simulator on a directory of live captures.

DIR holds capture files (one JSON per artifact: ``{"source", "kind": "request|response|
sse_events|error", "note", "data"}``, the layout of docs/schemas.md "Captures"). Each request is
judged by the simulator's rules with the state of its recording and compared with the API's real
answer; each live stream's envelope (pings, padding, chunk lengths) is set beside the
simulator's stream of the same message. Prints the agreement table: false refusals, false
accepts, message agreement, count_tokens estimates, stream envelope distributions.
Exit 0 (1 with --fail-on-disagreement when a live 2xx is refused or a live 400/404 accepted);
2 on unusable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

from . import EXIT_FAIL, EXIT_OK, UsageError


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="measure the simulator on a directory of live captures",
        description=__doc__.split("\n\n")[0])
    p.add_argument("captures", metavar="DIR", help="a directory of capture files (*.json)")
    p.add_argument("--format", choices=("md", "json"), default="md",
                   help="output format (default: md)")
    p.add_argument("--as-of", metavar="YYYY-MM-DD",
                   help="judge recordings that do not say their day as made on this day (a "
                        "model retired by then is refused); default: retirement not judged")
    p.add_argument("--model", action="append", default=[], metavar="ID", dest="models",
                   help="a model the API served these captures that the simulator's table "
                        "lacks (repeatable; $TOOLUSE_MODELS adds more)")
    p.add_argument("--no-streams", action="store_true", help="skip the stream envelope")
    p.add_argument("--fail-on-disagreement", action="store_true",
                   help="exit 1 when a live 2xx is refused or a live 400/404 accepted")
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.captures import CaptureError
    from simulator.fidelity_report import fidelity

    as_of = None
    if args.as_of:
        try:
            as_of = date.fromisoformat(args.as_of)
        except ValueError:
            raise UsageError(f"--as-of {args.as_of!r} is not a day; write it YYYY-MM-DD") from None
    root = Path(args.captures)
    try:
        report = fidelity(root, as_of=as_of, models=frozenset(args.models),
                          streams=not args.no_streams)
    except CaptureError as e:
        raise UsageError(f"{e}; point at a directory of capture files") from None
    if not report.verdicts and not report.live.streams:
        raise UsageError(f"{root}: no captured requests or streams in it")
    if args.format == "json":
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.markdown())
    a = report.agreement()
    failed = args.fail_on_disagreement and (a["false_refusals"] or a["false_accepts"])
    return EXIT_FAIL if failed else EXIT_OK
