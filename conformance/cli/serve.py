"""``tooluse serve CASSETTE|DIR [--port N] [--host H]``: the simulated API on a real HTTP server.

For clients in any language: point their base URL at the printed address (the first line on
stdout; ``--port 0`` picks a free port). Serves ``/v1/messages`` (the replay engine),
``/v1/files``, ``/v1/models`` and the Managed Agents paths; one line per request on stderr
(``--log FILE``: JSON lines too); ``POST /_tooluse/reset`` starts every conversation over.
Stops on Ctrl-C.
"""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import sys
from dataclasses import dataclass
from typing import Any

from simulator.cassette import Cassette, CassetteError

from . import EXIT_OK, UsageError

#: A long-running server keeps only the engine's latest events, so memory stays bounded.
SERVE_LOG_LIMIT = 1_000


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="serve cassettes on a loopback HTTP server", description=__doc__.split("\n\n")[0])
    p.add_argument("cassettes", metavar="CASSETTE|DIR", help="a cassette file or a directory of them")
    p.add_argument("--repeat", action="store_true",
                   help="serve an already-served exchange again to a request that matches it "
                        "(stateless; for load tests and many clients sending the same "
                        "conversation): the engine's replay='repeat'")
    p.add_argument("--model-mode", action="store_true",
                   help="answer like a model (for `tooluse probe`): the next recorded turn of "
                        "the conversation, whatever the model and the tool results' content; "
                        "rules still judged (simulator.model_mode)")
    p.add_argument("--log", metavar="FILE",
                   help="also write one JSON object per request to FILE (appended): the time, "
                        "status, and what answered it (the exchange served, or the rule or "
                        "matcher that refused it, with the difference); every request is one line "
                        "on stderr too, unless --quiet")
    p.add_argument("--quiet", action="store_true", help="no line per request on stderr")
    p.add_argument("--setup", type=int, default=0, metavar="N",
                   help="play the cassette's first N exchanges as recorded before serving (an "
                        "earlier conversation, e.g. the one that created the container an "
                        "expired-container recording reuses); they are not logged, and a reset "
                        "plays them again")
    p.add_argument("--recorded-time", action="store_true",
                   help="the simulated clock follows the recording (each exchange at its "
                        "recorded time), so a container expires when it did in the recording; "
                        "the engine's recorded_time")
    add_server_options(p)
    add_matching_option(p)
    add_envelope_option(p)
    add_fault_options(p)
    add_request_options(p)
    return p


def add_envelope_option(p: argparse.ArgumentParser) -> None:
    from simulator.envelope import PROFILES

    p.add_argument("--envelope", choices=list(PROFILES), default="live",
                   help="how streams are enveloped (pings, chunk sizes, padding, line endings; "
                        "simulator.envelope): "
                        + "; ".join(f"{name}: {prof.summary}" for name, prof in PROFILES.items()))


def add_matching_option(p: argparse.ArgumentParser) -> None:
    from simulator.matchers import MATCHER_SETS

    p.add_argument("--matching", choices=list(MATCHER_SETS), default="exact",
                   help="how a request is matched to its recording: exact (default), or "
                        "tolerant: tools as a set by name with schema noise ignored, the whole "
                        "history or a restart with the new question alike; what was normalised "
                        "is sent in the x-tooluse-normalised response header "
                        "(simulator.matchers.TOLERANT_MATCHERS)")

def add_request_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", action="append", default=[], metavar="ID", dest="models",
                   help="serve this model too (repeatable): a model the simulator's table lacks "
                        "is answered 404 as the API answers a model it does not serve; "
                        "$TOOLUSE_MODELS adds more (simulator.models)")
    p.add_argument("--no-header-checks", action="store_true",
                   help="answer requests without x-api-key or anthropic-version (the API answers "
                        "401 / 400; for clients that cannot send them; $TOOLUSE_HEADER_CHECKS=0 "
                        "does the same)")


