"""The run's options and the value they make: :data:`OPTIONS` and :class:`Run`.

- :data:`OPTIONS`, the one declarative table of options: each row is an option's flags, its
  ``argparse`` keywords, where it is offered (``tooluse run``, the pytest plugin as
  ``--tooluse-*``, ``tooluse probe``) and how a :class:`Run` shows it again
  (:func:`add_options`, :func:`pytest_options`);
- :class:`Run`, one frozen value built once at each entry point (:meth:`Run.from_args`; the
  ``TOOLUSE_*`` variables of the environment are read there, by the caller passing ``environ``,
  and nowhere below): the subjects as named (:class:`SubjectChoice`), the check selection,
  timeouts, jobs, matching, the sandbox and limits (a
  :class:`~conformance.subjects.launch.Confinement`); :attr:`Run.case` is the part a case needs.
  :meth:`Run.words` gives the options back (the rerun line, a matrix column's command line);
- the subject-option grammar: ``--bash``/``--bash-cmd``/``--editor``/``--editor-cmd``/
  ``--worker``/``--worker-cmd``/``--loop``/``--loop-cmd`` in command-line order, each labelled by
  the ``--name`` after it (:class:`SubjectOption`, :class:`NameOption`), bundled references
  looked up by name (:func:`subject_from_option`, :data:`AGENT_REFERENCES`), the names every
  subject gets (:meth:`Run.named`) and the subjects they make (:func:`build_subjects`).

Every problem is a :class:`~conformance.errors.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from conformance.errors import UsageError
from conformance.reference import REFERENCE_SUBJECTS
from conformance.subjects.case import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from conformance.shards import ShardPlan
    from conformance.subjects.case import CaseSettings
    from conformance.subjects.launch import Confinement
    from conformance.subjects.spec import Subject

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
    show: Callable[[Run], list[str]] | None = None
    #: The pytest plugin's keywords where they differ (``--tooluse-check`` takes one id: ``pytest
    #: --tooluse-check x tests/`` must not read ``tests/`` as a check).
    pytest_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> str:
        return self.flags[-1]

    @property
    def dest(self) -> str:
        return str(self.kwargs.get("dest") or self.flag.lstrip("-").replace("-", "_"))


def pair(flag: str, value: str) -> list[str]:
    """``--flag VALUE``, or ``--flag=VALUE`` for a value argparse would take for an option."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def _value(flag: str, attr: str, default: Any = None,
           fmt: Callable[[Any], str] = str) -> Callable[[Run], list[str]]:
    def show(run: Run) -> list[str]:
        value = getattr(run, attr)
        return [] if value == default else pair(flag, fmt(value))
    return show


def _flag(flag: str, attr: str) -> Callable[[Run], list[str]]:
    return lambda run: [flag] if getattr(run, attr) else []


def _limit(flag: str, attr: str) -> Callable[[Run], list[str]]:
    def show(run: Run) -> list[str]:
        value = getattr(run.confinement, attr)
        return [] if value == getattr(_defaults(), attr) else [flag, str(value or 0)]
    return show


def _show_sandbox(run: Run) -> list[str]:
    from conformance.subjects.sandbox import DEFAULT_MODE

    mode = run.confinement.mode
    return [] if mode == DEFAULT_MODE else ["--sandbox", mode]


def _show_pass_env(run: Run) -> list[str]:
    return [w for name in run.confinement.pass_env for w in pair("--pass-env", name)]


def _show_checks(run: Run) -> list[str]:
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


# --- the value ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectChoice:
    """One subject as the options name it: ``--<family>[-cmd] VALUE [--name NAME]``, or a bundled
    reference ``--all-reference`` adds (``kind`` ``ref``)."""

    family: str
    kind: Literal["spec", "cmd", "ref"]
    value: str
    name: str | None = None

    @property
    def flag(self) -> str:
        return f"--{self.family}-cmd" if self.kind == "cmd" else f"--{self.family}"

    def default_name(self) -> str:
        """The label it gets without ``--name``."""
        from conformance.subjects.spec import command_label, factory_label

        if self.kind == "cmd":
            if self.family == "loop":
                return f"cmd:{self.value}"
            try:
                words = shlex.split(self.value)
            except ValueError as e:
                raise UsageError(f"{self.flag} {self.value!r} does not parse ({e}); quote it as "
                                 "for a shell") from None
            if not words:
                raise UsageError(f"{self.flag}: the command is empty; give the command that "
                                 "starts your tool")
            return f"cmd:{Path(words[0]).name}" if self.family == "worker" else command_label(words)
        if self.kind == "ref" or self.value in REFERENCE_SUBJECTS or self.value in AGENT_REFERENCES:
            return self.value
        return factory_label(self.value) if self.family in TOOL_FAMILIES else self.value


