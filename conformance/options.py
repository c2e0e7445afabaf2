"""The run's options: :data:`OPTIONS`, and the grammar of the subject options.

- :data:`OPTIONS`, the one declarative table of options: each row is an option's flags, its
  ``argparse`` keywords, where it is offered (``tooluse run``, the pytest plugin as
  ``--tooluse-*``, ``tooluse probe``) and how a :class:`~conformance.run.Run` shows it again
  (:func:`add_options`, :func:`pytest_options`, :func:`run_parser`);
- the subject-option grammar: ``--bash``/``--bash-cmd``/``--editor``/``--editor-cmd``/
  ``--worker``/``--worker-cmd``/``--loop``/``--loop-cmd`` in command-line order, each labelled by
  the ``--name`` after it (:class:`SubjectOption`, :class:`NameOption`), and the bundled agent
  references they may name (:data:`AGENT_REFERENCES`).

The value the options make, :class:`~conformance.run.Run`, is :mod:`conformance.run`'s.
Every problem is a :class:`~conformance.errors.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from conformance.errors import UsageError
from conformance.subjects.case import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from conformance.subjects.launch import Confinement

# The subjects' modules are imported when a subject is made, the sandbox's when a run is built:
# `tooluse` builds every command's parser at start, and the pytest plugin loads this table in
# every pytest run of an environment it is installed in.

#: How ``tooluse run`` shows progress (``--progress``; drawn by :mod:`conformance.reports.progress`).
ProgressMode = Literal["auto", "bar", "counter", "lines", "off"]
PROGRESS_MODES: tuple[ProgressMode, ...] = ("auto", "bar", "counter", "lines", "off")
#: The subject families, in the reports' order, and the options naming them.
FAMILIES = ("bash", "editor", "worker", "loop")
TOOL_FAMILIES = ("bash", "editor")


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


# --- the table -----------------------------------------------------------------------------------

Where = frozenset[str]
RUN, PYTEST, PROBE = "run", "pytest", "probe"
_RUN_AND_PYTEST: Where = frozenset({RUN, PYTEST})
_EVERYWHERE: Where = frozenset({RUN, PYTEST, PROBE})


@dataclass(frozen=True)
class Option:
    """One row of :data:`OPTIONS`."""

    flags: tuple[str, ...]
    group: str
    kwargs: Mapping[str, Any]
    where: Where = frozenset({RUN})
    #: The words that show a run's value of it again (``None``: the subjects' own rendering,
    #: or an option of the entry point alone, which a rerun drops).
    show: Callable[[Shown], list[str]] | None = None
    #: The pytest plugin's keywords where they differ (``--tooluse-check`` takes one id: ``pytest
    #: --tooluse-check x tests/`` must not read ``tests/`` as a check).
    pytest_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> str:
        return self.flags[-1]

    @property
    def dest(self) -> str:
        return str(self.kwargs.get("dest") or self.flag.lstrip("-").replace("-", "_"))


class Shown(Protocol):
    """What a row's ``show`` reads of the run it shows: a :class:`conformance.run.Run`, which
    builds on this table (so it is named here by what is read, not imported)."""

    @property
    def checks(self) -> tuple[str, ...]: ...

    @property
    def confinement(self) -> Confinement: ...


def pair(flag: str, value: str) -> list[str]:
    """``--flag VALUE``, or ``--flag=VALUE`` for a value argparse would take for an option."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def _value(flag: str, attr: str, default: Any = None,
           fmt: Callable[[Any], str] = str) -> Callable[[Shown], list[str]]:
    def show(run: Shown) -> list[str]:
        value = getattr(run, attr)
        return [] if value == default else pair(flag, fmt(value))
    return show


def _flag(flag: str, attr: str) -> Callable[[Shown], list[str]]:
    return lambda run: [flag] if getattr(run, attr) else []


def _limit(flag: str, attr: str) -> Callable[[Shown], list[str]]:
    def show(run: Shown) -> list[str]:
        value = getattr(run.confinement, attr)
        return [] if value == getattr(_defaults(), attr) else [flag, str(value or 0)]
    return show


def _show_sandbox(run: Shown) -> list[str]:
    from conformance.subjects.sandbox import DEFAULT_MODE

    mode = run.confinement.mode
    return [] if mode == DEFAULT_MODE else ["--sandbox", mode]


