"""``tooluse validate FILE...``: check JSON files against the protocol's schemas.

Each file's kind (request, response, message, block, tool definition, SSE event list, error body,
Managed Agents event, ...) is detected unless ``--kind`` names it; real-traffic captures
(``{"source", "kind", "data"}``) and cassettes are understood. Every violation is printed as
``file:pointer: message``. Exit 0 when every file is valid, 1 otherwise, 2 when a file cannot be
read or parsed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from simulator.cassette import CassetteError, parse_cassette
from simulator.schemas import KINDS
from simulator.validation import (
    Violation,
    detect_kind,
    errors,
    unwrap_capture,
    validate,
    validate_cassette,
)

from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE

#: A capture of an endpoint the schemas do not describe (Files API, ...): noted, not a failure.
SKIPPED = "skipped: a capture of an endpoint the schemas do not describe (not a Messages object)"


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="validate JSON files against the protocol's JSON Schemas",
        description="Check JSON files (requests, responses, messages, blocks, tool definitions, "
                    "SSE event lists, error bodies, Managed Agents events, real-traffic captures, "
                    "cassettes) against the protocol's JSON Schemas.",
        epilog="Prints each violation as file:pointer: message [rule]. Exit 0: every file is "
               "valid; 1: violations; 2: a file is missing or not JSON.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="JSON files, or raw SSE text (an event stream) ('-' reads stdin)")
    p.add_argument("--kind", choices=sorted([*KINDS, "cassette"]), metavar="KIND",
                   help="what every file holds (default: detected per file); one of: "
                        + ", ".join(sorted([*KINDS, "cassette"])))
    p.add_argument("--strict", action="store_true",
                   help="exact documented shapes (default: lenient, as the SDK)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print INFO notes")
    return p


def _read(name: str) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, one-line error)."""
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "no such file"
    except IsADirectoryError:
        return None, "is a directory, not a JSON file"
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text ({e.reason} at byte {e.start})"
    except OSError as e:
        return None, f"cannot read: {e.strerror}"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        from simulator.envelope import looks_like_sse, raw_sse_events
        if looks_like_sse(text):  # a raw event stream (any SSE line endings): its events
            return raw_sse_events(text), None
        return None, f"broken JSON at line {e.lineno} column {e.colno}: {e.msg}"


def _is_cassette(data: Any) -> bool:
    return isinstance(data, dict) and "exchanges" in data and "version" in data


def check_file(name: str, kind: str | None, strict: bool) -> tuple[list[Violation], str | None]:
    """The violations of one file, or a one-line reason it could not be checked."""
    data, problem = _read(name)
    if problem:
        return [], problem
    prefix = ""
    if kind is None:
        capture = unwrap_capture(data)
        if capture:
            kind, data, prefix = capture
            if kind == "unknown":
                return [], SKIPPED
        elif _is_cassette(data):
            kind = "cassette"
        else:
            kind = detect_kind(data)
    if kind == "cassette":
        try:
            cassette = parse_cassette(data, name)
        except CassetteError as e:
            return [Violation(e.pointer if e.pointer != "/" else "", e.message, "cassette.format")], None
        return validate_cassette(cassette, strict=strict), None
    if kind == "unknown":
        return [], ("cannot tell what this JSON holds; pass --kind (one of "
                    f"{', '.join(sorted(KINDS))})")
    return [v.at(prefix) for v in validate(data, kind, strict=strict)], None


def run(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for name in args.files:
        violations, problem = check_file(name, args.kind, args.strict)
        if problem == SKIPPED:
            if not args.quiet:
                print(f"{name}: {problem}", file=sys.stderr)
            continue
        if problem:
            print(f"{name}: error: {problem}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        for v in violations:
            if v.severity != "error" and args.quiet:
                continue
            note = "" if v.severity == "error" else f"{v.severity}: "
            print(f"{name}:{v.pointer or '/'}: {note}{v.message} [{v.rule}]")
        if errors(violations) and status == EXIT_OK:
            status = EXIT_FAIL
    return status
