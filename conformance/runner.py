"""The runner: subjects × applicable checks → :class:`~conformance.results.CheckResult` records.

Each (subject, check) case gets a fresh temporary working directory and a fresh subject process.
What the check raises decides the outcome:

- returns normally → ``pass`` (turned into ``fail`` when the subject faulted meanwhile: it hung,
  exited, or wrote something that is not a tool result);
- :class:`CheckFailure` → ``fail`` (message, received, documented, reproducer); a bare
  ``AssertionError`` → ``fail`` as well;
- :class:`CheckSkipped` → ``skip``; :class:`CheckIncomplete` → ``incomplete`` (a hard time cap
  ended the check's fixed work: not blocking);
- any other exception, or a harness problem starting the subject → ``error`` (the harness's or
  the check's fault, never counted against the subject as a failure);
- a failure whose reproducer did not reproduce (or a model check whose findings all did not) is
  run again alone after the run: ``flaky`` when it passes then, a ``fail`` when it fails again
  (:func:`conformance.rejudge.rejudge_flaky`; :func:`~conformance.rejudge.rejudge` for a failure
  on time);
- the start failures of a subject that started in no case of the run → ``not-run`` (the case
  never ran: :class:`_StartGate`).

Start-up is not tool time: a session that has ``wait_ready`` (every
:class:`~conformance.subjects.ProcessSession`) is made ready first, with one harmless call under
``startup_timeout`` (not in the history, not counted in the case's budget); a subject that does not
answer it fails with a message saying it was start-up. What the subject did that is no fault but
worth knowing (a write into its throwaway ``$HOME``) is appended to the result's ``observed``.

Results are emitted to listeners as they happen (from worker threads, one at a time). Cases run
concurrently (``jobs``) since every case has its own process and directory.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import conformance.checks  # noqa: F401  (registers every check)
from conformance import rechecks
from conformance.catalog import (
    CATALOG,
    Check,
    CheckFailure,
    CheckIncomplete,
    CheckSkipped,
    Rejudged,
    checks_for,
)
from conformance.rejudge import (
    is_start_failure,
    judged_again,
    maybe_flaky,
    rejudge,
    rejudge_after_run,
    rejudge_flaky,
)
from conformance.reproducers import relativize
from conformance.results import (
    CheckResult,
    Outcome,
    RunInfo,
    RunListener,
    SubjectInfo,
    blocks,
)
from conformance.run import Run
from conformance.session import allow_fresh, allow_spawn
from conformance.shards import ShardPlan
from conformance.subjects import forkserver, timing
from conformance.subjects.case import (
    CASE_BUDGET_TIMEOUTS,
    DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    CaseSettings,
)
from conformance.subjects.pool import Start, StartPool, StartStats, pooled
from conformance.subjects.process import (
    SubjectNotReady,
    SubjectStartError,
    allow_subjects,
    stop_all_subjects,
)

__all__ = ["CASE_BUDGET_TIMEOUTS", "DEFAULT_STARTUP_TIMEOUT", "DEFAULT_TIMEOUT", "CaseSettings",
           "Run", "SubjectLike", "run", "run_case"]


class SubjectLike(Protocol):
    """What the runner needs of a subject (:class:`~conformance.subjects.Subject` is one; the
    worker and loop families bring their own). ``open`` gets the run's settings for the case
    (:class:`~conformance.subjects.case.CaseSettings`: timeouts, budget, confinement), and the
    session it returns may have ``wait_ready(timeout)``: the readiness step."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def tool_type(self) -> str: ...
    @property
    def info(self) -> SubjectInfo: ...

    def open(self, workdir: Path, case: CaseSettings) -> Any: ...


@dataclass(frozen=True)
class Case:
    subject: SubjectLike
    check: Check


@dataclass
class RunPlan:
    subjects: list[SubjectLike]
    cases: list[Case]
    timeout: float
    strict: bool
    info: RunInfo = field(default_factory=RunInfo)
    #: The run's settings (its options, built once at the entry point).
    settings: Run = field(default_factory=Run)

    @property
    def subject_infos(self) -> list[SubjectInfo]:
        return [s.info for s in self.subjects]


