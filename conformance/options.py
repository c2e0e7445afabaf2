"""The run's options, below the CLI: what ``tooluse run``, the pytest plugin, the matrix and the
rerun lines share.

- the argument table of ``tooluse run`` (:func:`add_run_arguments`; ``reports/rerun.py`` reads
  it to rebuild one check's command line);
- the subject-option grammar: ``--bash``/``--bash-cmd``/``--editor``/``--editor-cmd`` in
  command-line order, each labelled by the ``--name`` after it (:class:`SubjectOption`,
  :class:`NameOption`, :func:`subject_entries`), bundled references looked up by name
  (:func:`subject_from_option`, :data:`AGENT_REFERENCES`), and the subjects they make
  (:func:`build_subjects`);
- the sandbox and limit options (:func:`add_sandbox_options`), interpreted once into the value
  the run carries (:func:`confinement_of`, a
  :class:`~conformance.subjects.launch.Confinement`), and :func:`parse_size`.

Every problem is a :class:`~conformance.errors.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from conformance.errors import UsageError
from conformance.reference import REFERENCE_SUBJECTS

if TYPE_CHECKING:
    from conformance.shards import ShardPlan
    from conformance.subjects.launch import Confinement
    from conformance.subjects.spec import Subject

# The subjects' modules are imported when a subject is made, the sandbox's when the options are
# applied: `tooluse` builds every command's parser at start, and these take a second to import.


#: How ``tooluse run`` shows progress (``--progress``; drawn by :mod:`conformance.reports.progress`).
ProgressMode = Literal["auto", "bar", "counter", "lines", "off"]
PROGRESS_MODES: tuple[ProgressMode, ...] = ("auto", "bar", "counter", "lines", "off")


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``tooluse run`` (subjects, checks, limits, sandbox, reports)."""
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
                   help="the label of the --bash/--bash-cmd/--editor/--editor-cmd/--loop/"
                        "--loop-cmd subject given just before it (default: cmd:<script> for a "
                        "command, the spec for a factory); it names the subject in every report")
    g.add_argument("--editor-max-characters", type=int, default=None, metavar="N",
                   help="the max_characters the editor subjects are configured with "
                        "(text_editor_20250728; enables the truncation check)")
    add_agent_options(g)
    g.add_argument("--all-reference", action="store_true",
                   help="also run every bundled reference subject")
    p.add_argument("--check", dest="checks", action="extend", nargs="+", default=[],
                   metavar="ID", help="only these check ids (globs allowed: 'bash.session.*')")
    p.add_argument("--strict", action="store_true", help="SHOULD checks count like MUST ones")
    add_shard_options(p, "a results.json")
    p.add_argument("--fail-on-flaky", action="store_true",
                   help="flaky results (a failure whose reproducer did not reproduce and that "
                        "passed when run again alone) fail the run like failures (default: "
                        "reported, not blocking)")
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
    p.add_argument("--progress", choices=PROGRESS_MODES, default="auto",
                   help="progress on stderr: a rewritten line on a terminal (bar), a count "
                        "every few seconds otherwise (counter), a line per finished check "
                        "(lines), or nothing (off); default auto")
    p.add_argument("-q", "--quiet", action="store_const", dest="progress", const="off",
                   help="no progress (same as --progress off)")


def add_shard_options(p: argparse.ArgumentParser, history: str) -> None:
    """``--shard K/N`` and ``--history PATH`` (``tooluse run`` and ``tooluse matrix``; docs/ci.md
    "Shards"): run the K-th of N parts, split by the durations ``history`` recorded."""
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="run only the K-th of N shards (1/4 .. 4/4): the cases split the same "
                        "way on every machine, balanced by the durations in --history; join the "
                        "shards with the merge subcommand (docs/ci.md)")
    p.add_argument("--history", type=Path, default=None, metavar="PATH",
                   help=f"{history} of an earlier run whose durations balance --shard (default: "
                        "the one in --out, if any; without one, estimated costs); give every "
                        "shard the same one")


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