def _show_pass_env(run: Shown) -> list[str]:
    return [w for name in run.confinement.pass_env for w in pair("--pass-env", name)]


def _show_checks(run: Shown) -> list[str]:
    return ["--check", *run.checks] if run.checks else []


def _g(x: float) -> str:
    return f"{x:g}" if float(x) == float(f"{x:g}") else repr(float(x))


#: ``--shard K/N`` and ``--history PATH`` (``tooluse run`` here, ``tooluse matrix`` by
#: :func:`add_shard_options`; docs/ci.md "Shards").
SHARD_HELP = ("run only the K-th of N shards (1/4 .. 4/4): the {units} split the same way on "
              "every machine, balanced by the durations in --history; join the shards with "
              "'{merge} DIR... --out DIR' (docs/ci.md)")
HISTORY_HELP = ("{history} of an earlier run whose durations balance --shard (default: the one "
                "in --out, if any; without one, estimated costs); give every shard the same one")


def add_shard_options(p: argparse.ArgumentParser, history: str, units: str = "cases",
                      merge: str = "tooluse run merge") -> None:
    """``--shard K/N`` and ``--history PATH`` for ``tooluse matrix`` (``tooluse run``'s are rows
    of :data:`OPTIONS`): run the K-th of N parts, split by the durations ``history`` recorded."""
    p.add_argument("--shard", default=None, metavar="K/N",
                   help=SHARD_HELP.format(units=units, merge=merge))
    p.add_argument("--history", type=Path, default=None, metavar="PATH",
                   help=HISTORY_HELP.format(history=history))


def _subject(flag: str, metavar: str, help: str) -> Option:
    return Option((flag,), "subjects", dict(action=SubjectOption, default=[], metavar=metavar,
                                            help=help), _RUN_AND_PYTEST)