def _default_confinement() -> Confinement:
    return _defaults()


@dataclass(frozen=True)
class Run:
    """Everything one run of the suite is told, built once at an entry point."""

    #: The subjects, in command-line order (:meth:`named`: in the reports' order, with names).
    subjects: tuple[SubjectChoice, ...] = ()
    all_reference: bool = False
    bash_type: str | None = None
    editor_type: str | None = None
    editor_max_characters: int | None = None
    #: The loops' matcher set (``--loop-matching``); None: what each loop declares.
    loop_matching: str | None = None
    #: Check ids or globs; empty: every applicable check.
    checks: tuple[str, ...] = ()
    strict: bool = False
    fail_on_flaky: bool = False
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    #: Cases at once (None: :func:`conformance.runner.default_jobs`).
    jobs: int | None = None
    confinement: Confinement = field(default_factory=_default_confinement)
    #: Factories' cases forked from a warm host (``TOOLUSE_FORKSERVER=0``: no; no option).
    fork_server: bool = True
    #: Command subjects started ahead of need (``TOOLUSE_START_POOL=0``: no; no option).
    start_pool: bool = True
    # Which part of the run this is, where the results go and how they are shown (a rerun line
    # drops them).
    #: ``--shard K/N`` (:func:`shard_plan_of`), balanced by ``--history``'s durations.
    shard: str | None = None
    history: Path | None = None
    out: Path | None = None
    expected_failures: Path | None = None
    json: bool = False
    progress: ProgressMode = "auto"

    @property
    def case(self) -> CaseSettings:
        """The part of the run one case of a subject needs."""
        from conformance.subjects.case import CaseSettings

        return CaseSettings(timeout=self.timeout, startup_timeout=self.startup_timeout,
                            confinement=self.confinement, fork_server=self.fork_server,
                            start_pool=self.start_pool)

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def from_args(cls, args: argparse.Namespace, environ: Mapping[str, str] | None = None, *,
                  prefix: str = "") -> Run:
        """The run ``args`` describe (``prefix``: the pytest plugin's ``tooluse_``), over the
        ``TOOLUSE_*`` values of ``environ`` (an entry point passes ``os.environ``; none: the
        documented defaults). Checks every value (a :class:`UsageError` naming the option);
        whether ``--sandbox required`` can be met is :meth:`check_sandbox`'s."""
        from conformance.subjects.launch import Confinement

        def get(dest: str, default: Any = None) -> Any:
            value = getattr(args, prefix + dest, default)
            return default if value is None else value

        error = getattr(args, "_name_error", None)
        if error:
            raise UsageError(error)
        env = dict(environ or {})
        timeout, startup, jobs = get("timeout"), get("startup_timeout"), get("jobs")
        if timeout is not None and not timeout > 0:
            raise UsageError(f"--timeout {timeout:g}: give a positive number of seconds")
        if startup is not None and not startup > 0:
            raise UsageError(f"--startup-timeout {startup:g}: give a positive number of seconds")
        if jobs is not None and jobs < 1:
            raise UsageError(f"--jobs {jobs}: give at least 1")
        most = get("editor_max_characters")
        if most is not None and most < 1:
            raise UsageError("--editor-max-characters: give a positive number of characters")
        return cls(
            subjects=_choices(args, prefix),
            all_reference=bool(get("all_reference", False)),
            bash_type=get("bash_type"), editor_type=get("editor_type"),
            editor_max_characters=most, loop_matching=get("loop_matching"),
            checks=tuple(get("checks", ())), strict=bool(get("strict", False)),
            fail_on_flaky=bool(get("fail_on_flaky", False)),
            timeout=DEFAULT_TIMEOUT if timeout is None else float(timeout),
            startup_timeout=DEFAULT_STARTUP_TIMEOUT if startup is None else float(startup),
            jobs=jobs,
            confinement=_confinement(Confinement.from_environ(env), get),
            fork_server=env.get("TOOLUSE_FORKSERVER", "1") != "0",
            start_pool=env.get("TOOLUSE_START_POOL", "1") != "0",
            shard=get("shard"), history=get("history"),
            out=get("out"), expected_failures=get("expected_failures"),
            json=bool(get("json", False)), progress=get("progress", "auto"))

    @classmethod
    def from_argv(cls, argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Run:
        """The run of ``tooluse run ARGV`` (``run`` first or not), parsed by the same parser
        ``tooluse run`` uses."""
        words = list(argv)
        if words[:1] == ["run"]:
            words = words[1:]
        return cls.from_args(run_parser().parse_args(words), environ)

    def check_sandbox(self) -> None:
        """``--sandbox required`` where no sandbox works is a usage error (``auto`` without
        one prints a one-line notice)."""
        from conformance.subjects import sandbox

        try:
            self.confinement.status()
        except sandbox.SandboxUnavailable as e:
            raise UsageError(f"{e}; see docs/reliability.md (running without user namespaces)"
                             ) from None

    # -- reading ----------------------------------------------------------------------------------

    def entries(self) -> list[SubjectChoice]:
        """The subjects in the reports' order: bash and editor (factories before commands),
        ``--all-reference``'s agents, workers, loops, then its bash and editor references."""
        order = [(f, k) for f in FAMILIES for k in ("spec", "cmd")]
        typed = sorted(self.subjects, key=lambda c: order.index((c.family, c.kind)))
        tools = [c for c in typed if c.family in TOOL_FAMILIES]
        agents = [c for c in typed if c.family not in TOOL_FAMILIES]
        if not self.all_reference:
            return tools + agents
        return (tools
                + [SubjectChoice(AGENT_REFERENCES[n][0], "ref", n) for n in ALL_REFERENCE]
                + agents
                + [SubjectChoice(ref.family, "ref", n) for n, ref in REFERENCE_SUBJECTS.items()])

    def named(self) -> list[tuple[SubjectChoice, str]]:
        """Every subject and the name it runs under: its ``--name`` or default label, a second
        one of the same name labelled ``NAME#2`` (and so on)."""
        used: set[str] = set()
        out = []
        for choice in self.entries():
            base = choice.default_name() if choice.name is None else choice.name
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}#{n}"
            used.add(name)
            out.append((choice, name))
        return out

    def names(self) -> list[str]:
        return [name for _, name in self.named()]

    # -- showing ----------------------------------------------------------------------------------

    def words(self) -> list[str]:
        """The ``tooluse run`` options of this run (what :meth:`from_argv` reads back)."""
        out: list[str] = []
        for choice in self.subjects:
            out += pair(choice.flag, choice.value)
            if choice.name is not None:
                out += pair("--name", choice.name)
        for opt in OPTIONS:
            if opt.show is not None and RUN in opt.where:
                out += opt.show(self)
        return out

    def only(self, subject: str, check_id: str, value: str | None = None) -> Run | None:
        """This run narrowed to one subject (by its name) and one check, without where the
        results went: what its rerun line runs (``value``: the subject's own spec or command
        as it ran, paths made absolute). ``None``: no subject of that name."""
        found = next((c for c, name in self.named() if name == subject), None)
        if found is None:
            return None
        kind: Literal["spec", "cmd"] = "cmd" if found.kind == "cmd" else "spec"
        typed = found.kind != "ref"  # a reference --all-reference added has its own type
        own = SubjectChoice(found.family, kind, value if value and typed else found.value)
        if own.default_name() != subject:
            own = replace(own, name=subject)
        return Run(subjects=(own,),
                   bash_type=self.bash_type if typed and found.family == "bash" else None,
                   editor_type=self.editor_type if typed and found.family == "editor" else None,
                   editor_max_characters=(self.editor_max_characters
                                          if typed and found.family == "editor" else None),
                   loop_matching=self.loop_matching if found.family == "loop" else None,
                   checks=(check_id,), strict=self.strict, fail_on_flaky=self.fail_on_flaky,
                   timeout=self.timeout, startup_timeout=self.startup_timeout,
                   confinement=self.confinement, fork_server=self.fork_server,
                   start_pool=self.start_pool)