@dataclass
class RunSummary:
    plan: RunPlan
    results: list[CheckResult]
    duration: float
    strict: bool = False
    #: Flaky results fail the run like failures (``--fail-on-flaky``).
    fail_on_flaky: bool = False
    #: What starting the command subjects cost (conformance/subjects/pool.py).
    startup: StartStats = field(default_factory=StartStats)

    def counts(self) -> dict[str, int]:
        out = {o.value: 0 for o in Outcome}
        for r in self.results:
            out[r.outcome.value] += 1
        return out

    def blocking(self) -> list[CheckResult]:
        """Results that make the run fail: MUST (and with ``strict`` SHOULD) failures and harness
        errors, and flaky ones with ``fail_on_flaky`` (:func:`~conformance.results.blocks`)."""
        return [r for r in self.results
                if blocks(r.outcome.value, r.severity, strict=self.strict,
                          fail_on_flaky=self.fail_on_flaky)]

    @property
    def ok(self) -> bool:
        """Nothing blocks, and every case ran (a case that never ran has no verdict)."""
        return not self.blocking() and not any(r.outcome is Outcome.NOT_RUN
                                               for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def never_started(self) -> dict[str, str]:
        """Subjects that did not start in any case (subject name -> the first such message):
        each of their results is ``not-run`` (:func:`run` marks them; or, from an older run,
        a failure at start-up: the factory raised, the command died, or the readiness call went
        unanswered or got no valid answer), none for a sandbox stop (a fork bomb at start is a
        verdict of its checks). Such a subject has no verdict on any check."""
        out: dict[str, str] = {}
        for s in self.plan.subjects:
            mine = [r for r in self.results if r.subject == s.name]
            if mine and all(r.outcome is Outcome.NOT_RUN or is_start_failure(r) for r in mine):
                # the start failure itself, not a case that was not started after it
                out[s.name] = next((r.message for r in mine if NOT_STARTED_AGAIN not in r.message),
                                   mine[0].message)
        return out


#: Start failures that starting the subject again cannot change (it exited, answered something
#: that is not an answer, or read its input and answered nothing): once one is seen before the
#: subject started in any case, its other cases are not started (``not-run`` at once).
DEFINITIVE_START_FAILURES = ("exited at start", "exited while answering", "is not running",
                             "answer is not JSON", "answer has no \"content\"",
                             "unexpected first line", "the subject factory failed",
                             "no output at all")


NOT_STARTED_AGAIN = "not started again after its start failed for"


def is_definitive_start_failure(r: CheckResult) -> bool:
    return is_start_failure(r) and any(w in r.message for w in DEFINITIVE_START_FAILURES)


def not_started(case: Any, first: CheckResult) -> CheckResult:
    """The result of a case not started because its subject's start failed for good in another
    case (:data:`DEFINITIVE_START_FAILURES`): a start failure, so the gate makes it ``not-run``."""
    return CheckResult(case.check.id, case.subject.name, case.subject.tool_type,
                       case.check.family, case.check.severity.value, Outcome.FAIL,
                       message=f"the subject did not start: {NOT_STARTED_AGAIN} "
                               f"{first.check_id}: {first.message}")


def not_run(r: CheckResult) -> CheckResult:
    """A start failure of a subject that started in no case of the run: the case never ran."""
    return dataclasses.replace(r, outcome=Outcome.NOT_RUN)


def mark_not_run(results: Sequence[CheckResult]) -> list[CheckResult]:
    """``results`` with every start failure of a subject that started in none of them made
    ``not-run`` (:func:`not_run`); what the pytest plugin's report does with its items'."""
    started = {r.subject for r in results if not is_start_failure(r)}
    return [r if r.subject in started or not is_start_failure(r) else not_run(r)
            for r in results]


class _StartGate:
    """Holds back a subject's start failures until it is seen to start in another case (then
    they are failures, published as they came) or the run ends without that (then each is
    published ``not-run``): listeners (results.json as it is written, progress) never see a
    failure for a case that never ran. The caller holds the run's lock."""

    def __init__(self, publish: Callable[[CheckResult], None]) -> None:
        self.publish = publish
        self.started: set[str] = set()
        self.held: dict[str, list[CheckResult]] = {}

    def __call__(self, r: CheckResult) -> None:
        if r.subject not in self.started:
            if is_start_failure(r):
                self.held.setdefault(r.subject, []).append(r)
                return
            self.started.add(r.subject)
            for h in self.held.pop(r.subject, []):
                self.publish(h)
        self.publish(r)

    def close(self) -> None:
        for held in self.held.values():
            for r in held:
                self.publish(not_run(r))
        self.held.clear()


def select_checks(subject: SubjectLike, patterns: Sequence[str] | None = None) -> list[Check]:
    """The catalog checks for the subject's family and tool type, filtered by ids or globs."""
    chosen = list(checks_for(subject.tool_type, subject.family))
    if patterns:
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    return chosen


def unmatched_patterns(patterns: Iterable[str]) -> list[str]:
    """Patterns that match no check id in the catalog (for usage errors)."""
    return [p for p in patterns if not any(fnmatch.fnmatchcase(i, p) for i in CATALOG)]


def case_settings(case: CaseSettings | None = None, **changes: Any) -> CaseSettings:
    """``case`` (default: the documented defaults, never the environment's) with ``changes``
    (its field names: ``timeout``, ``startup_timeout``, ``confinement``)."""
    return dataclasses.replace(case or CaseSettings(), **changes)


def run_case(subject: SubjectLike, chk: Check, case: CaseSettings | None = None, *,
             tmp_root: Path | None = None, **changes: Any) -> CheckResult:
    """Run one check against a fresh instance of the subject, with the run's settings for a
    case (:func:`case_settings`; made ready first: it has ``startup_timeout`` s to start and
    another ``startup_timeout`` s to answer a first call). A failure that rests on a deadline
    (or a harness error of threads, :func:`~conformance.rejudge.rests_on_threads`) is run again
    at once and judged by :func:`rejudge`; one whose reproducer did not reproduce
    (:func:`maybe_flaky`) by :func:`rejudge_flaky`."""
    settings = case_settings(case, **changes)

    def attempt() -> tuple[CheckResult, list[timing.Miss]]:
        return run_case_timed(subject, chk, settings, tmp_root=tmp_root)

    first, misses = attempt()
    if judged_again(first, misses):
        return rejudge(first, misses, attempt)
    if maybe_flaky(first):
        return rejudge_flaky(first, lambda: attempt()[0])
    return first


def run_case_timed(subject: SubjectLike, chk: Check, case: CaseSettings | None = None, *,
                   tmp_root: Path | None = None, starts: StartPool | None = None,
                   **changes: Any) -> tuple[CheckResult, list[timing.Miss]]:
    """:func:`run_case` once, with the deadlines that passed during it (not judged again).
    ``starts``: the run's start pool (a command subject is then taken from it, started ahead)."""
    with timing.collecting() as misses:
        result = _run_case(subject, chk, case_settings(case, **changes), tmp_root=tmp_root,
                           starts=starts)
    return result, misses


def _run_case(subject: SubjectLike, chk: Check, case: CaseSettings, *, tmp_root: Path | None,
              starts: StartPool | None = None) -> CheckResult:
    start = time.monotonic()
    base: dict[str, Any] = dict(check_id=chk.id, subject=subject.name,
                                tool_type=subject.tool_type, family=chk.family,
                                severity=chk.severity.value)

    def result(outcome: Outcome, message: str = "", **kw: Any) -> CheckResult:
        return CheckResult(**base, outcome=outcome, duration=round(time.monotonic() - start, 4),
                           message=message, **kw)

    # A command subject of a run with a start pool was started (and made ready) ahead, in a
    # working directory of its own (conformance/subjects/pool.py).
    taken = (starts.take(subject) if starts is not None and pooled(subject, case.start_pool)
             else None)
    if taken is not None:
        workdir = taken.workdir
        for miss in taken.misses:  # the start's deadlines are the case's
            timing.record(miss)
    else:
        workdir = Path(tempfile.mkdtemp(prefix=f"tooluse-{chk.id}-", dir=tmp_root)).resolve()
    # A subject started here (not pooled): its start-up is counted all the same.
    counted = starts.timer() if starts is not None and taken is None else _no_timer
    try:
        try:
            session = taken.opened() if taken is not None else subject.open(workdir, case)
            # More instances for checks that need a fresh subject per example (the model check),
            # their start-up counted too; from the pool for a pooled subject (session.fresh).
            allow_spawn(session, lambda wd: subject.open(wd, case), case.startup_timeout)
            if starts is not None:
                starts.count_spawns(session)
            if taken is not None and starts is not None:
                allow_fresh(session, functools.partial(_fresh_from, starts, subject))
        except SubjectStartError as e:
            counted()
            return result(Outcome.FAIL, f"the subject did not start: {e}")
        except Exception as e:
            counted()
            return result(Outcome.ERROR, f"harness error starting the subject: {e!r}")
        try:
            try:
                _make_ready(session, taken, case.startup_timeout)
            finally:
                counted()
        except SubjectNotReady as e:
            outcome = result(Outcome.FAIL, str(e))
        except Exception as e:  # the harness's side of the readiness step broke
            outcome = result(Outcome.ERROR, f"harness error making the subject ready: {e!r}")
        else:
            outcome = _judge(chk, session, result)
        outcome = relativize(outcome, workdir)
        try:
            session.close()
        except Exception as e:  # the harness's side of teardown broke
            note = f"closing the session raised {type(e).__name__}: {e}"
            if outcome.outcome is Outcome.PASS:
                return printable(result(Outcome.ERROR, note))
            outcome.message += f" [{note}]"
        notes = getattr(session, "notes", None)
        if notes:  # not faults; kept visible
            outcome.observed = "; ".join([*([outcome.observed] if outcome.observed else []),
                                          *notes])
        return printable(outcome)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _no_timer() -> None:
    pass


def _make_ready(session: Any, taken: Start | None, startup_timeout: float) -> None:
    """The readiness step: done already for a subject taken from the start pool (what it
    raised is raised again; the case's clock starts now), else the readiness call now."""
    if taken is not None:
        taken.made_ready()
        return
    ready = getattr(session, "wait_ready", None)
    if callable(ready):
        ready(startup_timeout)


def _judge(chk: Check, session: Any, result: Callable[..., CheckResult]) -> CheckResult:
    try:
        observed = chk.func(session)
    except CheckFailure as e:
        faults = _faults_note(session)
        inputs = list(e.reproducer or session.history)
        reproduced, note = _verified(e, inputs)
        return result(Outcome.FAIL, e.message + faults + note, received=_jsonable(e.received),
                      documented=_jsonable(e.documented), reproducer=inputs,
                      setup=list(e.setup), reproduced=reproduced)
    except CheckSkipped as e:
        return result(Outcome.SKIP, str(e) or "skipped")
    except CheckIncomplete as e:
        return result(Outcome.INCOMPLETE, str(e) or "incomplete")
    except AssertionError as e:  # a bare ``assert`` in a check states a requirement too
        faults, inputs, first = _faults_note(session), list(session.history), e
        reproduced, note = _verifying(
            inputs, lambda: rechecks.assertion_verdict(chk.func, session, inputs, first))
        return result(Outcome.FAIL, f"assertion failed: {e}" + faults + note,
                      reproducer=inputs, reproduced=reproduced)
    except Exception as e:
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        return result(Outcome.ERROR, f"check raised {type(e).__name__}: {e}",
                      received="".join(tb[-3:]), reproducer=list(session.history))
    seen = list(getattr(session, "faults", None) or [])
    if seen:  # the check passed, but the subject hung, exited or broke the answer protocol
        inputs = list(session.history)
        reproduced, note = _verifying(
            inputs, lambda: rechecks.fault_verdict(chk.func, session, inputs, seen))
        return result(Outcome.FAIL, f"the subject faulted: {'; '.join(seen)}" + note,
                      reproducer=inputs, reproduced=reproduced)
    if isinstance(observed, Rejudged):  # failures that did not repeat: a pass, never silent
        return result(Outcome.PASS, observed=observed.observed, rejudged=observed.record())
    return result(Outcome.PASS, observed=observed if isinstance(observed, str) else "")


#: Appended to a failure's message when its reproducer could not be replayed at all.
NOT_REPLAYED = (" [the reproducer was not verified: no fresh instance of the subject could be "
                "started to replay it]")


def _verified(e: CheckFailure, inputs: list[dict[str, Any]]) -> tuple[str, str]:
    """The failure's ``reproduced``: as the check set it, or its ``verify`` replay of the final
    reproducer (a replay that breaks in the harness leaves it not verified, with a note)."""
    if e.reproduced or e.verify is None:
        return e.reproduced, ""
    verify = e.verify
    return _verifying(inputs, lambda: verify(inputs, list(e.setup)))


def _verifying(inputs: list[Any], replay: Callable[[], str]) -> tuple[str, str]:
    """``replay()``'s ``reproduced``, and the note the message gets when the reproducer was not
    verified (why). Nothing is replayed for a failure without a reproducer (only on failure:
    a passing case costs nothing)."""
    if not inputs:
        return "", ""
    try:
        reproduced = replay()
    except Exception as err:
        return "", f" [the reproducer was not verified: its replay raised {err!r}]"
    return reproduced, "" if reproduced else NOT_REPLAYED


def _faults_note(session: Any) -> str:
    faults = getattr(session, "faults", None)
    return f" [subject faults: {'; '.join(faults)}]" if faults else ""


def printable(r: CheckResult) -> CheckResult:
    """``r`` with every string encodable as UTF-8: a lone surrogate a subject returned
    (``"\\udc80"``) is written as that escape, so no report writer or terminal chokes on it."""
    return dataclasses.replace(r, **{f.name: _encodable(getattr(r, f.name))
                                     for f in dataclasses.fields(r)})


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if hasattr(value, "to_json"):
        return _jsonable(value.to_json())
    return repr(value)


def default_jobs() -> int:
    """Cases run at once unless the run says otherwise: two per CPU (2 to 16). A case mostly waits
    (on its subject, or on a timeout check's sleep), so one per CPU leaves cores idle; four per
    CPU made CPU-bound subjects (an interpreter importing an SDK) share a core four ways, slow
    enough to miss a 3 s deadline."""
    return max(2, min(16, (os.cpu_count() or 2) * 2))


def run_settings(settings: Run | None = None, **changes: Any) -> Run:
    """``settings`` (default: :class:`~conformance.run.Run`'s documented defaults, never the
    environment's) with ``changes`` (its field names; ``checks`` any sequence or None)."""
    if "checks" in changes:
        changes["checks"] = tuple(changes["checks"] or ())
    return dataclasses.replace(settings or Run(), **changes)


def plan_run(subjects: Sequence[SubjectLike], settings: Run | None = None, *,
             shard: ShardPlan | None = None, **changes: Any) -> RunPlan:
    """The cases of the run: every subject × its applicable checks the run selects (``shard``:
    only that shard's (subject name, check id) cases, ``--shard``). The run's record keeps its
    options (``argv``: ``run`` and :meth:`~conformance.run.Run.words`)."""
    settings = run_settings(settings, **changes)
    checks = settings.checks or None
    cases = [Case(sub, chk) for sub in subjects for chk in select_checks(sub, checks)
             if shard is None or (sub.name, chk.id) in shard.cases]
    info = RunInfo(subjects=[s.info for s in subjects], strict=settings.strict,
                   argv=["run", *settings.words()], planned=len(cases),
                   fail_on_flaky=settings.fail_on_flaky,
                   shard=None if shard is None else shard.to_json())
    return RunPlan(list(subjects), cases, settings.timeout, settings.strict, info, settings)


Listener = RunListener | Callable[[CheckResult], Any]


def run(subjects: Sequence[SubjectLike], settings: Run | None = None, *,
        listeners: Iterable[Listener] = (), tmp_root: Path | None = None,
        shard: ShardPlan | None = None, **changes: Any) -> RunSummary:
    """Run every applicable check against every subject with the run's ``settings`` (built
    once at an entry point; ``changes``: :func:`run_settings`); see the module docstring.

    A subject that starts in no case gets ``not-run`` results (:class:`_StartGate`), never
    failures. ``fail_on_flaky``: a flaky result fails the run like a failure. Every case gets
    ``settings.case`` (its timeouts and the sandbox mode and limits of its processes).

    ``shard``: run just that shard's cases (``--shard K/N``); results.json records it.

    ``listeners`` are :class:`~conformance.results.RunListener` s (any subset of its methods) or
    plain callables taking each :class:`CheckResult`. They are called one at a time.
    """
    plan = plan_run(subjects, settings, shard=shard, **changes)
    settings = plan.settings
    per_case = settings.case
    hooks = list(listeners)
    lock = threading.Lock()
    # Interrupted (Ctrl-C, SIGTERM): subjects killed at once, cases cut short not reported.
    stopping = threading.Event()
    allow_subjects()
    # Every case's directories under one run directory, removed at the end: what a subject
    # writes next to its working directory (``../x``) stays inside it.
    own_root = tmp_root is None
    root = Path(tempfile.mkdtemp(prefix="tooluse-run-")) if tmp_root is None else tmp_root
    _emit(hooks, "on_run_started", plan.info)
    started = time.monotonic()
    workers = settings.jobs or default_jobs()
    # Command subjects are started ahead of the cases that take them (start-up overlaps work).
    starts = StartPool(lambda sub, wd: sub.open(wd, per_case), root, jobs=workers,
                       ready_timeout=settings.startup_timeout)
    for sub in plan.subjects:
        starts.expect(sub, sum(c.subject is sub for c in plan.cases))
    results: list[CheckResult] = []
    on_time: list[tuple[Case, CheckResult, list[timing.Miss]]] = []
    intermittent: list[tuple[Case, CheckResult]] = []

    def publish(r: CheckResult) -> None:
        results.append(r)
        _emit(hooks, "on_check_finished", r)

    gate = _StartGate(publish)
    #: Subjects whose start failed for good before they started in any case -> that result.
    doomed: dict[str, CheckResult] = {}

    def one(case: Case) -> None:
        if stopping.is_set():
            return
        with lock:
            first = doomed.get(case.subject.name)
            if first is not None:  # its start failed for good: this case is not started
                _emit(hooks, "on_check_started", case.check.id, case.subject.name)
                gate(not_started(case, first))
                return
            _emit(hooks, "on_check_started", case.check.id, case.subject.name)
        try:
            r, misses = run_case_timed(case.subject, case.check, per_case, tmp_root=root,
                                       starts=starts)
        except Exception as e:  # never lose the run over one case
            r, misses = _harness_error(case, e), []
        with lock:
            if stopping.is_set():
                return
            if case.subject.name not in gate.started and is_definitive_start_failure(r):
                doomed.setdefault(case.subject.name, r)
                starts.stop(case.subject)
            if judged_again(r, misses):  # judged again, alone, once the run is over
                on_time.append((case, r, misses))
                return
            if maybe_flaky(r):  # run again alone once the run is over: flaky or a failure
                intermittent.append((case, r))
                return
            gate(r)

    def again(case: Case) -> tuple[CheckResult, list[timing.Miss]]:
        try:  # the pool is closed by then: each re-run's subject starts alone, counted
            return run_case_timed(case.subject, case.check, per_case, tmp_root=root,
                                  starts=starts)
        except Exception as e:
            return _harness_error(case, e), []

    def rejudged(r: CheckResult) -> None:
        with lock:
            gate(r)

    # Slow cases (timeouts, properties) first, so that they overlap with the quick ones.
    # Hypothesis keeps its engine state per thread (6.13x+), so properties run concurrently too.
    ordered = sorted(plan.cases, key=lambda c: (not _slow(c.check), c.subject.name, c.check.id))
    complete = False
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(one, c) for c in ordered]
            try:
                for f in futures:
                    f.result()
                # What is re-run below runs alone: no subject starts ahead of it any more.
                starts.close()
                # The held-back cases, each judged again alone now that the run is over.
                rejudge_after_run(on_time, intermittent, again, rejudged, stopping)
            except BaseException:
                stopping.set()
                for f in futures:
                    f.cancel()
                stop_all_subjects()
                raise
        complete = True
    finally:
        starts.close()  # spares nobody took: stopped, their directories removed
        # The pool is shut down: nothing of this run starts a subject any more, so an
        # interrupt's refusal to start subjects ends with it (a later run_case in the same
        # process, the pytest plugin's items say, must not find every subject refused).
        allow_subjects()
        forkserver.shutdown()
        if own_root:
            shutil.rmtree(root, ignore_errors=True)
        with lock:
            gate.close()  # subjects that never started: their cases did not run
        _emit(hooks, "on_run_startup", starts.stats)
        _emit(hooks, "on_run_finished", complete=complete)
    order = {(c.subject.name, c.check.id): i for i, c in enumerate(plan.cases)}
    results.sort(key=lambda r: order.get((r.subject, r.check_id), 0))
    return RunSummary(plan, results, round(time.monotonic() - started, 3), settings.strict,
                      settings.fail_on_flaky, startup=starts.stats)


def _fresh_from(starts: StartPool, subject: SubjectLike, ahead: int) -> Any:
    """A fresh subject for a check (:func:`conformance.session.fresh`), from the run's pool."""
    got = starts.fresh(subject, ahead)
    if got.error is not None:
        got.discard()
        raise got.error
    got.made_ready()
    return got.session


def _harness_error(case: Case, e: Exception) -> CheckResult:
    return CheckResult(case.check.id, case.subject.name, case.subject.tool_type,
                       case.check.family, case.check.severity.value, Outcome.ERROR,
                       message=f"harness error: {type(e).__name__}: {e}")


def _slow(chk: Check) -> bool:
    return bool({"property", "slow"} & chk.tags) or ".timeout." in chk.id


def _emit(hooks: list[Any], method: str, *args: Any, **kwargs: Any) -> None:
    for h in hooks:
        fn = getattr(h, method, None)
        if fn is None and method == "on_check_finished" and callable(h):
            fn = h
        if fn is not None:
            fn(*args, **kwargs)