#: Every option of a run, in ``--help`` order. ``where``: offered by ``tooluse run``, the pytest
#: plugin (``--tooluse-<name>``) and/or ``tooluse probe``.
OPTIONS: tuple[Option, ...] = (
    _subject("--bash", "SPEC", "a bash tool implementation (module:attr factory, "
             "path/file.py:attr or a reference subject's name)"),
    _subject("--bash-cmd", "CMD", "an out-of-process bash tool, in any language"),
    Option(("--bash-type",), "subjects", dict(default=None, metavar="T",
           help="the bash tool type the subjects implement (default bash_20250124)"),
           _RUN_AND_PYTEST, _value("--bash-type", "bash_type")),
    _subject("--editor", "SPEC", "a text editor tool implementation (module:attr factory, "
             "path/file.py:attr or a reference subject's name)"),
    _subject("--editor-cmd", "CMD", "an out-of-process text editor tool, in any language"),
    Option(("--editor-type",), "subjects", dict(default=None, metavar="T",
           help="the text editor tool type (default text_editor_20250728)"), _RUN_AND_PYTEST,
           _value("--editor-type", "editor_type")),
    Option(("--name",), "subjects", dict(action=NameOption, default=None, metavar="NAME",
           help="the label of the subject option (--bash, --bash-cmd, --editor, --editor-cmd, "
                "--worker, --worker-cmd, --loop, --loop-cmd) given just before it (default: "
                "cmd:<script> for a command, the spec for a factory); it names the subject in "
                "every report"), _RUN_AND_PYTEST),
    Option(("--editor-max-characters",), "subjects", dict(type=int, default=None, metavar="N",
           help="the max_characters the editor subjects are configured with "
                "(text_editor_20250728; enables the truncation check)"), _RUN_AND_PYTEST,
           _value("--editor-max-characters", "editor_max_characters")),
    _subject("--worker", "SPEC", "a Managed Agents custom-tool worker: module:attr naming "
             "async serve(client, environment_id, environment_key, *, tools, timeout), or "
             "reference-worker"),
    _subject("--worker-cmd", "CMD", "a worker in any language; it gets ANTHROPIC_BASE_URL, "
             "TOOLUSE_ENVIRONMENT_ID, TOOLUSE_ENVIRONMENT_KEY, TOOLUSE_TOOL_TIMEOUT"),
    _subject("--loop", "SPEC", "an agent loop: module:attr naming loop(client, params) (sync, or "
             "async taking the async client), or reference-loop / sdk-tool-runner; see "
             "docs/loops.md"),
    Option(("--loop-matching",), "subjects", dict(choices=["exact", "tolerant"], default=None,
           help="how the loops' requests are matched to the recordings: exact, or tolerant "
                "(tool order, schema noise, whole history or a restart alike: "
                "simulator.matchers.TOLERANT_MATCHERS); default: what the loop declares "
                "(tooluse_matching), else exact"), _RUN_AND_PYTEST,
           _value("--loop-matching", "loop_matching")),
    _subject("--loop-cmd", "CMD", "an agent loop in any language, started per scenario with "
             "ANTHROPIC_BASE_URL (the simulation) and TOOLUSE_LOOP_PARAMS (a JSON file: the "
             "conversations to drive), run from its case directory; its contract: docs/loops.md"),
    Option(("--all-reference",), "subjects", dict(action="store_true",
           help="also run every bundled reference subject"), _RUN_AND_PYTEST,
           _flag("--all-reference", "all_reference")),
    Option(("--check",), "checks", dict(dest="checks", action="extend", nargs="+", default=[],
           metavar="ID", help="only these check ids (globs allowed: 'bash.session.*')"),
           _RUN_AND_PYTEST, _show_checks,
           pytest_kwargs=dict(dest="checks", action="append", default=[], metavar="ID",
                              help="only this check id (globs allowed); give it once per id")),
    Option(("--strict",), "checks", dict(action="store_true",
           help="SHOULD checks count like MUST ones"), _RUN_AND_PYTEST,
           _flag("--strict", "strict")),
    Option(("--shard",), "checks", dict(default=None, metavar="K/N", help=SHARD_HELP.format(
        units="cases", merge="tooluse run merge")),
           frozenset({RUN}), _value("--shard", "shard")),
    Option(("--history",), "checks", dict(type=Path, default=None, metavar="PATH",
           help=HISTORY_HELP.format(history="a results.json")), frozenset({RUN}),
           _value("--history", "history")),
    Option(("--fail-on-flaky",), "checks", dict(action="store_true",
           help="flaky results (a failure whose reproducer did not reproduce and that passed "
                "when run again alone) fail the run like failures (default: reported, not "
                "blocking)"), _RUN_AND_PYTEST, _flag("--fail-on-flaky", "fail_on_flaky")),
    Option(("--timeout",), "checks", dict(type=float, default=None, metavar="S",
           help=f"the command timeout given to subjects, in seconds (default {DEFAULT_TIMEOUT:g})"),
           _RUN_AND_PYTEST, _value("--timeout", "timeout", DEFAULT_TIMEOUT, _g)),
    Option(("--startup-timeout",), "checks", dict(type=float, default=None, metavar="S",
           help="how long a subject may take to start and answer a first, harmless call; not "
                f"counted as tool time (default {DEFAULT_STARTUP_TIMEOUT:g})"),
           _RUN_AND_PYTEST, _value("--startup-timeout", "startup_timeout",
                                   DEFAULT_STARTUP_TIMEOUT, _g)),
    Option(("--jobs",), "checks", dict(type=int, default=None, metavar="N",
           help="cases run at once (default: 2 per CPU, 2 to 16)"), frozenset({RUN}),
           _value("--jobs", "jobs")),
    Option(("--sandbox",), "sandbox and limits", dict(choices=("auto", "required", "off"),
           default=None,
           help="run every subject process under bubblewrap: read-only file system but its "
                "case directory, no network, its own PID namespace (default auto: used where it "
                "works, else a one-line notice says why; required: exit 2 without it)"),
           _EVERYWHERE, _show_sandbox),
    Option(("--pass-env",), "sandbox and limits", dict(action="append", default=[],
           metavar="NAME", help="also give subjects this environment variable (they get PATH, "
                                "LANG, HOME, TMPDIR and TOOLUSE_* only; credentials never)"),
           _EVERYWHERE, _show_pass_env),
    Option(("--memory-limit",), "sandbox and limits", dict(default=None, metavar="SIZE",
           help="address space each subject process may take, e.g. 512M, 4G; 0 for no limit "
                "(default 2G; a subject past it gets MemoryError / ENOMEM)"), _EVERYWHERE,
           _limit("--memory-limit", "memory")),
    Option(("--cpu-limit",), "sandbox and limits", dict(type=int, default=None, metavar="S",
           help="CPU seconds each subject process may use; 0 for none (default 600)"),
           _EVERYWHERE, _limit("--cpu-limit", "cpu")),
    Option(("--file-size-limit",), "sandbox and limits", dict(default=None, metavar="SIZE",
           help="largest file a subject may write, e.g. 100M; 0 for none (default 1G)"),
           _EVERYWHERE,
           _limit("--file-size-limit", "file_size")),
    Option(("--process-limit",), "sandbox and limits", dict(type=int, default=None, metavar="N",
           help="processes a sandboxed subject may run at once (a fork bomb stops there); 0 for "
                "none (default 512)"), _EVERYWHERE,
           _limit("--process-limit", "processes")),
    Option(("--out",), "reports", dict(type=Path, default=None, metavar="DIR",
           help="write results.json and the reports into DIR"), frozenset({RUN}),
           _value("--out", "out")),
    Option(("--expected-failures",), "reports", dict(type=Path, default=None, metavar="FILE",
           help="a baseline of known failures: only new failures fail the run"),
           frozenset({RUN}), _value("--expected-failures", "expected_failures")),
    Option(("--json",), "reports", dict(action="store_true",
           help="print the results as JSON lines"), frozenset({RUN}), _flag("--json", "json")),
    Option(("--progress",), "reports", dict(choices=PROGRESS_MODES, default="auto",
           help="progress on stderr: a rewritten line on a terminal (bar), a count every few "
                "seconds otherwise (counter), a line per finished check (lines), or nothing "
                "(off); default auto"), frozenset({RUN}), _value("--progress", "progress", "auto")),
    Option(("-q", "--quiet"), "reports", dict(action="store_const", dest="progress", const="off",
           help="no progress (same as --progress off)"), frozenset({RUN})),
)

