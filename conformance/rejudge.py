"""Judging a case again, alone, before its result counts.

Two kinds of first result are not verdicts yet (docs/reliability.md, docs/checks.md):

- a failure during which a deadline passed, or a harness error of the run's threads
  (:func:`judged_again`): run again alone and judged by both runs (:func:`rejudge`);
- a failure whose reproducer did not reproduce, or a model check whose every finding did not
  (:func:`maybe_flaky`): run again alone; ``flaky`` when it passes then, a ``fail`` when it fails
  again (:func:`rejudge_flaky`).

:func:`run_case` (:mod:`conformance.runner`) judges a single case again at once;
:func:`rejudge_after_run` does it for a whole run's held-back cases, once every case has run and
the run no longer loads the machine.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from conformance.results import NOT_REPRODUCED, CheckResult, Outcome
from conformance.subjects import timing

#: How :func:`conformance.runner.run_case` words a result of a subject that did not get through
#: start-up.
START_FAILURES = ("the subject did not start: ", "the subject failed its first call, at start-up",
                  "the subject did not answer its first call within")


def is_start_failure(r: CheckResult) -> bool:
    return (r.outcome is Outcome.FAIL and r.message.startswith(START_FAILURES)
            and "the sandbox stopped it" not in r.message)


def rests_on_time(r: CheckResult, misses: Sequence[timing.Miss]) -> bool:
    """A failure during which a deadline passed (even with the allowance for load) may be the
    machine's fault rather than the subject's: it is judged again (:func:`rejudge`)."""
    return r.outcome is Outcome.FAIL and bool(misses)


#: Harness errors that come from running cases in threads, not from the subject or the check:
#: CPython 3.11 is not safe building ASTs in several threads at once (gh-106905), and hypothesis
#: and 3.11's traceback carets both parse with ``ast`` (a reference run's editor model checks
#: once raised this). Such a case is run again alone after the run (:func:`rejudge`).
THREAD_UNSAFE = ("AST constructor recursion depth mismatch",)


def rests_on_threads(r: CheckResult) -> bool:
    """A harness error that running cases concurrently can cause (:data:`THREAD_UNSAFE`)."""
    return r.outcome is Outcome.ERROR and any(t in r.message for t in THREAD_UNSAFE)


def judged_again(r: CheckResult, misses: Sequence[timing.Miss]) -> bool:
    """Whether a result is run again alone before it counts (:func:`rejudge`): a failure on
    time, or a harness error of the run's threads."""
    return rests_on_time(r, misses) or rests_on_threads(r)


def rejudge(first: CheckResult, misses: Sequence[timing.Miss],
            again: Callable[[], tuple[CheckResult, list[timing.Miss]]]) -> CheckResult:
    """Run the case again (alone: the caller makes sure nothing else runs) and judge it by
    both runs: a failure that repeats stays a FAIL; one that does not takes the re-run's outcome,
    never silently: ``rejudged`` carries both runs and their timings, shown in every report.
    A harness error of the run's threads (:func:`rests_on_threads`) is judged the same way
    (``by: "threads"``; ``repeated``: the error came again)."""
    second, misses2 = again()
    record: dict[str, Any] = {}
    if rests_on_threads(first):
        record["by"] = "threads"
        repeated = rests_on_threads(second)
    else:
        repeated = second.outcome is Outcome.FAIL
    return dataclasses.replace(second, rejudged={
        **record,
        "repeated": repeated,
        "first": _attempt(first, misses),
        "rerun": _attempt(second, misses2),
    })


def maybe_flaky(r: CheckResult) -> bool:
    """A failure that may be intermittent: a fixed check's failure whose reproducer, replayed on
    a fresh subject, did not show it (``reproduced: "did not reproduce"``), or a model check
    whose every finding did not (a pass re-judged by replay). It is run again alone before it
    counts (:func:`rejudge_flaky`)."""
    if r.outcome is Outcome.FAIL:
        return r.reproduced == NOT_REPRODUCED
    return (r.outcome is Outcome.PASS and r.rejudged is not None
            and r.rejudged.get("by") == "replay" and "alone" not in r.rejudged)


