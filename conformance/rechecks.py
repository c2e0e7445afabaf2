"""Verifying the failures that no check-specific judge covers (issue 21): a fault, a bare
``assert``, and the families whose reproducer is what the subject *sent*, not what it was sent.

Every reproducer is verified before it is printed (docs/checks.md, "Verified reproducers"). The
editor and bash checks replay their tool inputs with a judge of their own
(:mod:`conformance.reproducers`, :mod:`conformance.checks.bash_replay`); this module covers the
rest, and only ever runs when a case failed:

- **A fault** (the subject hung, exited, broke the answer protocol) reported after a check
  returned: the case's tool inputs are replayed exactly as printed on a fresh subject
  (:func:`fault_verdict`); it reproduced when the first fault shows again, judged by its kind
  (:func:`fault_kind`: its words up to the first number, colon, bracket or quote, so that a
  timing, an exit status or the text of a bad answer does not count).
- **A bare** ``assert`` **in a check**: the check runs again on a fresh subject (for a tool
  subject driven as printed: every input it sends must be the next printed one); it reproduced
  when the same assertion fails again (:func:`failure_site`: the same lines of the check).
- **Loops and workers**: their reproducer is the requests the loop or worker sent, its output,
  so it cannot be replayed into it; what is run again is the check's scenario, on a fresh
  instance of the subject against a fresh simulation (:func:`rerun_fresh_subject`, what the
  report's rerun line does too). It reproduced when the check fails again at the same place
  (and, for a loop, under the same rule: ``key``). :func:`verified_by_rerun` attaches that
  verification to a check's failures.

Each returns the result's ``reproduced`` (``verified`` / ``did not reproduce``; ``""`` when no
fresh subject could be started).
"""

from __future__ import annotations

import functools
import itertools
import re
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from conformance.catalog import CheckFailure, CheckIncomplete, CheckSkipped
from conformance.reproducers import Replayed, relativize_value, replay_fresh_subject, verdict_of
from conformance.session import faults_of, spawn

#: Where the words that say what a fault is end: the first number, colon, bracket or quote.
_KIND_END = re.compile(r"[0-9:(\[{'\"`]")

_RERUNS = itertools.count()

F = TypeVar("F", bound=Callable[..., Any])
#: What makes two failures of a check "the same" beyond where they were raised (e.g. the rule).
Key = Callable[[CheckFailure], str]
#: ``CheckFailure.verify``'s signature.
Verify = Callable[[list[dict[str, Any]], list[dict[str, Any]]], str]


#: Faults that all say the subject's process is gone (which one a replay gets depends on when
#: the harness noticed): one kind.
_GONE = ("exited while answering", "is not running", "stopped reading its input")


def fault_kind(fault: str) -> str:
    """What a fault is, without what changes from run to run: ``"no answer within 3s (+0.4s
    for load); the subject was stopped"`` is ``"no answer within"``, ``"the worker raised
    RuntimeError: boom"`` is ``"the worker raised RuntimeError"``; a subject that exited is
    ``"exited"`` however the harness noticed it."""
    end = _KIND_END.search(fault)
    head = " ".join((fault[:end.start()] if end else fault).split()).rstrip(" ;,.")
    if any(head.endswith(gone) for gone in _GONE):
        return "exited"
    return head or " ".join(fault.split())[:60]


def shows_fault(first: list[str], again: list[str]) -> bool:
    """Do the faults ``again`` include the kind of the first of ``first``?"""
    return bool(first) and fault_kind(first[0]) in {fault_kind(f) for f in again}


def failure_site(e: BaseException, func: Callable[..., Any]) -> tuple[tuple[str, int], ...]:
    """Where ``e`` was raised, from ``func``'s frame down (file and line of each frame): two
    failures of a check at the same site failed the same way (the same ``raise`` or
    ``assert``, reached through the same calls)."""
    frames = traceback.extract_tb(e.__traceback__)
    code = getattr(func, "__code__", None)
    start = next((i for i, f in enumerate(frames) if code is not None
                  and f.filename == code.co_filename and f.name == code.co_name), 1)
    return tuple((f.filename, f.lineno or 0) for f in frames[start:])


def rerun_fresh_subject(session: Any, again: Callable[[Any], bool]) -> bool | None:
    """``again(fresh)`` on a fresh instance of ``session``'s subject
    (:func:`conformance.session.spawn`, with the run's options) working in a fresh, empty
    directory inside the case's; ``again`` runs the check's work and says whether it failed the
    same way. None when no fresh subject could be started. The directory is removed after."""
    box = Path(session.workdir) / f".tooluse-rerun-{next(_RERUNS)}"
    where = box / Path(session.workdir).name
    where.mkdir(parents=True)
    try:
        try:
            fresh = spawn(session, where)
        except Exception:  # a subject that does not start again: nothing verified
            return None
        if fresh is None:
            return None
        try:
            return again(fresh)
        finally:
            fresh.close()
    finally:
        shutil.rmtree(box, ignore_errors=True)


def _takes_tool_inputs(session: Any) -> bool:
    """A tool subject (its history is tool inputs that can be replayed into it), not a loop or
    a worker (whose history is what it sent)."""
    return callable(getattr(session, "call", None))