def confinement_of(args: argparse.Namespace) -> Confinement:
    """The run's sandbox mode and limits: ``--sandbox``, ``--pass-env``, ``--memory-limit``,
    ``--cpu-limit``, ``--file-size-limit``, ``--process-limit`` over the environment's
    ``TOOLUSE_*`` values (read once here; the run carries the value to every subject process, and
    nothing is written to this process's environment). ``--sandbox required`` without a working
    sandbox is a usage error."""
    from conformance.subjects import sandbox
    from conformance.subjects.launch import Confinement

    conf = Confinement.from_environ()
    names = list(getattr(args, "pass_env", None) or [])
    for name in names:
        if not name or "=" in name or not name.replace("_", "a").isalnum():
            raise UsageError(f"--pass-env {name!r}: give the name of an environment variable")
        if sandbox.is_credential(name):
            raise UsageError(f"--pass-env {name}: a credential never reaches a subject; give the "
                             "subject what it needs another way (a file in its case directory)")
    if names:
        conf = replace(conf, pass_env=tuple(names))
    limits: dict[str, int | None] = {}
    for opt, field in (("cpu_limit", "cpu"), ("process_limit", "processes")):
        value = getattr(args, opt, None)
        if value is not None:
            if value < 0:
                raise UsageError(f"--{opt.replace('_', '-')} {value}: give 0 (no limit) or more")
            limits[field] = value or None
    conf = replace(conf, cpu=limits.get("cpu", conf.cpu),
                   processes=limits.get("processes", conf.processes))
    if getattr(args, "file_size_limit", None) is not None:
        conf = replace(conf, file_size=parse_size(args.file_size_limit, "--file-size-limit")
                       or None)
    if getattr(args, "memory_limit", None) is not None:
        conf = replace(conf, memory=parse_size(args.memory_limit) or None)
    if getattr(args, "sandbox", None) is not None:
        conf = replace(conf, mode=args.sandbox)
    try:
        conf.status()
    except sandbox.SandboxUnavailable as e:
        raise UsageError(f"{e}; see docs/reliability.md (running without user namespaces)"
                         ) from None
    return conf


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


def build_subjects(args: argparse.Namespace) -> list[Any]:
    """The subjects ``tooluse run``'s options name, in the reports' order, names made unique."""
    from conformance.subjects.spec import command_subject, factory_subject

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
    subjects.extend(agent_subjects(args))
    if args.all_reference:
        for name, ref in REFERENCE_SUBJECTS.items():
            subjects.append(factory_subject(ref.spec, family=ref.family, tool_type=ref.tool_type,
                                            name=name, options=dict(ref.options)))
    if not subjects:
        raise UsageError("no subject to run; name one with --bash SPEC, --bash-cmd CMD, "
                         "--editor SPEC, --editor-cmd CMD, --worker SPEC, --worker-cmd CMD, "
                         "--loop SPEC, --loop-cmd CMD, or use --all-reference")
    return unique_names(subjects)


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


def add_agent_options(group: Any) -> None:
    group.add_argument("--worker", action="append", default=[], metavar="SPEC",
                       help="a Managed Agents custom-tool worker: module:attr naming "
                            "async serve(client, environment_id, environment_key, *, tools, "
                            "timeout), or reference-worker")
    group.add_argument("--worker-cmd", action="append", default=[], metavar="CMD",
                       help="a worker in any language; it gets ANTHROPIC_BASE_URL, "
                            "TOOLUSE_ENVIRONMENT_ID, TOOLUSE_ENVIRONMENT_KEY, TOOLUSE_TOOL_TIMEOUT")
    group.add_argument("--loop", action=SubjectOption, default=[], metavar="SPEC",
                       help="an agent loop: module:attr naming loop(client, params) (sync, or "
                            "async taking the async client), or reference-loop / sdk-tool-runner; "
                            "see docs/loops.md")
    group.add_argument("--loop-matching", choices=["exact", "tolerant"], default=None,
                       help="how the loops' requests are matched to the recordings: exact, or "
                            "tolerant (tool order, schema noise, whole history or a restart "
                            "alike: simulator.matchers.TOLERANT_MATCHERS); default: what the loop "
                            "declares (tooluse_matching), else exact")
    group.add_argument("--loop-cmd", action=SubjectOption, default=[], metavar="CMD",
                       help="an agent loop in any language, started per scenario with "
                            "ANTHROPIC_BASE_URL (the simulation) and TOOLUSE_LOOP_PARAMS (a JSON "
                            "file: the conversations to drive), run from its case directory; "
                            "its contract: docs/loops.md")