def request_options(args: argparse.Namespace) -> dict[str, Any]:
    """Engine keyword arguments from ``--model``/``--no-header-checks``."""
    out: dict[str, Any] = {}
    if getattr(args, "models", None):
        out["models"] = tuple(args.models)
    if getattr(args, "no_header_checks", False):
        out["check_headers"] = False
    return out


def add_fault_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fault", action="append", default=[], metavar="KIND=RATE|KIND@N",
                   help="inject a fault into this fraction of requests (repeatable), e.g. "
                        "overloaded=0.1; or plan one: KIND@N answers the first attempt at "
                        "exchange N with it (KIND@N:SECONDS sends that retry-after; several at "
                        "one N are used up in order, one per attempt), e.g. rate_limit@0:0.01; "
                        "kinds: rate_limit, api_error, overloaded, request_too_large, drop, "
                        "slow, stall, stream_error")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="random seed for --fault draws (default 0)")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """Engine keyword arguments from ``--fault``/``--seed``, ``--matching`` and ``--envelope``."""
    matching = getattr(args, "matching", "exact")
    opts: dict[str, Any] = {"matchers": matching} if matching != "exact" else {}
    if getattr(args, "envelope", "live") != "live":
        opts["envelope"] = args.envelope
    if not args.fault:
        return opts
    from simulator.faults import FAULT_KINDS, Fault, FaultPlan

    rates: dict[Any, float] = {}
    planned: dict[int, list[Fault]] = {}
    for spec in args.fault:
        if "@" in spec:
            at = _planned_fault(spec)
            planned.setdefault(at.index, []).append(at.fault)
            continue
        kind, _, rate = spec.partition("=")
        try:
            value = float(rate)
        except ValueError:
            value = -1.0
        if kind not in FAULT_KINDS or not 0.0 <= value <= 1.0:
            raise UsageError(f"--fault {spec!r}: expected KIND=RATE with a rate in [0, 1] and "
                             f"KIND one of {', '.join(FAULT_KINDS)}")
        rates[kind] = value
    return {**opts, "faults": FaultPlan(at=planned, rates=rates, seed=args.seed)}


@dataclass(frozen=True)
class _Planned:
    index: int
    fault: Any


def _planned_fault(spec: str) -> _Planned:
    """``KIND@N`` or ``KIND@N:SECONDS`` (a planned fault at exchange N, with its retry-after)."""
    from simulator.faults import FAULT_KINDS, Fault

    kind, _, where = spec.partition("@")
    index, _, seconds = where.partition(":")
    try:
        at = int(index)
        retry_after = float(seconds) if seconds else None
    except ValueError:
        at, retry_after = -1, None
    if kind not in FAULT_KINDS or at < 0 or (retry_after is not None and retry_after < 0):
        raise UsageError(f"--fault {spec!r}: expected KIND@N or KIND@N:SECONDS with N an "
                         f"exchange index (from 0) and KIND one of {', '.join(FAULT_KINDS)}")
    return _Planned(at, Fault(kind, retry_after=retry_after))


def add_server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8765, help="port (0: pick a free one; default 8765)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")


