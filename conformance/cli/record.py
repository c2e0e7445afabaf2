"""``tooluse record --upstream URL --out DIR [--port N]``: a recording proxy.

Point a client's base URL at the printed address (first line on stdout); every exchange is
forwarded to ``--upstream`` and written to a cassette in DIR, one per conversation. Credentials
(``x-api-key``, ``authorization``, environment keys, ``--secret-pattern`` matches) are never
written; a cassette still holding one is refused. Exit 1 when a cassette was refused.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import EXIT_FAIL, EXIT_OK, UsageError
from .serve import add_server_options, serve


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="record cassettes through a proxy to a real API", description=__doc__.split("\n\n")[0])
    p.add_argument("--upstream", required=True, metavar="URL",
                   help="the API to forward to, e.g. https://api.anthropic.com")
    p.add_argument("--out", required=True, metavar="DIR", type=Path, help="where cassettes go")
    p.add_argument("--secret-pattern", action="append", default=[], metavar="REGEX",
                   help="another regular expression for credentials (repeatable)")
    add_server_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.record import Recorder
    from simulator.secrets import SecretScanner

    url = urlsplit(args.upstream)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UsageError(f"--upstream {args.upstream!r} is not an http(s) URL; "
                         "use e.g. https://api.anthropic.com")
    for pattern in args.secret_pattern:
        try:
            re.compile(pattern)
        except re.error as e:
            raise UsageError(f"--secret-pattern {pattern!r} is not a valid regex: {e}") from None
    try:  # before listening: a recording that cannot be written is refused at once
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror}); "
                         "choose a writable directory") from None
    recorder = Recorder(args.upstream, args.out,
                        scanner=SecretScanner.with_patterns(args.secret_pattern),
                        on_write=lambda path: print(f"wrote {path}", file=sys.stderr, flush=True))
    try:
        serve(recorder, args, f"recording {url.hostname} into {args.out}", threaded=True)
    finally:
        recorder.close()
        for leak in recorder.refused:
            print(f"tooluse record: {leak}", file=sys.stderr)
    return EXIT_FAIL if recorder.refused else EXIT_OK
