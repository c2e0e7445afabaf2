"""Property-based checks: run hypothesis inside a check, report the shrunk reproducer.

::

    @check("bash.output.roundtrip", ..., tags=["property"])
    def _(s: ToolSession) -> str | None:
        def body(text: str) -> None:
            r = s.call({"command": ...})
            if r.text != text: raise CheckFailure("...", received=r.text, documented=text)
        return run_property(s, st.text(), body)

The body raises :class:`~conformance.catalog.CheckFailure` when the subject breaks the property.
Hypothesis shrinks the failing example; the inputs the smallest failing example sent through the
session become the failure's ``reproducer`` (a replayable list of tool inputs). Checks that use
hypothesis carry the tag ``"property"`` (the runner starts them early: they take longest).
Properties take turns (one hypothesis run at a time; see :data:`HYPOTHESIS_TURNS`) while other
cases run alongside.

What a property run guarantees (the machinery is :mod:`conformance.properties.exploration`,
shared with the model-based editor check :mod:`conformance.properties.editor`):

- **Bounded.** A :class:`Budget` of wall time and calls, derived from the subject's timeout
  (:data:`BUDGET_TIMEOUTS` command timeouts, at least :data:`MIN_BUDGET_SECONDS`), counted from
  the moment the property gets its turn. When it runs out, generation stops at once
  (:class:`StopExploring`, which hypothesis lets through) and the run reports what it knows: the
  failures found so far; when it was the time that ran out and nothing was found, the check is
  *incomplete* (:class:`~conformance.catalog.CheckIncomplete`: not every example ran, so it is no
  pass); a run that its call budget ended passes with a note ("312 calls in 40 examples before
  the budget ran out") that the check returns as its observed string.
- **Every distinct failure, no harness error.** Failures are recorded as they happen
  (:class:`Findings`, the smallest example per distinct failure), so neither hypothesis'
  ``ExceptionGroup`` (several bugs) nor its ``Flaky*`` errors (a subject that answers differently
  the second time, or a budget that ran out during a replay) end in a harness error: the failure
  reported is one the subject really produced.
- **A live subject.** A body that takes a second parameter gets a fresh subject per example
  (:func:`conformance.session.spawn`); a body that uses the check's one session stops the run at
  the first example during which the subject hung, exited or broke the protocol, and that
  example is the reproducer (later examples would only talk to a dead subject).
- **Quiet.** Nothing hypothesis reports reaches the terminal (``Verbosity.quiet``, no blob, and
  a reporter that keeps its text).

The profile is deterministic (``derandomize``, no example database written to the user's
directory): a CI gate must give the same answer twice.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hypothesis import given
from hypothesis import strategies as st

from conformance.catalog import CheckFailure, CheckIncomplete, Rejudged
from conformance.properties.exploration import (
    BUDGET_TIMEOUTS,
    DEFAULT_MAX_EXAMPLES,
    HYPOTHESIS_TURNS,
    Budget,
    Findings,
    StopExploring,
    explore,
    hypothesis_turn,
    max_examples,
    origin,
    quiet_settings,
)
from conformance.rechecks import fault_verifier
from conformance.results import NOT_REPRODUCED
from conformance.session import ToolSession, faults_of, spawn
from conformance.wording import plural

__all__ = ["BUDGET_TIMEOUTS", "DEFAULT_MAX_EXAMPLES", "HYPOTHESIS_TURNS", "Budget",
           "run_property"]

T = TypeVar("T")


def _takes_session(body: Callable[..., None]) -> bool:
    try:
        params = [p for p in inspect.signature(body).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


def run_property(s: ToolSession, strategy: st.SearchStrategy[T], body: Callable[..., None], *,
                 examples: int | None = None, budget: Budget | None = None) -> str | None:
    """Check ``body`` over values drawn from ``strategy``; raise the shrunk failure.

    ``body(value)`` uses the check's session; ``body(value, session)`` gets a fresh subject per
    example (when the runner allows it). Returns ``None``, or the note of a run the budget cut
    short (the check may return it as its observed string). A failure is raised as the smallest
    example's :class:`CheckFailure`; other distinct failures are listed in its message.
    """
    budget = budget or Budget.for_session(s)
    findings: Findings[CheckFailure] = Findings()
    fresh = _takes_session(body)
    scratch = Path(s.workdir) if getattr(s, "workdir", None) else Path(tempfile.gettempdir())
    counter = iter(range(1_000_000))

    def one_example(value: T) -> None:
        budget.charge(0, share=1.0)
        budget.examples += 1
        session, where = s, scratch
        if fresh:
            where = scratch / f"example-{next(counter)}"
            where.mkdir(parents=True, exist_ok=True)
            session = spawn(s, where) or s
        start, seen = len(session.history), len(faults_of(session))
        try:
            failure: CheckFailure | None = None
            try:
                if fresh:
                    body(value, session)
                else:
                    body(value)
            except CheckFailure as e:
                failure = e
            inputs = list(session.history[start:])
            faults = faults_of(session)[seen:]
            if faults:  # hung, exited or broke the protocol: that is the example's failure
                _subject_faulted(s, findings, failure, faults, inputs, value)
                if session is s:  # the only subject is gone: no later example can run
                    raise StopExploring("subject faulted")
                raise CheckFailure(f"the subject faulted: {'; '.join(faults)}")
            if failure is not None:
                failure.reproducer = inputs
                findings.add(origin(failure), failure, len(inputs), extra=value)
                raise failure
        finally:
            budget.used += len(session.history) - start
            if session is not s:
                _close_into(session, s)
                shutil.rmtree(where, ignore_errors=True)

    prop = quiet_settings(max_examples=examples or max_examples())(given(strategy)(one_example))
    with hypothesis_turn(budget):
        ended = explore(prop, (CheckFailure,))
    if findings:
        raise _combined(findings, ended)
    if budget.timed_out:  # not every example ran: no pass (the same examples every run)
        raise CheckIncomplete(
            f"the time cap ended the property before its {examples or max_examples()} examples "
            f"were done ({budget.note()}): neither a pass nor a failure (a very slow subject "
            "or machine)")
    return budget.note() if budget.ran_out else None


def model_check_incomplete(examples: int, note: str, found: list[str], *,
                           start_failed: str = "") -> CheckIncomplete:
    """The outcome of a model check (editor, bash) that could not finish its ``examples``: the
    hard time cap ended it, or (``start_failed``, why) no fresh subject started for an example,
    twice. ``incomplete``, the disagreements ``found`` by then not judged: a start that fails
    under load, like time, is no verdict on the tool (a subject that cannot start at all fails
    its own case's start first)."""
    so_far = (f"; {plural(len(found), 'disagreement')} found by then, not judged: " + "; ".join(found)
              if found else "")
    if start_failed:
        return CheckIncomplete(
            f"no fresh subject started for an example, twice ({start_failed}), after {note}"
            f"{so_far}: neither a pass nor a failure (a start that fails on a loaded machine; "
            "rerun it alone)")
    return CheckIncomplete(
        f"the hard time cap ended the model check before its {examples} examples were done "
        f"({note}){so_far}: neither a pass nor a failure (a very slow subject or machine; rerun "
        "it alone or with a longer --timeout)")


class _Replayed(Protocol):
    message: str
    reproduced: str


R = TypeVar("R", bound=_Replayed)


def repeated(findings: list[R]) -> tuple[list[R], list[R]]:
    """A model check's findings (editor, bash) split by their replay: those that count (the
    reproducer, replayed as printed on a fresh subject, showed the disagreement again, or could
    not be replayed) and those that did not reproduce. Issue 21's rule: a failure that rests on
    timing is re-judged, and only one that repeats is a FAIL; a disagreement seen once among a
    run's examples and not again on a fresh subject is reported (:func:`not_repeated_note`,
    :func:`rejudged_by_replay`), never a FAIL by itself."""
    counted = [f for f in findings if f.reproduced != NOT_REPRODUCED]
    return counted, [f for f in findings if f.reproduced == NOT_REPRODUCED]


#: Characters of each disagreement's message in the notes on those that did not reproduce.
NOTE_CHARS = 300


def _listed(findings: list[R]) -> str:
    return "; ".join(f.message if len(f.message) <= NOTE_CHARS
                     else f.message[:NOTE_CHARS] + "…" for f in findings)


def not_repeated_note(dropped: list[R]) -> str:
    """The note on the findings that did not reproduce (empty when there are none)."""
    if not dropped:
        return ""
    return (f"{plural(len(dropped), 'more disagreement')} did not reproduce (replayed exactly as "
            f"printed on a fresh subject, not seen again), not counted: {_listed(dropped)}")


def rejudged_by_replay(observed: str, dropped: list[R], seconds: float,
                       replay_seconds: float) -> Rejudged:
    """The pass of a model check whose every disagreement did not reproduce: the run's
    failure (``seconds``) and the replays that did not repeat it (``replay_seconds``), carried
    as the result's ``rejudged`` record (shown in every report format)."""
    return Rejudged(observed, first={
        "outcome": "fail", "duration": round(max(seconds, 0.0), 3),
        "message": f"{plural(len(dropped), 'disagreement')}: {_listed(dropped)}"[:500], "misses": []},
        rerun={"outcome": "pass", "duration": round(max(replay_seconds, 0.0), 3),
               "message": "each reproducer replayed exactly as printed on a fresh subject: "
                          "the disagreement did not show again", "misses": []})


def _close_into(session: ToolSession, parent: ToolSession) -> None:
    """Close an example's subject; what it did at close (a fault, a note) counts as the check
    session's own."""
    before = len(faults_of(session))
    try:
        session.close()
    finally:
        for name, items in (("faults", faults_of(session)[before:]),
                            ("notes", getattr(session, "notes", None) or [])):
            into = getattr(parent, name, None)
            if isinstance(into, list):
                into.extend(x for x in items if x not in into)


def _subject_faulted(s: ToolSession, findings: Findings[CheckFailure],
                     failure: CheckFailure | None, faults: list[str],
                     inputs: list[dict[str, Any]], value: Any) -> None:
    """Record an example during which the subject faulted; its reproducer is verified by
    replaying it on a fresh subject and looking for the same kind of fault
    (:func:`conformance.rechecks.fault_verifier`)."""
    what = f" ({failure.message})" if failure is not None else ""
    f = CheckFailure(f"the subject faulted during an example: {'; '.join(faults)}{what}",
                     received=failure.received if failure is not None else "; ".join(faults),
                     documented=(failure.documented if failure is not None
                                 else "an answer to every call"), reproducer=inputs,
                     verify=fault_verifier(s, faults))
    findings.add("fault", f, len(inputs), extra=value)


def _combined(findings: Findings[CheckFailure], ended: str) -> CheckFailure:
    """The smallest failure, its message naming the shrunk example and every other failure."""
    ordered = findings.ordered()
    first = ordered[0]
    e = first.error
    lines = [f"{e.message} (shrunk example: {first.extra!r:.300})"]
    if ended == "flaky":
        lines.append("(the subject did not answer the same way when the example was replayed)")
    for other in ordered[1:]:
        inputs = other.error.reproducer or []
        lines.append(f"Also: {other.error.message} (example: {other.extra!r:.200}; "
                     f"{len(inputs)} inputs: {_inputs_text(inputs)})")
    e.message = "\n".join(lines)
    e.args = (e.message,)
    return e


def _inputs_text(inputs: list[dict[str, Any]], limit: int = 600) -> str:
    import json

    text = json.dumps(inputs, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
