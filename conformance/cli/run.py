"""``tooluse run``: the conformance suite against bash and text editor subjects.

Exit 0 when every MUST check passes (``--strict``: every SHOULD too), 1 otherwise, 2 on usage
errors, 130 when interrupted by SIGINT (Ctrl-C) and 143 by SIGTERM (subjects stopped, results.json
left valid with ``"complete": false``). With ``--out DIR`` the run writes ``results.json`` (kept
valid while the run goes), JUnit, Markdown and HTML reports there.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Collection, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO, cast

from conformance.cli import EXIT_USAGE
from conformance.errors import UsageError
from conformance.results import CheckResult, Outcome

FAMILIES = ("bash", "editor")


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help="run the conformance checks against bash / text editor implementations",
        description=__doc__.splitlines()[0],
        epilog="SPEC is module:attr (a factory: factory(workdir) -> handler), "
               "path/to/file.py:attr, or a bundled reference subject's name. CMD is any command "
               "speaking one JSON tool input per line in, one JSON result per line out. "
               "See docs/subjects.md. Exit codes: 0 pass, 1 fail, 2 usage error, 130 "
               "interrupted by SIGINT, 143 by SIGTERM (results.json then says "
               "\"complete\": false).")
    g = p.add_argument_group("subjects")
    g.add_argument("--bash", action=SubjectOption, default=[], metavar="SPEC",
                   help="a bash tool implementation (module:attr factory)")
    g.add_argument("--bash-cmd", action=SubjectOption, default=[], metavar="CMD",
                   help="an out-of-process bash tool, in any language")
    g.add_argument("--bash-type", default=None, metavar="T",
                   help="the bash tool type the subjects implement (default bash_20250124)")
    g.add_argument("--editor", action=SubjectOption, default=[], metavar="SPEC",
                   help="a text editor tool implementation (module:attr factory)")
    g.add_argument("--editor-cmd", action=SubjectOption, default=[], metavar="CMD",
                   help="an out-of-process text editor tool, in any language")
    g.add_argument("--editor-type", default=None, metavar="T",
                   help="the text editor tool type (default text_editor_20250728)")
    g.add_argument("--name", action=NameOption, default=None, metavar="NAME",
                   help="the label of the --bash/--bash-cmd/--editor/--editor-cmd/--loop/--loop-cmd "
                        "subject given just before it (default: cmd:<script> for a command, the spec for a "
                        "factory); it names the subject in every report")
    g.add_argument("--editor-max-characters", type=int, default=None, metavar="N",
                   help="the max_characters the editor subjects are configured with "
                        "(text_editor_20250728; enables the truncation check)")
    from conformance.workers.options import add_agent_options

    add_agent_options(g)
    g.add_argument("--all-reference", action="store_true",
                   help="also run every bundled reference subject")
    p.add_argument("--check", dest="checks", action="extend", nargs="+", default=[],
                   metavar="ID", help="only these check ids (globs allowed: 'bash.session.*')")
    p.add_argument("--strict", action="store_true", help="SHOULD checks count like MUST ones")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="the command timeout given to subjects, in seconds (default 3)")
    p.add_argument("--startup-timeout", type=float, default=None, metavar="S",
                   help="how long a subject may take to start and answer a first, harmless "
                        "call; not counted as tool time (default 30)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="cases run at once (default: 2 per CPU, 2 to 16)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="address space each subject process may take, e.g. 512M, 4G; 0 for no "
                        "limit (default 2G; a subject past it gets MemoryError / ENOMEM)")
    add_sandbox_options(p)
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="write results.json and the reports into DIR")
    p.add_argument("--expected-failures", type=Path, default=None, metavar="FILE",
                   help="a baseline of known failures: only new failures fail the run")
    p.add_argument("--json", action="store_true", help="print the results as JSON lines")
    from conformance.reports.progress import MODES

    p.add_argument("--progress", choices=MODES, default="auto",
                   help="progress on stderr: a rewritten line on a terminal (bar), a count "
                        "every few seconds otherwise (counter), a line per finished check "
                        "(lines), or nothing (off); default auto")
    p.add_argument("-q", "--quiet", action="store_const", dest="progress", const="off",
                   help="no progress (same as --progress off)")
    return p


def add_sandbox_options(p: argparse.ArgumentParser) -> None:
    """``--sandbox``, ``--pass-env`` and the limits beside memory (docs/reliability.md)."""
    g = p.add_argument_group("sandbox and limits")
    g.add_argument("--sandbox", choices=("auto", "required", "off"), default=None,
                   help="run every subject process under bubblewrap: read-only file system but "
                        "its case directory, no network, its own PID namespace (default auto: "
                        "used where it works, else a one-line notice says why; required: exit 2 "
                        "without it)")
    g.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                   help="also give subjects this environment variable (they get PATH, LANG, "
                        "HOME, TMPDIR and TOOLUSE_* only; credentials never)")
    g.add_argument("--cpu-limit", type=int, default=None, metavar="S",
                   help="CPU seconds each subject process may use; 0 for none (default 600)")
    g.add_argument("--file-size-limit", default=None, metavar="SIZE",
                   help="largest file a subject may write, e.g. 100M; 0 for none (default 1G)")
    g.add_argument("--process-limit", type=int, default=None, metavar="N",
                   help="processes a sandboxed subject may run at once (a fork bomb stops "
                        "there); 0 for none (default 512)")


def apply_sandbox_options(args: argparse.Namespace) -> None:
    """Check the options and hand them to the subjects' side (``TOOLUSE_*`` variables, as
    ``--memory-limit``); ``--sandbox required`` without a working sandbox is a usage error."""
    from conformance import sandbox

    names = list(getattr(args, "pass_env", None) or [])
    for name in names:
        if not name or "=" in name or not name.replace("_", "a").isalnum():
            raise UsageError(f"--pass-env {name!r}: give the name of an environment variable")
        if sandbox.is_credential(name):
            raise UsageError(f"--pass-env {name}: a credential never reaches a subject; give the "
                             "subject what it needs another way (a file in its case directory)")
    if names:
        os.environ["TOOLUSE_PASS_ENV"] = ",".join(names)
    for opt, var in (("cpu_limit", "TOOLUSE_CPU_LIMIT"), ("process_limit", "TOOLUSE_NPROC_LIMIT")):
        value = getattr(args, opt, None)
        if value is not None:
            if value < 0:
                raise UsageError(f"--{opt.replace('_', '-')} {value}: give 0 (no limit) or more")
            os.environ[var] = str(value)
    if getattr(args, "file_size_limit", None) is not None:
        os.environ["TOOLUSE_FSIZE_LIMIT"] = str(parse_size(args.file_size_limit,
                                                           "--file-size-limit"))
    if getattr(args, "sandbox", None) is not None:
        os.environ["TOOLUSE_SANDBOX"] = args.sandbox
    try:
        sandbox.active()
    except sandbox.SandboxUnavailable as e:
        raise UsageError(f"{e}; see docs/reliability.md (running without user namespaces)"
                         ) from None


def build_subjects(args: argparse.Namespace) -> list[Any]:
    from conformance.reference import REFERENCE_SUBJECTS
    from conformance.subjects.spec import command_subject, factory_subject, subject_from_option

    subjects: list[Any] = []
    types = {"bash": args.bash_type, "editor": args.editor_type}
    options: dict[str, dict[str, Any]] = {"bash": {}, "editor": {}}
    if args.editor_max_characters is not None:
        if args.editor_max_characters < 1:
            raise UsageError("--editor-max-characters: give a positive number of characters")
        options["editor"]["max_characters"] = args.editor_max_characters
    for family, kind, value, name in subject_entries(args):
        if kind == "cmd":
            subjects.append(command_subject(value, family=family, tool_type=types[family],
                                            name=name, options=options[family]))
        else:
            subjects.append(subject_from_option(value, family=family, tool_type=types[family],
                                                options=options[family], name=name))
    from conformance.workers.options import agent_subjects

    subjects.extend(agent_subjects(args))
    if args.all_reference:
        for name, ref in REFERENCE_SUBJECTS.items():
            subjects.append(factory_subject(ref.spec, family=ref.family, tool_type=ref.tool_type,
                                            name=name, options=dict(ref.options)))
    if not subjects:
        raise UsageError("no subject to run; name one with --bash SPEC, --bash-cmd CMD, "
                         "--editor SPEC, --editor-cmd CMD, --worker SPEC, --worker-cmd CMD, "
                         "--loop SPEC, --loop-cmd CMD, or use --all-reference")
    return _unique_names(subjects)


class SubjectOption(argparse.Action):
    """``--bash`` and friends: appended to their own list and, in command-line order, to
    ``args._subjects`` (so that ``--name`` can name the one given just before it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        order = list(getattr(namespace, "_subjects", None) or [])
        order.append([self.dest, values, None, option_string])
        namespace._subjects = order


class NameOption(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        order = list(getattr(namespace, "_subjects", None) or [])
        if not order:
            namespace._name_error = (f"{option_string} {values}: give it after the subject it "
                                     "names, e.g. --bash-cmd 'python tool.py' --name my-bash")
        elif order[-1][2] is not None:
            namespace._name_error = (f"{option_string} {values}: {order[-1][3]} {order[-1][1]!r} is "
                                     f"already named {order[-1][2]!r}; give one per subject")
        else:
            order[-1] = [*order[-1][:2], values, order[-1][3]]
        namespace._subjects = order


def subject_entries(args: argparse.Namespace,
                    prefix: str = "") -> list[tuple[str, str, str, str | None]]:
    """(family, "spec"|"cmd", value, --name or None) for every --bash/--bash-cmd/--editor/
    --editor-cmd, bash before editor and factories before commands (the order of the reports)."""
    error = getattr(args, "_name_error", None)
    if error:
        raise UsageError(error)
    dests = [prefix + d for d in ("bash", "bash_cmd", "editor", "editor_cmd")]
    order = getattr(args, "_subjects", None)
    if order is None:  # a Namespace built without the parser
        order = [[dest, v, None, None] for dest in dests for v in getattr(args, dest, None) or []]
    entries = sorted((e for e in order if e[0] in dests), key=lambda e: dests.index(e[0]))
    return [(dest.removeprefix(prefix).split("_")[0],
             "cmd" if dest.endswith("_cmd") else "spec", value, name)
            for dest, value, name, _ in entries]


def _unique_names(subjects: list[Any]) -> list[Any]:
    from dataclasses import replace

    seen: dict[str, int] = {}
    out = []
    for s in subjects:
        n = seen.get(s.name, 0)
        seen[s.name] = n + 1
        out.append(s if n == 0 else replace(s, name=f"{s.name}#{n + 1}"))
    return out


def run(args: argparse.Namespace) -> int:
    from conformance import runner

    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    if args.startup_timeout is not None and not args.startup_timeout > 0:
        raise UsageError(f"--startup-timeout {args.startup_timeout:g}: give a positive number of "
                         "seconds")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    apply_sandbox_options(args)
    subjects = build_subjects(args)
    bad = runner.unmatched_patterns(args.checks)
    if bad:
        raise UsageError(f"--check {' '.join(bad)} matches no check; see `tooluse checks` for "
                         "the ids")
    if not any(runner.select_checks(s, args.checks or None) for s in subjects):
        kinds = ", ".join(sorted({f"{s.family} {s.tool_type}" for s in subjects}))
        raise UsageError(f"no check applies to these subjects ({kinds})"
                         + (f" with --check {' '.join(args.checks)}" if args.checks else "")
                         + "; see `tooluse checks --tool-type T`")
    if args.memory_limit is not None:  # before the preflight: it starts the subjects too
        os.environ["TOOLUSE_MEMORY_LIMIT"] = str(parse_size(args.memory_limit))
    from conformance.subjects.spec import preflight

    preflight(subjects, timeout=args.timeout or runner.DEFAULT_TIMEOUT)
    listeners: list[Any] = []
    reports = _reports_listener(args)
    if reports is not None:
        listeners.append(reports)
    from simulator.secrets import SecretScanner

    scanner = SecretScanner()  # what a subject printed may hold credentials: never echo them
    if args.json:
        listeners.append(lambda r: print(json.dumps(scanner.redact(r.to_json())), flush=True))
    if args.progress != "off":
        from conformance.reports.progress import Progress

        listeners.append(Progress(cast(TextIO, _Redacting(sys.stderr, scanner)),
                                  mode=args.progress))
    previous = _stop_on_sigterm()
    try:
        summary = runner.run(subjects, checks=args.checks or None,
                             timeout=args.timeout or runner.DEFAULT_TIMEOUT, strict=args.strict,
                             jobs=args.jobs, listeners=listeners,
                             startup_timeout=args.startup_timeout or runner.DEFAULT_STARTUP_TIMEOUT,
                             argv=getattr(args, "_argv", None) or sys.argv[1:])
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
    if not args.json and len(never) < len(summary.plan.subjects):
        print_summary(summary, cast(TextIO, _Redacting(sys.stdout, scanner)), skip=set(never))
        if reports is not None:
            print(f"reports: {', '.join(str(p) for p in reports.paths.values())}")
    if never:  # one line each, not one failure per check; exit 2 as for a command not found
        for name, message in never.items():
            print(f"tooluse run: error: subject {name} did not start, so no check ran: "
                  f"{scanner.redact_text(_without_prefix(message))}", file=sys.stderr)
        return EXIT_USAGE
    if reports is not None:
        if args.json:
            print(f"reports: {', '.join(str(p) for p in reports.paths.values())}")
        if args.expected_failures is not None:
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


def parse_size(text: str, option: str = "--memory-limit") -> int:
    """``512M``, ``4G``, ``1048576``, ``0`` → bytes (raises UsageError)."""
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (t[:-1], t[-1]) if t and t[-1] in units else (t, "")
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if value < 0:
        raise UsageError(f"{option} {text!r}: give a size such as 512M or 4G, or 0 for no "
                         "limit")
    return int(value * units[unit])


def _reports_listener(args: argparse.Namespace) -> Any:
    if args.out is None:
        if args.expected_failures is not None:
            raise UsageError("--expected-failures needs --out DIR (the verdict is written there)")
        return None
    try:
        from conformance.reports import RunReports, load_baseline
    except ImportError:  # pragma: no cover - reports package absent
        return _PlainResults(args.out)
    baseline = None
    if args.expected_failures is not None:
        try:
            baseline = load_baseline(args.expected_failures)
        except (OSError, ValueError) as e:
            raise UsageError(f"--expected-failures {args.expected_failures}: {e}") from None
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror}); "
                         "choose a writable directory") from None
    return RunReports(args.out, baseline=baseline)


