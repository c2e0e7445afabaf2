"""``tooluse run``: the conformance suite against bash and text editor subjects.

Exit 0 when every MUST check passes (``--strict``: every SHOULD too; a flaky result, an
intermittent failure, does not fail the run unless ``--fail-on-flaky``), 1 otherwise, 2 on usage
errors and when a subject started in no case (its checks are ``not-run``), 130 when interrupted
by SIGINT (Ctrl-C) and 143 by SIGTERM (subjects stopped, results.json left valid with
``"complete": false``). With ``--out DIR`` the run writes ``results.json`` (kept
valid while the run goes), JUnit, Markdown and HTML reports there.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from conformance.cli import EXIT_USAGE
from conformance.errors import UsageError
from conformance.options import add_run_arguments
from conformance.run import Run, build_subjects, shard_plan_of

if TYPE_CHECKING:
    from conformance.reports.baseline import Baseline


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help="run the conformance checks against bash / text editor implementations",
        description=__doc__.splitlines()[0],
        epilog="SPEC is module:attr (a factory: factory(workdir) -> handler), "
               "path/to/file.py:attr, or a bundled reference subject's name. CMD is any command "
               "speaking one JSON tool input per line in, one JSON result per line out. "
               "See docs/subjects.md. Exit codes: 0 pass, 1 fail, 2 usage error, 130 "
               "interrupted by SIGINT, 143 by SIGTERM (results.json then says "
               "\"complete\": false). 'tooluse run merge DIR... --out DIR' joins the "
               "results of --shard K/N runs into one run's (docs/ci.md).")
    add_run_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    from conformance import runner

    settings = Run.from_args(args, os.environ)  # the run's one value; nothing below reads the env
    settings.check_sandbox()
    subjects = build_subjects(settings)
    checks = list(settings.checks)
    bad = runner.unmatched_patterns(checks)
    if bad:
        raise UsageError(f"--check {' '.join(bad)} matches no check; see `tooluse checks` for "
                         "the ids")
    if not any(runner.select_checks(s, checks or None) for s in subjects):
        kinds = ", ".join(sorted({f"{s.family} {s.tool_type}" for s in subjects}))
        raise UsageError(f"no check applies to these subjects ({kinds})"
                         + (f" with --check {' '.join(checks)}" if checks else "")
                         + "; see `tooluse checks --tool-type T`")
    shard = shard_plan_of(settings, subjects, lambda s: runner.select_checks(s, checks or None))
    if shard is not None and not shard.cases:
        print(f"tooluse run: shard {shard.shard} has no case (fewer cases than shards); "
              "its results.json records that", file=sys.stderr)
    from conformance.subjects.spec import preflight

    preflight(subjects, settings.case)
    listeners: list[Any] = []
    reports = _reports_listener(settings)
    if reports is not None:
        listeners.append(reports)
    from simulator.secrets import SecretScanner

    scanner = SecretScanner()  # what a subject printed may hold credentials: never echo them
    if settings.json:
        listeners.append(lambda r: print(json.dumps(scanner.redact(r.to_json())), flush=True))
    if settings.progress != "off":
        from conformance.reports.progress import Progress

        listeners.append(Progress(cast(TextIO, _Redacting(sys.stderr, scanner)),
                                  mode=settings.progress))
    previous = _stop_on_sigterm()
    try:
        summary = runner.run(subjects, settings, listeners=listeners, shard=shard)
    except KeyboardInterrupt as e:  # the runner stopped the subjects and wrote what it had
        code, name = (EXIT_SIGTERM, "SIGTERM") if isinstance(e, Terminated) else (EXIT_SIGINT,
                                                                                    "SIGINT")
        where = "" if reports is None else (f"; partial results (\"complete\": false) in "
                                            f"{reports.paths['results']}")
        print(f"tooluse run: interrupted by {name}; the subjects were stopped{where}",
              file=sys.stderr, flush=True)
        return code
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    never = summary.never_started()
    if not settings.json and len(never) < len(summary.plan.subjects):
        from conformance.reports.summary import print_summary

        print_summary(summary, cast(TextIO, _Redacting(sys.stdout, scanner)), skip=set(never))
        if reports is not None:
            print(f"reports: {', '.join(str(p) for p in reports.paths.values())}")
    if never:  # one line each, not one failure per check; exit 2 as for a command not found
        for name, message in never.items():
            print(f"tooluse run: error: subject {name} did not start, so no check ran: "
                  f"{scanner.redact_text(_without_prefix(message))}", file=sys.stderr)
        return EXIT_USAGE
    if reports is not None:
        if settings.json:
            print(f"reports: {', '.join(str(p) for p in reports.paths.values())}")
        if settings.expected_failures is not None:
            verdict = getattr(reports, "verdict", None)
            if verdict is not None:
                print("\n".join(verdict.lines()))
            return int(reports.exit_code)
    return summary.exit_code


class _Redacting:
    """A text stream that writes through ``scanner.redact_text``."""

    def __init__(self, stream: TextIO, scanner: Any) -> None:
        self.stream, self.scanner = stream, scanner

    def write(self, text: str) -> int:
        return self.stream.write(self.scanner.redact_text(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())


#: Exit codes of an interrupted run (128 + the signal number, as shells report them).
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so the same cleanup runs."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


def _stop_on_sigterm() -> Any:
    """Make SIGTERM stop the run like Ctrl-C (main thread only); returns the previous handler."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread (e.g. called from a test's worker thread)
        return None


def _reports_listener(args: Run) -> Any:
    if args.out is None:
        if args.expected_failures is not None:
            raise UsageError("--expected-failures needs --out DIR (the verdict is written there)")
        return None
    from conformance.reports import RunReports

    baseline = expected_failures(args.expected_failures)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror}); "
                         "choose a writable directory") from None
    return RunReports(args.out, baseline=baseline, progress=False)  # run() shows the progress


def expected_failures(path: str | Path | None) -> Baseline | None:
    """The baseline ``--expected-failures PATH`` names (None without one); a file that cannot
    be read is a usage error naming the option."""
    if path is None:
        return None
    from conformance.reports import load_baseline

    try:
        return load_baseline(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"--expected-failures {path}: {e}") from None


def _without_prefix(message: str) -> str:
    return message.removeprefix("the subject did not start: ")


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - convenience
    from conformance.cli import main as cli_main

    return cli_main(["run", *(argv or [])])