def _choices(args: argparse.Namespace, prefix: str) -> tuple[SubjectChoice, ...]:
    order = getattr(args, "_subjects", None)
    if order is None:  # a Namespace built without the parser
        order = [[prefix + d, v, None, None] for d in SUBJECT_DESTS
                 for v in getattr(args, prefix + d, None) or []]
    out = []
    for dest, value, name, _ in order:
        plain = str(dest).removeprefix(prefix)
        if plain in SUBJECT_DESTS:
            family, _, cmd = plain.partition("_")
            out.append(SubjectChoice(family, "cmd" if cmd else "spec", str(value), name))
    return tuple(out)


def _confinement(base: Confinement, get: Callable[..., Any]) -> Confinement:
    """``base`` (the environment's) with the sandbox and limit options applied."""
    from conformance.subjects import sandbox

    names = list(get("pass_env", None) or [])
    for name in names:
        if not name or "=" in name or not name.replace("_", "a").isalnum():
            raise UsageError(f"--pass-env {name!r}: give the name of an environment variable")
        if sandbox.is_credential(name):
            raise UsageError(f"--pass-env {name}: a credential never reaches a subject; give the "
                             "subject what it needs another way (a file in its case directory)")
    conf = replace(base, pass_env=tuple(names)) if names else base
    for opt in ("cpu_limit", "process_limit"):
        value = get(opt)
        if value is not None and value < 0:
            raise UsageError(f"--{opt.replace('_', '-')} {value}: give 0 (no limit) or more")
    if get("cpu_limit") is not None:
        conf = replace(conf, cpu=get("cpu_limit") or None)
    if get("process_limit") is not None:
        conf = replace(conf, processes=get("process_limit") or None)
    if get("file_size_limit") is not None:
        conf = replace(conf, file_size=parse_size(str(get("file_size_limit")),
                                                  "--file-size-limit") or None)
    if get("memory_limit") is not None:
        conf = replace(conf, memory=parse_size(str(get("memory_limit"))) or None)
    if get("sandbox") is not None:
        conf = replace(conf, mode=get("sandbox"))
    return conf


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a usage error, not an exit
        raise UsageError(message)


