"""The one-line command that reruns one check: ``tooluse run <subject options> --check ID``.

Every report prints it under each failing or erroring check. It is rendered from the run's
:class:`~conformance.run.Run` and the failing case's subject alone
(:meth:`Run.only <conformance.run.Run.only>`, then :meth:`Run.words
<conformance.run.Run.words>`): that subject's own option and ``--name`` when its name is not
the default label (a bundled reference by its name), the options of its family (``--bash-type``,
``--editor-max-characters``, ``--loop-matching``), the run's timeouts, sandbox and limits,
``--strict`` and ``--fail-on-flaky``; never the other subjects, ``--all-reference``, where the
reports went or how progress was shown. Parsed back by ``tooluse run``'s parser, it selects
exactly that subject and that check (a property test says so for any run).

From a results document the run is ``run.argv`` (the run's options as ``tooluse run`` words,
read by the same parser). A subject the run does not name (a runner called from code) is rerun
from its record: ``--bash SPEC`` / ``--bash-cmd CMD`` (or the other families' forms). Words are
quoted with :func:`shlex.join`.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from functools import lru_cache
from typing import Any, Literal

from conformance.errors import UsageError
from conformance.options import AGENT_REFERENCES, FAMILIES
from conformance.reference import REFERENCE_SUBJECTS
from conformance.run import Run, SubjectChoice


def rerun_line(run: Run, subject: dict[str, Any] | str | None, check_id: str) -> str:
    """``tooluse run ... --check ID`` for one case: the run narrowed to its subject (a record of
    ``subjects[]``, or its name) and the check; ``""`` when the subject cannot be named."""
    name = subject if isinstance(subject, str) else (subject or {}).get("name")
    narrowed = (run.only(str(name), check_id, _value_of(subject))
                if name is not None else None)
    if narrowed is None and isinstance(subject, dict):
        choice = _choice_of(subject)
        if choice is not None:
            narrowed = Run(subjects=(choice,), checks=(check_id,), strict=run.strict,
                           fail_on_flaky=run.fail_on_flaky, timeout=run.timeout,
                           startup_timeout=run.startup_timeout, confinement=run.confinement)
            narrowed = narrowed.only(str(name), check_id)
    if narrowed is None:
        return ""
    return shlex.join(["tooluse", "run", *replace(narrowed, checks=()).words(),
                       "--check", check_id])


def _value_of(subject: dict[str, Any] | str | None) -> str | None:
    """The spec or command a subject's record says it ran (made absolute by ``tooluse run``;
    a bundled reference: by its name, so None)."""
    if not isinstance(subject, dict) or not subject.get("spec"):
        return None
    spec = str(subject["spec"])
    bundled = {r.spec for r in REFERENCE_SUBJECTS.values()} | {
        s for _, s in AGENT_REFERENCES.values()}
    return None if spec in bundled else spec.removeprefix("cmd:")


def _choice_of(subject: dict[str, Any]) -> SubjectChoice | None:
    """The option naming a subject's record (``--bash-cmd CMD --name N``, ...), or None."""
    family, spec, name = subject.get("family"), str(subject.get("spec") or ""), subject.get("name")
    if family not in FAMILIES or not spec or not name:
        return None
    ref = REFERENCE_SUBJECTS.get(str(name))
    if ref is not None and ref.spec == spec:
        return SubjectChoice(str(family), "spec", str(name))
    kind: Literal["spec", "cmd"] = "cmd" if spec.startswith("cmd:") else "spec"
    choice = SubjectChoice(str(family), kind, spec.removeprefix("cmd:"))
    try:
        default = choice.default_name()
    except UsageError:
        default = ""
    return choice if default == name else SubjectChoice(choice.family, kind, choice.value,
                                                        str(name))


@lru_cache(maxsize=64)
def run_of_argv(argv: tuple[str, ...]) -> Run:
    """The run of a results document's ``run.argv`` (``run`` and its options), as ``tooluse run``
    parses it; the documented defaults when it is not one (a pytest run's older record)."""
    if argv[:1] != ("run",):
        return Run()
    try:
        return Run.from_argv(argv)
    except UsageError:
        return Run()


def run_of(doc_run: dict[str, Any]) -> Run:
    """The :class:`Run` of a results document's ``run`` record."""
    run = run_of_argv(tuple(str(a) for a in doc_run.get("argv") or []))
    if not (doc_run.get("argv") or [])[:1] == ["run"]:  # no options kept: what the record says
        run = replace(run, strict=bool(doc_run.get("strict")),
                      fail_on_flaky=bool(doc_run.get("fail_on_flaky")))
    return run


def rerun_command(run: dict[str, Any], subject: dict[str, Any] | None, check_id: str) -> str:
    """``tooluse run ... --check ID`` for one result (``run`` is results.json's ``run``;
    ``subject`` the result's record in ``subjects``); ``""`` when it cannot be built."""
    return rerun_line(run_of(run), subject, check_id)


def subject_record(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((s for s in doc.get("subjects") or [] if s.get("name") == name), None)


def rerun_for(doc: dict[str, Any], result: dict[str, Any]) -> str:
    """The rerun command of one result of a results document."""
    record = subject_record(doc, result["subject"]) or {"name": result["subject"]}
    return rerun_command(doc.get("run") or {}, record, result["check_id"])
