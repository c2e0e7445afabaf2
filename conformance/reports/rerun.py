"""The one-line command that reruns one check: ``tooluse run <subject options> --check ID``.

Every report prints it under each failing or erroring check. It is built from what
``results.json`` keeps:

- the subject's record (``subjects[]``): ``--bash SPEC`` / ``--bash-cmd CMD`` (or the editor
  forms), its tool type and ``--name`` when the label is not the default one, so only that
  subject runs (a bundled reference by its name);
- the run's other options from ``run.argv`` (``--timeout``, ``--editor-max-characters``,
  ``--memory-limit``, ``--strict``, ``--fail-on-flaky``, ...), without ``--out``, ``--check``,
  ``--shard``, ``--history``, ``--expected-failures`` and ``--json``.

Subjects of other families (workers, loops) keep the run's own subject options. Paths in specs
and commands are absolute (``tooluse run`` makes them so), so the command runs as printed from
the directory the run started in; ``module:attr`` specs are imported from the current directory
(like ``python -m``), and a command line with relative paths of its own needs that directory
too; path specs and plain commands work from anywhere. Words are quoted with :func:`shlex.join`.
"""

from __future__ import annotations

import argparse
import shlex
from functools import cache
from typing import Any

from conformance.options import add_run_arguments
from conformance.reference import REFERENCE_SUBJECTS
from conformance.subjects.spec import DEFAULT_TOOL_TYPES, command_label, factory_label

#: Options dropped from the run's argv: where the reports go, which checks ran, how to print.
_DROPPED = {"--out", "--check", "--expected-failures", "--json", "--progress", "--quiet",
            "--shard", "--history"}
#: Options naming subjects: replaced by the one subject's own options when it can be named.
_SUBJECT = {"--bash", "--bash-cmd", "--bash-type", "--editor", "--editor-cmd", "--editor-type",
            "--name", "--all-reference", "--worker", "--worker-cmd", "--loop"}
_FAMILIES = ("bash", "editor")


@cache
def _run_options() -> dict[str, argparse.Action]:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return dict(parser._option_string_actions)


def _split(argv: list[str]) -> list[tuple[str | None, list[str]]]:
    """``argv`` as (canonical option or None, its words) pairs, argparse's prefix rules
    included (``--ch ID`` is ``--check``)."""
    actions = _run_options()
    out: list[tuple[str | None, list[str]]] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        name, eq, _ = word.partition("=")
        if not word.startswith("-") or word == "-":
            out.append((None, [word]))
            i += 1
            continue
        action = actions.get(name)
        if action is None and name.startswith("--"):
            hits = {a for o, a in actions.items() if o.startswith(name)}
            action = hits.pop() if len(hits) == 1 else None
        if action is None:
            out.append((None, [word]))
            i += 1
            continue
        canonical = max(action.option_strings, key=len)
        words = [word]
        i += 1
        if not eq and action.nargs != 0:
            if action.nargs in ("+", "*"):
                while i < len(argv) and not argv[i].startswith("-"):
                    words.append(argv[i])
                    i += 1
            elif i < len(argv):
                words.append(argv[i])
                i += 1
        out.append((canonical, words))
    return out


def run_options(argv: list[str], *, keep_subjects: bool = False) -> list[str]:
    """The run's options that a rerun keeps (argv of ``tooluse run``, with or without ``run``)."""
    words = list(argv)
    if words[:1] == ["run"]:
        words = words[1:]
    drop = _DROPPED | (set() if keep_subjects else _SUBJECT)
    return [w for opt, ws in _split(words) if opt not in drop for w in ws]


def subject_options(subject: dict[str, Any]) -> list[str] | None:
    """``--bash SPEC --bash-type T [--name N]`` for a bash or editor subject's record."""
    family, spec, name = subject.get("family"), str(subject.get("spec") or ""), subject["name"]
    if family not in _FAMILIES or not spec:
        return None
    ref = REFERENCE_SUBJECTS.get(name)
    if ref is not None and ref.spec == spec:
        return [f"--{family}", name]
    if spec.startswith("cmd:"):
        command = spec[4:]
        try:
            default = command_label(shlex.split(command))
        except ValueError:
            default = ""
        words = [f"--{family}-cmd", command]
    else:
        default = factory_label(spec)
        words = [f"--{family}", spec]
    if subject.get("tool_type") and subject["tool_type"] != DEFAULT_TOOL_TYPES[family]:
        words += [f"--{family}-type", str(subject["tool_type"])]
    return words + ([] if name == default else ["--name", name])


def rerun_command(run: dict[str, Any], subject: dict[str, Any] | None, check_id: str) -> str:
    """``tooluse run ... --check ID`` for one result (``run`` is results.json's ``run``;
    ``subject`` the result's record in ``subjects``); ``""`` when it cannot be built."""
    argv = [str(a) for a in run.get("argv") or []]
    from_tooluse = argv[:1] == ["run"]
    own = subject_options(subject) if subject is not None else None
    if own is not None:
        rest = run_options(argv) if from_tooluse else (
            (["--strict"] if run.get("strict") else [])
            + (["--fail-on-flaky"] if run.get("fail_on_flaky") else []))
        words = own + rest
    elif from_tooluse:
        words = run_options(argv, keep_subjects=True)
    else:
        return ""
    return shlex.join(["tooluse", "run", *words, "--check", check_id])


def subject_record(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((s for s in doc.get("subjects") or [] if s.get("name") == name), None)


def rerun_for(doc: dict[str, Any], result: dict[str, Any]) -> str:
    """The rerun command of one result of a results document."""
    return rerun_command(doc.get("run") or {}, subject_record(doc, result["subject"]),
                         result["check_id"])