def run_parser() -> argparse.ArgumentParser:
    """A parser of ``tooluse run``'s options alone, built as ``tooluse run`` builds its own
    (a mistake is a :class:`UsageError`, not an exit)."""
    parser = _Parser(prog="tooluse run", add_help=False)
    add_run_arguments(parser)
    return parser


def confinement_of(args: argparse.Namespace,
                   environ: Mapping[str, str] | None = None) -> Confinement:
    """The sandbox mode and limits ``args`` give, over ``environ``'s ``TOOLUSE_*`` values."""
    return Run.from_args(args, environ).confinement


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


# --- the subjects ---------------------------------------------------------------------------------


def build_subjects(run: Run) -> list[Any]:
    """The subjects the run names, in the reports' order, under :meth:`Run.named`'s names."""
    from conformance.subjects.spec import command_subject, factory_subject

    types = {"bash": run.bash_type, "editor": run.editor_type}
    options: dict[str, dict[str, Any]] = {"bash": {}, "editor": {}}
    if run.editor_max_characters is not None:
        options["editor"]["max_characters"] = run.editor_max_characters
    subjects: list[Any] = []
    for choice, name in run.named():
        family, value = choice.family, choice.value
        if family not in TOOL_FAMILIES:
            subjects.append(_agent_subject(choice, name, run.loop_matching))
        elif choice.kind == "ref":
            ref = REFERENCE_SUBJECTS[value]
            subjects.append(factory_subject(ref.spec, family=ref.family, tool_type=ref.tool_type,
                                            name=name, options=dict(ref.options)))
        elif choice.kind == "cmd":
            subjects.append(command_subject(value, family=family, tool_type=types[family],
                                            name=name, options=options[family]))
        else:
            subjects.append(subject_from_option(value, family=family, tool_type=types[family],
                                                options=options[family], name=name))
    if not subjects:
        raise UsageError("no subject to run; name one with --bash SPEC, --bash-cmd CMD, "
                         "--editor SPEC, --editor-cmd CMD, --worker SPEC, --worker-cmd CMD, "
                         "--loop SPEC, --loop-cmd CMD, or use --all-reference")
    return subjects


def unique_names(subjects: list[Any]) -> list[Any]:
    """The subjects, a second one of the same name labelled ``NAME#2`` (and so on)."""
    seen: dict[str, int] = {}
    out = []
    for s in subjects:
        n = seen.get(s.name, 0)
        seen[s.name] = n + 1
        out.append(s if n == 0 else replace(s, name=f"{s.name}#{n + 1}"))
    return out