def rejudge_flaky(first: CheckResult, again: Callable[[], CheckResult]) -> CheckResult:
    """Run the case of a :func:`maybe_flaky` result again alone (the caller makes sure nothing
    else runs) and judge it by both observations:

    - a fixed check: the re-run passes → ``flaky`` (the failing observation kept, with its
      reproducer; ``rejudged`` ``by: "rerun"`` holds both); it fails again → a FAIL
      (``repeated``), whatever its replay said: a failure every time is a failure;
    - a model check (its findings already replayed on fresh subjects without showing again):
      the re-run alone passes or again finds only what does not reproduce → ``flaky``
      (``rejudged`` ``by: "replay"`` gains ``alone``); it finds a verified disagreement → that
      FAIL (``repeated``).

    ``flaky`` fails the run only under ``--fail-on-flaky``."""
    second = again()
    alone = _attempt(second, [])
    if first.outcome is Outcome.FAIL:  # a fixed check
        repeated = second.outcome is not Outcome.PASS or (
            second.rejudged is not None and second.rejudged.get("by") == "replay")
        record = {"by": "rerun", "repeated": repeated, "first": _attempt(first, []),
                  "rerun": alone}
        return dataclasses.replace(first, outcome=Outcome.FAIL if repeated else Outcome.FLAKY,
                                   rejudged=record)
    record = {**(first.rejudged or {}), "alone": alone}
    if second.outcome is Outcome.FAIL and second.reproduced != NOT_REPRODUCED:
        return dataclasses.replace(second, rejudged={**record, "repeated": True})
    first_seen = (first.rejudged or {}).get("first") or {}
    return dataclasses.replace(first, outcome=Outcome.FLAKY, rejudged={**record, "repeated": False},
                               message=first.message or str(first_seen.get("message") or ""))


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class CaseLike(Protocol):
    """What the re-judging needs of a case: its subject's name."""

    @property
    def subject(self) -> _Named: ...


C = TypeVar("C", bound=CaseLike)


def rejudge_after_run(on_time: Sequence[tuple[C, CheckResult, list[timing.Miss]]],
                      intermittent: Sequence[tuple[C, CheckResult]],
                      again: Callable[[C], tuple[CheckResult, list[timing.Miss]]],
                      publish: Callable[[CheckResult], None],
                      stopping: threading.Event) -> None:
    """Judge a run's held-back cases again, each alone, and :func:`publish` each verdict (the
    caller's ``publish`` takes its lock): the failures that rest on a deadline or on the run's
    threads (:func:`rejudge`), then those whose reproducer did not reproduce
    (:func:`rejudge_flaky`). Stops between cases once ``stopping`` is set (an interrupt).

    Start-up is the same for every check of a subject: once a start-up failure repeated alone,
    the subject's other start-up failures are not run a third time (they carry that re-run)."""
    # Failures that rest on a deadline: each run again alone (--jobs 1), now that the run no
    # longer loads the machine; only one that repeats is a FAIL.
    started_badly: dict[str, CheckResult] = {}
    for case, first, misses in on_time:
        if stopping.is_set():
            break
        seen = started_badly.get(case.subject.name)
        if seen is not None and _start_only(first, misses):
            r = dataclasses.replace(first, rejudged={
                "repeated": True, "first": _attempt(first, misses),
                "rerun": {**(seen.rejudged or {}).get("rerun", {}), "message": (
                    f"start-up failed again when {seen.check_id} was re-run alone: "
                    + seen.message[:400])}})
        else:
            r = rejudge(first, misses, functools.partial(again, case))
            if _start_only(first, misses) and is_start_failure(r):
                started_badly[case.subject.name] = r
        publish(r)
    # Failures whose reproducer did not reproduce: each run again alone; one that passes then is
    # flaky (an intermittent failure), one that fails again a FAIL.
    for case, first in intermittent:
        if stopping.is_set():
            break
        publish(rejudge_flaky(first, functools.partial(_result_of, again, case)))


def _result_of(again: Callable[[C], tuple[CheckResult, list[timing.Miss]]], case: C
               ) -> CheckResult:
    return again(case)[0]


def _start_only(r: CheckResult, misses: Sequence[timing.Miss]) -> bool:
    """A failure at start-up whose deadlines were all start-up ones."""
    return is_start_failure(r) and all(m.what in ("start", "readiness") for m in misses)


def _attempt(r: CheckResult, misses: Sequence[timing.Miss]) -> dict[str, Any]:
    return {"outcome": r.outcome.value, "duration": round(r.duration, 3),
            "message": r.message[:500], "misses": [m.text() for m in misses]}