#: The options naming subjects (``--bash``, ..., ``--loop-cmd``), by their dest.
SUBJECT_DESTS = tuple(o.dest for o in OPTIONS if o.kwargs.get("action") is SubjectOption)


def _defaults() -> Confinement:
    from conformance.subjects.launch import Confinement

    return Confinement()


def add_options(p: argparse.ArgumentParser, where: str = RUN) -> None:
    """The table's options offered ``where`` (``run``, ``probe``), in groups."""
    groups: dict[str, Any] = {}
    for opt in OPTIONS:
        if where in opt.where:
            if opt.group not in groups:
                groups[opt.group] = p.add_argument_group(opt.group)
            groups[opt.group].add_argument(*opt.flags, **opt.kwargs)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``tooluse run`` (subjects, checks, limits, sandbox, reports)."""
    add_options(p, RUN)


#: The pytest plugin's prefix: ``--timeout`` is ``--tooluse-timeout`` there.
PYTEST_PREFIX = "tooluse_"


def pytest_options() -> list[tuple[str, dict[str, Any]]]:
    """The table's options the pytest plugin offers, as ``(--tooluse-<name>, keywords)``."""
    out = []
    for opt in OPTIONS:
        if PYTEST in opt.where:
            kwargs = dict(opt.pytest_kwargs or opt.kwargs)
            kwargs["dest"] = PYTEST_PREFIX + str(kwargs.get("dest") or opt.dest)
            if kwargs.get("action") == "store_true":
                kwargs.setdefault("default", False)
            out.append(("--tooluse-" + opt.flag.removeprefix("--"), kwargs))
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a usage error, not an exit
        raise UsageError(message)


def run_parser() -> argparse.ArgumentParser:
    """A parser of ``tooluse run``'s options alone, built as ``tooluse run`` builds its own
    (a mistake is a :class:`UsageError`, not an exit)."""
    parser = _Parser(prog="tooluse run", add_help=False)
    add_run_arguments(parser)
    return parser


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


#: Bundled agent-side references: name -> (family, spec).
AGENT_REFERENCES: dict[str, tuple[str, str]] = {
    "reference-worker": ("worker", "conformance.reference.worker:serve"),
    "minimal-worker": ("worker", "conformance.workers.minimal:serve"),
    "reference-loop": ("loop", "conformance.reference.loop:loop"),
    "sdk-tool-runner": ("loop", "conformance.reference.loop:sdk_tool_runner"),
}

#: What ``--all-reference`` adds: the SDK's EnvironmentWorker and the documented loop.
ALL_REFERENCE = ("reference-worker", "reference-loop")