def subject_from_option(value: str, *, family: str, tool_type: str | None = None,
                        options: dict[str, Any] | None = None,
                        name: str | None = None) -> Subject:
    """``--bash VALUE``: a bundled reference subject's name, or a ``module:attr`` spec
    (``name``: its label; default the reference's name or :func:`factory_label`)."""
    from conformance.subjects.spec import a_or_an, factory_subject

    ref = REFERENCE_SUBJECTS.get(value)
    if ref is not None:
        if ref.family != family:
            raise UsageError(f"{value!r} is {a_or_an(ref.family)} reference subject, not "
                             f"{a_or_an(family)} one")
        return factory_subject(ref.spec, family=family, tool_type=tool_type or ref.tool_type,
                               name=value if name is None else name,
                               options={**ref.options, **(options or {})})
    if ":" not in value:
        names = ", ".join(n for n, r in REFERENCE_SUBJECTS.items() if r.family == family)
        raise UsageError(f"{value!r} is neither module:attr nor a reference subject; use "
                         f"module:attr, path/to/file.py:attr, or one of: {names}")
    return factory_subject(value, family=family, tool_type=tool_type, options=options, name=name)


#: Bundled agent-side references: name -> (family, spec).
AGENT_REFERENCES: dict[str, tuple[str, str]] = {
    "reference-worker": ("worker", "conformance.reference.worker:serve"),
    "minimal-worker": ("worker", "conformance.workers.minimal:serve"),
    "reference-loop": ("loop", "conformance.reference.loop:loop"),
    "sdk-tool-runner": ("loop", "conformance.reference.loop:sdk_tool_runner"),
}

#: What ``--all-reference`` adds: the SDK's EnvironmentWorker and the documented loop.
ALL_REFERENCE = ("reference-worker", "reference-loop")


def _agent_subject(choice: SubjectChoice, name: str, matching: str | None) -> Any:
    """The worker or loop subject a ``--worker``/``--worker-cmd``/``--loop``/``--loop-cmd``
    names (a bundled reference by its name)."""
    from conformance.loops.subject import loop_command_subject, loop_subject
    from conformance.workers.subject import worker_command_subject, worker_subject

    family, value = choice.family, choice.value
    ref = AGENT_REFERENCES.get(value) if choice.kind != "cmd" else None
    if ref is not None:
        if ref[0] != family:
            raise UsageError(f"{value!r} is a {ref[0]} reference, not a {family}")
        value = ref[1]
    if family == "worker":
        if choice.kind == "cmd":
            return worker_command_subject(value, name=name)
        return worker_subject(value, name=name)
    if choice.kind == "cmd":
        return loop_command_subject(value, name=name, matching=matching)
    return loop_subject(value, name=name, matching=matching)


def shard_plan_of(run: Run, subjects: list[Any],
                  checks_of: Callable[[Any], Sequence[Any]]) -> ShardPlan | None:
    """``--shard K/N`` over the run's cases (each subject's ``checks_of(subject)``: the runner's
    selection, ``--check`` applied), balanced by ``--history``'s durations (default: ``--out``'s
    results.json when there is one); None without ``--shard``."""
    import json
    import sys

    from conformance.shards import durations_of, parse_shard, run_shard

    if run.shard is None:
        if run.history is not None:
            raise UsageError("--history only balances --shard K/N; give --shard too")
        return None
    shard = parse_shard(run.shard)
    names = [s.name for s in subjects]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--shard: two subjects are named {twice[0]!r}; give each its own "
                         "--name (the shards' cases are told apart by it)")
    path = run.history
    if path is None and run.out is not None and (run.out / "results.json").is_file():
        path = run.out / "results.json"
    history: dict[tuple[str, str], float] = {}
    if path is not None and not path.exists():  # a CI's first run: no report to learn from yet
        print(f"tooluse run: --history {path} does not exist: the split uses estimated costs",
              file=sys.stderr)
        path = None
    if path is not None:
        try:
            history = durations_of(json.loads(path.read_text(encoding="utf-8"))["results"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            if run.history is not None:
                raise UsageError(f"--history {path}: not a readable results.json ({e})") from None
            path = None
    cases = [((s.name, c.id), c) for s in subjects for c in checks_of(s)]
    return run_shard(shard, cases, history, None if path is None else str(path))
