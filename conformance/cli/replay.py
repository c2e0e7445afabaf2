"""``tooluse replay CASSETTE|DIR [--port N] [--host H]``: serve cassettes like ``tooluse serve``
and narrate the replay: one line per request (what the simulator answered and why), then a
summary when stopped (Ctrl-C or SIGTERM). Exit 0 when every exchange was served and no request
broke a rule or missed its exchange, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from simulator.http import SimRequest, SimResponse

from . import EXIT_FAIL, EXIT_OK
from .serve import (
    add_envelope_option,
    add_fault_options,
    add_matching_option,
    add_request_options,
    add_server_options,
    engine_options,
    load_cassettes_arg,
    request_options,
    serve,
)


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="serve cassettes and report how a client's traffic replayed",
        description=__doc__.split("\n\n")[0])
    p.add_argument("cassettes", metavar="CASSETTE|DIR", help="a cassette file or a directory of them")
    add_server_options(p)
    add_matching_option(p)
    add_envelope_option(p)
    add_fault_options(p)
    add_request_options(p)
    return p


def describe(request: SimRequest, response: SimResponse) -> str:
    """``POST /v1/messages -> 400 invalid_request_error: <message>`` (one line)."""
    line = f"{request.method} {request.path} -> {response.status}"
    body = response.body if isinstance(response.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else None
    if error:
        line += f" {error.get('type')}: {str(error.get('message', ''))[:300]}"
    elif response.is_stream:
        line += " (stream)"
    from simulator.engine import NORMALISED_HEADER

    notes = response.headers.get(NORMALISED_HEADER)
    if notes:
        line += f" [normalised: {notes}]"
    from simulator.secrets import SecretScanner

    return SecretScanner().redact_text(line)  # error messages may quote what the client sent


def run(args: argparse.Namespace) -> int:
    from simulator.routes import build

    cassettes = load_cassettes_arg(args)
    # No log limit: the summary at the end counts what the log holds.
    routes = build(cassettes, **engine_options(args), **request_options(args))

    def narrated(request: SimRequest) -> SimResponse:
        response = routes(request)
        print(describe(request, response), file=sys.stderr, flush=True)
        return response

    narrated.blocks = routes.blocks  # type: ignore[attr-defined]
    engine: Any = routes.messages
    try:
        serve(narrated, args, f"replaying {len(cassettes)} cassette(s)")
    finally:
        remaining = engine.remaining()
        normalised = sum(1 for e in engine.served if e.normalised)
        skipped = engine.skipped
        print(f"served {len(engine.served)} exchange(s); {len(remaining) + len(skipped)} not "
              f"served{f' ({len(skipped)} skipped)' if skipped else ''}; "
              f"{len(engine.violations)} rule violation(s); {len(engine.mismatches)} mismatch(es)"
              + (f"; {normalised} matched after normalising (--matching tolerant)"
                 if normalised else ""), file=sys.stderr)
        for cassette, index in remaining[:20]:
            print(f"  not served: {cassette.id} exchange {index}", file=sys.stderr)
        for e in skipped[:20]:
            print(f"  skipped: {e.cassette_id} exchange {e.exchange_index} (recorded breaking "
                  f"rule `{e.expect_rule}`; the client sent the corrected request)",
                  file=sys.stderr)
    unexpected = [v for v in engine.violations if not getattr(v, "expected", False)]
    return EXIT_OK if not remaining and not engine.skipped and not unexpected \
        and not engine.mismatches else EXIT_FAIL
