"""``tooluse probe --model MODEL --out DIR [SCENARIO ...]``: drive the corpus's scenarios live.

Each scenario's opening request (system, tools, tool_choice, container, beta header, first user
turn) is sent with MODEL through the unmodified ``anthropic`` SDK and the conversation is driven
to its end: bash and text editor calls answered by the bundled reference subjects in a fresh
working directory, custom tools by the scenario's recorded results. Every exchange is recorded
(redacted) under DIR; every response is judged for API drift. Exit 0 when every scenario ended
(completed, or stopped at a limit); 1 when some ended in an API error, failed, or were not run
(budget, interrupt: run again with the same --out to resume); 2 on bad options.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from . import EXIT_FAIL, EXIT_OK, UsageError

LIVE_API = "https://api.anthropic.com"


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="drive the corpus's scenarios live with a model, record them, judge drift",
        description=__doc__.split("\n\n")[0])
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                   help="cassette files or directories, by path or corpus name (default: the "
                        "whole drivable corpus)")
    p.add_argument("--model", required=True, help="the model every request is sent with")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (an existing probe of the same model is resumed)")
    p.add_argument("--base-url", default=None,
                   help=f"API base URL (default $ANTHROPIC_BASE_URL, else {LIVE_API}); e.g. a "
                        "`tooluse serve --model-mode` address")
    p.add_argument("--max-turns", type=int, default=20,
                   help="model turns per scenario before it stops (default 20)")
    p.add_argument("--max-output-tokens", type=int, default=None, metavar="N",
                   help="output tokens one scenario may use in all (caps each max_tokens)")
    p.add_argument("--budget", type=int, default=None, metavar="TOKENS",
                   help="total tokens (input + output + cache) for the run; when spent the run "
                        "stops cleanly and a later run resumes")
    p.add_argument("--concurrency", type=int, default=4, help="scenarios at once (default 4)")
    p.add_argument("--retries", type=int, default=4,
                   help="retries of a 429/5xx (529 included) per request (default 4)")
    p.add_argument("--backoff", type=float, default=1.0, metavar="S",
                   help="first backoff wait when the answer has no retry-after (default 1 s)")
    p.add_argument("--price", default=None, metavar="IN,OUT",
                   help="USD per million input and output tokens, to show the cost so far")
    p.add_argument("--scenario-header", choices=("auto", "on", "off"), default="auto",
                   help="send x-tooluse-scenario (the scenario id), which `tooluse serve "
                        "--model-mode` answers by; auto: on unless --base-url is the live API")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines (the summary line stays)")
    from conformance.options import PROBE, add_options

    add_options(p, PROBE)  # the bash's sandbox and limits, as for `tooluse run`
    return p


def _positive(value: int | None, option: str) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{option} {value}: give a positive number")


def _price(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--price {text!r}: expected IN,OUT in USD per million tokens, "
                         "e.g. 3,15") from None
    if a < 0 or b < 0:
        raise UsageError(f"--price {text!r}: prices cannot be negative")
    return a, b


def run(args: argparse.Namespace) -> int:
    from conformance.probe.driver import FINAL, Limits
    from conformance.probe.progress import ProgressLine
    from conformance.probe.run import ProbeConfig, ProbeOutputError, ProbeRun
    from conformance.probe.scenarios import ScenarioError, load_scenarios

    for value, option in ((args.max_turns, "--max-turns"), (args.concurrency, "--concurrency"),
                          (args.max_output_tokens, "--max-output-tokens"),
                          (args.budget, "--budget")):
        _positive(value, option)
    if args.retries < 0 or args.backoff < 0:
        raise UsageError("--retries and --backoff cannot be negative")
    base_url = args.base_url or os.environ.get("ANTHROPIC_BASE_URL") or LIVE_API
    api_key = os.environ.get("ANTHROPIC_API_KEY")
    if not api_key and base_url.rstrip("/") == LIVE_API:
        raise UsageError("the live API needs a key: set ANTHROPIC_API_KEY (or point --base-url "
                         "at `tooluse serve --model-mode`)")
    try:
        scenarios, skipped = load_scenarios(args.scenarios)
    except ScenarioError as e:
        raise UsageError(str(e)) from None
    if not scenarios:
        raise UsageError("no drivable scenario among " + (", ".join(args.scenarios) or "the corpus"))
    from conformance.run import Run

    settings = Run.from_args(args, os.environ)  # --sandbox and the limits: the bash's
    config = ProbeConfig(model=args.model, out=Path(args.out), base_url=base_url,
                         api_key=api_key, budget=args.budget, concurrency=args.concurrency,
                         price=_price(args.price),
                         scenario_header=args.scenario_header == "on" or (
                             args.scenario_header == "auto" and base_url.rstrip("/") != LIVE_API),
                         limits=Limits(max_turns=args.max_turns,
                                       max_output_tokens=args.max_output_tokens,
                                       retries=args.retries, backoff=args.backoff),
                         confinement=settings.confinement)
    settings.check_sandbox()  # the bash's sandbox: a notice without it, refused if required
    stop = threading.Event()
    line = ProgressLine(config.price, sys.stderr, quiet=args.quiet)
    try:
        probe = ProbeRun(scenarios, config, progress=line, stop=stop)
    except ProbeOutputError as e:
        raise UsageError(str(e)) from None
    skipped_done = len(scenarios) - len(probe.todo)
    print(f"tooluse probe: {len(probe.todo)} scenario(s) to drive with {args.model}"
          + (f", {skipped_done} already completed in {args.out}" if skipped_done else "")
          + (f", {len(skipped)} not drivable" if skipped else ""), file=sys.stderr)
    try:
        outcomes = probe.run()
    except KeyboardInterrupt:
        print(f"tooluse probe: interrupted; run the same command to resume ({args.out})",
              file=sys.stderr)
        return 130
    not_run = len(probe.todo) - len(outcomes)
    bad = [o for o in outcomes if o.status not in FINAL or o.status == "api_error"]
    line.summary(outcomes, probe.budget, not_run, config.out)
    return EXIT_FAIL if bad or not_run else EXIT_OK
