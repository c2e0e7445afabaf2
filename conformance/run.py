"""The run's value: :class:`Run`, one frozen value built once at each entry point.

:meth:`Run.from_args` builds it from the options of :data:`conformance.options.OPTIONS` (the
``TOOLUSE_*`` variables of the environment are read there, by the caller passing ``environ``,
and nowhere below): the subjects as named (:class:`SubjectChoice`), the check selection,
timeouts, jobs, matching, the sandbox and limits (a
:class:`~conformance.subjects.launch.Confinement`); :attr:`Run.case` is the part a case needs.
:meth:`Run.words` gives the options back (the rerun line, a matrix column's command line), and
:meth:`Run.only` narrows a run to one subject and one check. The names every subject gets
(:meth:`Run.named`) and the subjects they make (:func:`build_subjects`,
:func:`subject_from_option`) are here too, with ``--shard``'s plan (:func:`shard_plan_of`).

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
from conformance.options import (
    AGENT_REFERENCES,
    ALL_REFERENCE,
    FAMILIES,
    OPTIONS,
    RUN,
    SUBJECT_DESTS,
    TOOL_FAMILIES,
    ProgressMode,
    pair,
    parse_size,
    run_parser,
)
from conformance.reference import REFERENCE_SUBJECTS
from conformance.subjects.case import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from conformance.shards import ShardPlan
    from conformance.subjects.case import CaseSettings
    from conformance.subjects.launch import Confinement
    from conformance.subjects.spec import Subject


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
    from conformance.subjects.launch import Confinement

    return Confinement()


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


def confinement_of(args: argparse.Namespace,
                   environ: Mapping[str, str] | None = None) -> Confinement:
    """The sandbox mode and limits ``args`` give, over ``environ``'s ``TOOLUSE_*`` values."""
    return Run.from_args(args, environ).confinement



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