class _PlainResults:
    """Fallback listener: a plain results.json (used only without conformance.reports)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.results: list[dict[str, Any]] = []
        self.paths = {"results": out / "results.json"}
        self.exit_code = 1

    def on_check_finished(self, result: CheckResult) -> None:
        self.results.append(result.to_json())

    def on_run_finished(self, *, complete: bool) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self.paths["results"].write_text(json.dumps(
            {"complete": complete, "results": self.results}, indent=2) + "\n")


MARK = {Outcome.PASS: "PASS", Outcome.FAIL: "FAIL", Outcome.SKIP: "skip", Outcome.ERROR: "ERROR"}


def readable(value: Any, limit: int = 400) -> str:
    """JSON, readable: non-ASCII text kept, invisible characters escaped, long values cut."""
    text = "".join(
        c if c.isprintable() or c == " " else json.dumps(c)[1:-1] if ord(c) < 0x10000
        else c for c in json.dumps(value, ensure_ascii=False, default=repr))
    return text if len(text) <= limit else text[:limit] + f"… [{len(text)} chars]"


def _without_prefix(message: str) -> str:
    return message.removeprefix("the subject did not start: ")


def print_summary(summary: Any, out: TextIO, *, skip: Collection[str] = ()) -> None:
    """A readable summary: what did not pass (with reproducers), then counts and the verdict.
    Subjects in ``skip`` (they never started) get their counts line only."""
    blocking = {id(r) for r in summary.blocking()}
    rerun = _rerun_commands(summary.plan.info)
    for r in summary.results:
        if r.outcome is Outcome.PASS or r.subject in skip:
            continue
        tag = "" if r.outcome is Outcome.SKIP or id(r) in blocking else " (not blocking)"
        print(f"{MARK[r.outcome]:5} {r.severity:6} {r.check_id}  [{r.subject}]{tag}", file=out)
        print(f"      {r.message}", file=out)
        if r.outcome in (Outcome.FAIL, Outcome.ERROR):
            if r.received is not None:
                print(f"      received:   {readable(r.received)}", file=out)
            if r.documented is not None:
                print(f"      documented: {readable(r.documented)}", file=out)
            if r.reproducer:
                note = ("; $TOOLUSE_WORKDIR is the case's directory"
                        if "$TOOLUSE_WORKDIR" in json.dumps(r.reproducer) else "")
                print(f"      reproducer (tool inputs, in order{note}):", file=out)
                for inp in r.reproducer[:12]:
                    print(f"        {readable(inp, 200)}", file=out)
            again = rerun.get(r.subject)
            if again is not None:
                print(f"      rerun: {again(r.check_id)}", file=out)
    print(file=out)
    for s in summary.plan.subjects:
        mine = [r for r in summary.results if r.subject == s.name]
        if s.name in skip:
            print(f"{s.name} ({s.tool_type}): {len(mine)} checks: none ran, it did not start "
                  "(below)", file=out)
            continue
        counts = {o: sum(r.outcome is o for r in mine) for o in Outcome}
        text = ", ".join(f"{counts[o]} {o.value}" for o in Outcome if counts[o])
        print(f"{s.name} ({s.tool_type}): {len(mine)} checks: {text or 'none apply'}", file=out)
    c = summary.counts()
    verdict = "PASS" if summary.ok else "FAIL"
    rule = "every MUST and SHOULD" if summary.strict else "every MUST"
    print(f"{verdict}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped, "
          f"{c['error']} harness errors in {summary.duration:.1f}s ({rule} check must pass; "
          f"{len(summary.blocking())} do not)", file=out)


def _rerun_commands(info: Any) -> dict[str, Callable[[str], str]]:
    """subject name -> check id -> the one-line command that reruns that check alone."""
    from conformance.reports.rerun import rerun_command

    run = {"argv": list(info.argv), "strict": info.strict}
    out: dict[str, Callable[[str], str]] = {}
    for s in info.subjects:
        if rerun_command(run, s.to_json(), "x.y"):
            out[s.name] = partial(rerun_command, run, s.to_json())
    return out


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - convenience
    from conformance.cli import main as cli_main

    return cli_main(["run", *(argv or [])])