def fails_the_same_way(func: Callable[[Any], Any], first: BaseException,
                       key: Key | None = None) -> Callable[[Any], bool]:
    """``again(fresh)`` for :func:`rerun_fresh_subject`: run the check ``func`` on the fresh
    session; True when it raises what ``first`` is (a :class:`CheckFailure`, or a bare
    ``AssertionError``) at the same :func:`failure_site` (and with the same ``key``)."""
    site = failure_site(first, func)
    failure = isinstance(first, CheckFailure)
    want = key(first) if key is not None and isinstance(first, CheckFailure) else None

    def again(fresh: Any) -> bool:
        try:
            func(fresh)
        except CheckFailure as e:
            return failure and failure_site(e, func) == site and (
                key is None or key(e) == want)
        except (CheckSkipped, CheckIncomplete):
            return False
        except AssertionError as e:
            return not failure and failure_site(e, func) == site
        return False

    return again


def rerun_verifier(s: Any, func: Callable[[Any], Any], first: CheckFailure,
                   key: Key | None = None) -> Verify:
    """``CheckFailure.verify`` for a loop or worker check: the check run again on a fresh
    subject fails the same way (:func:`fails_the_same_way`)."""
    again = fails_the_same_way(func, first, key)

    def verify(inputs: list[dict[str, Any]], setup: list[dict[str, Any]]) -> str:
        return verdict_of(rerun_fresh_subject(s, again))

    return verify


def verified_by_rerun(key: Key | None = None) -> Callable[[F], F]:
    """Decorate a check (under ``@check``) whose failures are verified by running it again on
    a fresh subject (:func:`rerun_verifier`); a failure that brings its own verification keeps
    it."""
    def deco(func: F) -> F:
        @functools.wraps(func)
        def checked(s: Any) -> Any:
            try:
                return func(s)
            except CheckFailure as e:
                if e.verify is None and not e.reproduced:
                    e.verify = rerun_verifier(s, func, e, key)
                raise

        return checked  # type: ignore[return-value]

    return deco


def fault_verdict(func: Callable[[Any], Any], session: Any, inputs: list[dict[str, Any]],
                  faults: list[str]) -> str:
    """Verify a fault a check's session recorded (the check itself passed). A tool subject:
    :func:`replay_shows_fault`. A loop or worker: the check run again on a fresh subject, judged
    by :func:`shows_fault` on the fresh session's faults."""
    first = list(faults)
    if _takes_tool_inputs(session):
        return replay_shows_fault(session, inputs, first)

    def again(fresh: Any) -> bool:
        try:
            func(fresh)
        except (CheckFailure, CheckSkipped, CheckIncomplete, AssertionError):
            return False
        return shows_fault(first, faults_of(fresh))

    return verdict_of(rerun_fresh_subject(session, again))


def replay_shows_fault(session: Any, inputs: list[dict[str, Any]], faults: list[str]) -> str:
    """Verify a fault of a tool subject: ``inputs`` replayed exactly as printed on a fresh
    subject, judged by :func:`shows_fault` (after closing the fresh subject when the fault is not
    there yet: some show at close)."""
    if not inputs:
        return ""
    first = list(faults)

    def judge(replayed: Replayed) -> bool:
        if shows_fault(first, faults_of(replayed.session)):
            return True
        replayed.session.close()
        return shows_fault(first, faults_of(replayed.session))

    return verdict_of(replay_fresh_subject(
        session, relativize_value(inputs, Path(session.workdir)), [], judge))


def fault_verifier(session: Any, faults: list[str]) -> Verify:
    """``CheckFailure.verify`` for a fault of a tool subject (:func:`replay_shows_fault`)."""
    first = list(faults)

    def verify(inputs: list[dict[str, Any]], setup: list[dict[str, Any]]) -> str:
        return replay_shows_fault(session, inputs, first)

    return verify


def assertion_verdict(func: Callable[[Any], Any], session: Any, inputs: list[dict[str, Any]],
                      first: AssertionError) -> str:
    """Verify a bare ``assert`` that failed in a check: the check run again on a fresh subject
    fails the same assertion. A tool subject is driven as printed (each input the check sends
    must be the next of ``inputs``; :class:`~conformance.reproducers.ReplayMismatch` when not)."""
    again = fails_the_same_way(func, first)
    if not _takes_tool_inputs(session):
        return verdict_of(rerun_fresh_subject(session, again))
    if not inputs:
        return ""
    shown: list[bool] = []

    def drive(driven: Any, workdir: Path) -> None:
        shown.append(again(driven))

    return verdict_of(replay_fresh_subject(
        session, relativize_value(inputs, Path(session.workdir)), [],
        lambda _replayed: bool(shown) and shown[0], drive=drive))


__all__ = ["assertion_verdict", "failure_site", "fails_the_same_way", "fault_kind",
           "fault_verdict", "fault_verifier", "replay_shows_fault", "rerun_fresh_subject",
           "rerun_verifier", "shows_fault", "verified_by_rerun"]