def serve(handler: Any, args: argparse.Namespace, what: str, **kwargs: Any) -> None:
    """Bind, print the base URL (stdout, first line), and serve until interrupted."""
    from simulator.server import base_url_of, make_server

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port number; use 0-65535 (0 picks a free one)")
    try:
        server, sock = make_server(handler, args.host, args.port, **kwargs)
    except ImportError as e:  # simulator.server.ServerUnavailable: the serve extra is missing
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}; "
                         f"{_listen_advice(e, args.host)}") from None
    # SIGTERM ends the server like Ctrl-C, so callers' `finally` blocks (summaries, closing the
    # recorder) still run. The handler only asks uvicorn to exit: raising from a signal handler
    # can land inside a garbage-collector callback during start-up, where Python ignores the
    # exception and the server keeps running. (uvicorn re-raises the signal it captured on its
    # way out; that lands here too and is harmless.)
    def _stop(signum: int, frame: Any) -> None:
        server.should_exit = True

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        print(base_url_of(sock), flush=True)
        print(f"tooluse {args.command}: {what} at {base_url_of(sock)} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)



def _listen_advice(e: OSError, host: str) -> str:
    """What to change when binding failed: the port when it is taken or reserved, else the host
    (a name that does not resolve, an address that is not this machine's)."""
    if isinstance(e, socket.gaierror):
        return f"--host {host!r} is not a known host name or address (try 127.0.0.1)"
    if e.errno == errno.EADDRINUSE:
        return "the port is in use: choose another --port (0 picks a free one)"
    if e.errno == errno.EACCES:
        return "ports below 1024 need privileges: choose another --port (0 picks a free one)"
    if e.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return (f"--host {host!r} is not an address of this machine (try 127.0.0.1, or "
                "0.0.0.0 for every interface)")
    return "check --host and --port (0 picks a free port)"


def load_cassettes_arg(args: argparse.Namespace) -> list[Cassette]:
    """The CASSETTE|DIR argument's cassettes, or a one-line usage error."""
    from simulator.routes import load_cassettes

    try:
        cassettes = load_cassettes(args.cassettes)
    except CassetteError as e:
        fix = "check its permissions" if e.message.startswith("cannot read") else "fix the cassette"
        raise UsageError(f"{e}; {fix} or point at another file") from None
    if not cassettes:
        raise UsageError(f"no cassettes (*.json) under {args.cassettes}")
    return cassettes


def play_setup(routes: Any, cassette: Cassette, count: int) -> None:
    """Send the cassette's first ``count`` recorded requests, as recorded (the harness's
    ``setup`` exchanges: :class:`conformance.loops.run.Harness`)."""
    import json

    from simulator.headers import replay_headers
    from simulator.http import SimRequest

    for ex in cassette.exchanges[:count]:
        routes(SimRequest("POST", ex.request["path"], replay_headers(ex.request.get("headers")),
                          {}, json.dumps(ex.request["body"]).encode()))


def run(args: argparse.Namespace) -> int:
    from simulator.routes import build
    from simulator.serve_console import RESET_PATH, ServeConsole

    cassettes = load_cassettes_arg(args)
    if getattr(args, "model_mode", False):
        from simulator.model_mode import build  # type: ignore[assignment]
    options = {**engine_options(args), **request_options(args)}
    if getattr(args, "recorded_time", False):
        options["recorded_time"] = True
    replay = "repeat" if getattr(args, "repeat", False) else "once"

    setup = int(getattr(args, "setup", 0) or 0)
    if setup and (len(cassettes) != 1 or not 0 < setup < len(cassettes[0].exchanges)):
        raise UsageError(f"--setup {setup}: needs one cassette and fewer exchanges than it has "
                         f"({len(cassettes)} cassette(s), "
                         f"{len(cassettes[0].exchanges)} exchange(s) in the first)")

    def routes() -> Any:  # built again by POST /_tooluse/reset
        built = build(cassettes, log_limit=SERVE_LOG_LIMIT, replay=replay, **options)
        play_setup(built, cassettes[0], setup)
        return built

    log = None
    if getattr(args, "log", None):
        try:
            log = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 (open for the server's life)
        except OSError as e:
            raise UsageError(f"--log {args.log}: cannot write it ({e.strerror or e}); "
                             "name a file in a writable directory") from None
    try:
        console = ServeConsole(routes, out=None if getattr(args, "quiet", False) else sys.stderr,
                               log=log)
    except ImportError as e:
        raise UsageError(f"the replay engine is not available ({e})") from None
    try:
        serve(console, args, f"serving {len(cassettes)} cassette(s) (POST {RESET_PATH} starts "
                             "every conversation over)")
    finally:
        if log is not None:
            log.close()
    return EXIT_OK