def agent_subjects(args: argparse.Namespace) -> list[Any]:
    """The subjects named by ``--worker``, ``--worker-cmd`` and ``--loop``."""
    from conformance.loops.subject import loop_command_subject, loop_subject
    from conformance.workers.subject import worker_command_subject, worker_subject

    subjects: list[Any] = []
    matching = getattr(args, "loop_matching", None)
    if getattr(args, "all_reference", False):
        subjects += [_named(name, family, matching) for name, (family, _) in AGENT_REFERENCES.items()
                     if name in ALL_REFERENCE]
    for spec in getattr(args, "worker", None) or []:
        subjects.append(_named(spec, "worker") or worker_subject(spec))
    for cmd in getattr(args, "worker_cmd", None) or []:
        subjects.append(worker_command_subject(cmd))
    names = {(dest, value): name for dest, value, name, *_ in getattr(args, "_subjects", None) or []
             if name is not None}
    for spec in getattr(args, "loop", None) or []:
        name = names.get(("loop", spec))
        subjects.append(_named(spec, "loop", matching)
                        or loop_subject(spec, name=name, matching=matching))
    for cmd in getattr(args, "loop_cmd", None) or []:
        subjects.append(loop_command_subject(cmd, name=names.get(("loop_cmd", cmd)),
                                             matching=matching))
    return subjects


def _named(value: str, family: str, matching: str | None = None) -> Any:
    ref = AGENT_REFERENCES.get(value)
    if ref is None:
        return None
    if ref[0] != family:
        raise UsageError(f"{value!r} is a {ref[0]} reference, not a {family}")
    if family == "worker":
        from conformance.workers.subject import worker_subject

        return worker_subject(ref[1], name=value)
    from conformance.loops.subject import loop_subject

    return loop_subject(ref[1], name=value, matching=matching)


def shard_plan_of(args: argparse.Namespace, subjects: list[Subject]) -> ShardPlan | None:
    """``--shard K/N`` over the run's cases (``--check`` applied), balanced by ``--history``'s
    durations (default: ``--out``'s results.json when there is one); None without ``--shard``."""
    import json
    import sys

    from conformance.runner import select_checks
    from conformance.shards import durations_of, parse_shard, run_shard

    if getattr(args, "shard", None) is None:
        if getattr(args, "history", None) is not None:
            raise UsageError("--history only balances --shard K/N; give --shard too")
        return None
    shard = parse_shard(args.shard)
    names = [s.name for s in subjects]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--shard: two subjects are named {twice[0]!r}; give each its own "
                         "--name (the shards' cases are told apart by it)")
    path = args.history
    if path is None and args.out is not None and (args.out / "results.json").is_file():
        path = args.out / "results.json"
    history: dict[tuple[str, str], float] = {}
    if path is not None and not path.exists():  # a CI's first run: no report to learn from yet
        print(f"tooluse run: --history {path} does not exist: the split uses estimated costs",
              file=sys.stderr)
        path = None
    if path is not None:
        try:
            history = durations_of(json.loads(path.read_text(encoding="utf-8"))["results"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            if args.history is not None:
                raise UsageError(f"--history {path}: not a readable results.json ({e})") from None
            path = None
    cases = [((s.name, c.id), c) for s in subjects for c in select_checks(s, args.checks or None)]
    return run_shard(shard, cases, history, None if path is None else str(path))
