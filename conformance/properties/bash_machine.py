"""The bash state machine: generated command sequences against fresh bash subjects, compared with
:class:`~conformance.properties.bash_model.SessionModel` (what the session must hold).

The steps (:class:`~conformance.properties.bash_step.Op`) are what a model writes, each kind in a
module of its own: state-changing commands chained with ``;``, ``&&`` or newlines and commands
that fail (:mod:`~conformance.properties.bash_commands`), output of every size
(:mod:`~conformance.properties.bash_outputs`), syntax errors and a command past the timeout
(:mod:`~conformance.properties.bash_errors`), background jobs in the forms models write
(:mod:`~conformance.properties.bash_background`), restarts
(:mod:`~conformance.properties.bash_restart`) and read-backs, one command printing every piece
of state as ``@key=value`` lines (:mod:`~conformance.properties.bash_read_back`).

How a run goes (:func:`explore_bash_model`), the recipe of
:mod:`conformance.properties.exploration`:

- **Deterministic.** A fixed number of examples (``max_examples``) of at most ``steps`` steps,
  derandomized; every example is generated whatever the subject answers (a disagreement ends
  its example, never the run), so the examples are the same on every run. The wall-time cap
  (:data:`CAP_TIMEOUTS` command timeouts) does not decide how many examples run: a run that hits
  it is **incomplete** (:attr:`BashModelReport.incomplete`), neither a pass nor a failure.
- **A fresh subject per example** in a fresh directory, started ahead so start-up overlaps the
  examples before it: taken from the run's start pool (:func:`conformance.session.fresh`,
  :mod:`conformance.subjects.pool`), which is told how many more examples will follow, else
  spawned (:func:`conformance.session.spawn`) :data:`PREFETCH` examples ahead.
- **Every distinct disagreement** (:attr:`Disagreement.key`: what kind of state or answer was
  wrong) is kept with its smallest example, shrunk by
  :func:`~conformance.properties.exploration.shrink_finding` (steps deleted, then simple commands
  dropped from a chain; a fixed number of tries, each on a fresh subject), then **verified**:
  the reproducer, exactly as printed, is replayed on a fresh subject
  (:func:`conformance.reproducers.replay_fresh_subject`, the steps judging each answer as it
  comes) and marked ``verified`` or ``did not reproduce``.
- **One defect, one check.** Each key names the fixed bash checks that report the same defect
  (:data:`REPORTED_BY`); when one of them fails on this subject (run once, on a fresh subject),
  the finding is set aside (:attr:`BashModelReport.set_aside`) as it was found, neither shrunk
  nor verified (it is only counted).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import Phase
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from conformance.properties.bash_background import BACKGROUND_FORMS, Background
from conformance.properties.bash_commands import (
    FAILURES,
    PARTS,
    RELIES_ON_CWD,
    Command,
    Fail,
    Setup,
)
from conformance.properties.bash_errors import SYNTAX_ERRORS, SyntaxError_, Timeout
from conformance.properties.bash_model import SessionModel
from conformance.properties.bash_outputs import OUTPUTS, SIZES, Output
from conformance.properties.bash_read_back import ReadBack
from conformance.properties.bash_restart import Restart
from conformance.properties.bash_step import Ctx, Disagreement, Op
from conformance.properties.exploration import (
    Budget,
    StopExploring,
    deletions,
    explore,
    hypothesis_turn,
    quiet_settings,
    run_machine,
    shrink_finding,
)
from conformance.reproducers import (
    Replayed,
    relativize_inputs,
    relativize_value,
    replay_fresh_subject,
    verdict_of,
)
from conformance.session import ToolSession, fresh, spawn

#: Examples per run and steps per example (fixed: the run is the same on every subject).
DEFAULT_EXAMPLES = 20
DEFAULT_STEPS = 8
#: The run's wall-time cap, in command timeouts (at least :data:`MIN_CAP_SECONDS`); hitting it
#: makes the run incomplete.
CAP_TIMEOUTS = 30
MIN_CAP_SECONDS = 60.0
#: Share of the cap for generating; the rest is for shrinking, verifying and setting aside.
EXPLORE_SHARE = 0.7
#: The examples (by number, from 1) that send a command past the timeout: the first time the
#: machine draws one, or else just before their final read-back.
TIMEOUT_EXAMPLES = (6,)
#: The kinds of step a rule draws from (repeats weigh a kind).
KINDS = ("command", "command", "command", "read-back", "read-back", "output", "syntax",
         "background", "background", "restart", "restart", "timeout", "failure")
#: The failing commands a "failure" step ends with (their exit status is not 0 in any shell).
FAILING = tuple(i for i, (_, status) in enumerate(FAILURES) if status == "fail")
#: Example subjects started ahead (start-up overlaps the examples before them).
PREFETCH = 2
#: Replays shrinking one finding may use (a count: the same subject gets the same reproducer).
SHRINK_TRIES = 40


# --- the run -------------------------------------------------------------------------------------

class Pool:
    """Fresh subjects in fresh directories, each started one example ahead and closed in the
    background."""

    def __init__(self, parent: ToolSession) -> None:
        self.parent = parent
        self.count = 0
        self.starter = ThreadPoolExecutor(max_workers=PREFETCH,
                                          thread_name_prefix="bash-model-start")
        self.closer = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bash-model-close")
        self.next: list[Future[tuple[ToolSession | None, Path]]] = []
        self.waited = 0.0
        self.budget: Budget | None = None
        self.closing: list[Future[None]] = []
        self.lock = threading.Lock()
        #: Set when the parent session had to serve every example (it cannot spawn).
        self.shared = False

    def _start(self, label: str, ahead: int = 0) -> tuple[ToolSession | None, Path]:
        taken = fresh(self.parent, ahead)  # from the run's start pool, started ahead of need
        if taken is not None:
            return taken, Path(taken.workdir)
        with self.lock:
            self.count += 1
            where = Path(self.parent.workdir) / f"{label}-{self.count}"
        where.mkdir(parents=True, exist_ok=True)
        return spawn(self.parent, where), where

    def open(self, label: str = "example", ahead: int = 0) -> tuple[ToolSession, Path]:
        """A live subject (:class:`Disagreement` keyed ``start`` when none starts); ``ahead``:
        how many more of this kind will follow. From the run's start pool, they are started
        ahead there (within its bounds); else up to :data:`PREFETCH` more example subjects
        are started in the background here. The time spent waiting for a subject to start is
        :attr:`waited` (start-up is not tool time)."""
        future = self.next.pop(0) if label == "example" and self.next else None
        t0 = time.monotonic()
        try:
            s, where = future.result() if future is not None else self._start(label, ahead)
        except Exception as e:  # the subject's failure to start: a finding of its own
            raise Disagreement("start", "a fresh subject did not start",
                               f"{type(e).__name__}: {e}", "a subject that starts") from None
        finally:
            waited = time.monotonic() - t0
            self.waited += waited
            if self.budget is not None:  # the cap counts tool time, not start-up
                self.budget.started += waited
        pooled = getattr(self.parent, "fresh_subject", None) is not None
        while label == "example" and not pooled and len(self.next) < min(PREFETCH, ahead):
            self.next.append(self.starter.submit(self._start, "example"))
        if s is None:
            self.shared = True
            return self.parent, where
        return s, where

    def close(self, s: ToolSession, where: Path) -> None:
        if s is self.parent:
            return
        def stop() -> None:
            try:
                s.close()
            finally:
                shutil.rmtree(where, ignore_errors=True)
        self.closing.append(self.closer.submit(stop))

    def finish(self) -> None:
        for future in self.next:
            try:
                s, where = future.result()
                if s is not None:
                    self.close(s, where)
            except Exception:
                pass
        self.next = []
        for f in self.closing:
            f.exception()
        self.starter.shutdown(wait=True)
        self.closer.shutdown(wait=True)


def run_ops(s: ToolSession, ops: list[Op], base: Path) -> Disagreement | None:
    """Run ``ops`` on ``s`` in ``base`` with a fresh model; the first disagreement, or None."""
    return run_counted(s, ops, base)[0]


def run_counted(s: ToolSession, ops: list[Op], base: Path) -> tuple[Disagreement | None, int]:
    """:func:`run_ops`, and how many tool inputs were sent."""
    ctx = Ctx(s, SessionModel(str(base)))
    done: list[Op] = []
    try:
        for op in ops:
            done.append(op)
            op.run(ctx)
    except Disagreement as d:
        d.ops, d.inputs, d.base = list(done), list(ctx.inputs), str(base)
        d.planted = list(ctx.planted)
        return d, len(ctx.inputs)
    return None, len(ctx.inputs)


@dataclass
class BashModelReport:
    """What a run found (smallest first), what it set aside, and how it went."""

    findings: list[Disagreement]
    set_aside: dict[str, list[Disagreement]]
    examples: int
    calls: int
    seconds: float
    incomplete: bool
    #: How the hypothesis run ended (:func:`conformance.properties.exploration.explore`).
    ended: str = "passed"
    #: The examples the run was to run (its fixed work).
    examples_planned: int = DEFAULT_EXAMPLES
    #: Seconds the final replays of the findings took (:func:`verify`).
    replay_seconds: float = 0.0
    #: Why the run stopped early without a fresh subject ("": it did not).
    start_failed: str = ""

    def note(self) -> str:
        # No time in it: the observed string of a complete run is the same on every run.
        text = f"{self.calls} calls in {self.examples} examples"
        if self.ended not in ("passed", "stopped") and not self.incomplete:
            text += f", generation ended: {self.ended}"
        if self.start_failed:  # why: model_check_incomplete says it
            return text
        return text + (f" before the hard time cap ({self.seconds:.1f} s used)"
                       if self.incomplete else "")


#: Finding keys and the fixed bash checks that report the same defect: when one of them fails on
#: the subject, the finding is theirs (one defect, one check).
REPORTED_BY: dict[str, tuple[str, ...]] = {
    "hang:timeout": ("bash.timeout.returns_error_in_time",),
    "timeout:not-flagged": ("bash.timeout.returns_error_in_time",),
    "missing-after:timeout": ("bash.timeout.session_usable_after",
                              "bash.timeout.returns_error_in_time"),
    "hang:background": ("bash.session.background_job_does_not_hang",),
    "missing-after:background": ("bash.session.background_job_does_not_hang",),
    "hang:output": ("bash.output.large_output_returns",),
    # An output lost or refused: whichever output check fails on the subject reports it.
    **{f"output:{how}": ("bash.output.large_output_returns", "bash.output.stdout_and_stderr",
                         "bash.output.partial_last_line") for how in OUTPUTS},
    "missing-after:output": ("bash.output.partial_last_line", "bash.output.large_output_returns",
                             "bash.session.sentinel_lookalike_output"),
    "flag:failure-not-flagged": ("bash.errors.failure_flagged",),
    "flag:success-flagged": ("bash.errors.failure_flagged",),
    "syntax:broken": ("bash.errors.syntax_error_recovers",),
    "hang:syntax": ("bash.errors.syntax_error_recovers",),
    "missing-after:syntax": ("bash.errors.syntax_error_recovers",),
    "restart:error": ("bash.restart.confirms",),
    "hang:restart": ("bash.restart.confirms",),
    "missing-after:restart": ("bash.restart.confirms",),
    "restart:process": ("bash.restart.clears_state",),
    "restart-kept:cwd": ("bash.restart.clears_state",),
    "restart-kept:var": ("bash.restart.clears_state",),
    "restart-kept:env": ("bash.restart.clears_state",),
    "state:cwd": ("bash.session.cwd_persists",),
    "state:env": ("bash.session.env_persists",),
    "file": ("bash.session.files_persist",),
    "missing": ("bash.output.stdout_and_stderr", "bash.output.roundtrip"),
    # Shell state kept only by one live shell: a subject that loses the directory or the
    # environment between plain calls does not keep one shell, and those checks report it.
    **{f"state:{c}": ("bash.session.env_persists", "bash.session.cwd_persists")
       for c in ("var", "fn", "alias", "umask", "shopt")},
}
#: Every read-back is output: a subject whose output written over time comes back repeated or
#: cut (``bash.output.written_over_time`` fails) garbles whatever a step reads, under load most
#: (the reads split where the writes did), so such a finding is that check's too.
REPORTED_BY.update({k: (*v, "bash.output.written_over_time") for k, v in REPORTED_BY.items()
                    if k.startswith(("state:", "output:", "restart-kept:")) or k in ("file",
                                                                                      "missing")})


def reported_by(key: str) -> tuple[str, ...]:
    """The fixed checks that report a disagreement of kind ``key`` (:data:`REPORTED_BY`); one
    in a command written relative to the working directory (:data:`RELIES_ON_CWD`) also
    ``bash.session.cwd_persists``'s, after the checks of its kind."""
    if key.endswith(RELIES_ON_CWD):
        return (*REPORTED_BY.get(key[:-len(RELIES_ON_CWD)], ()), "bash.session.cwd_persists")
    return REPORTED_BY.get(key, ())


class _Run:
    def __init__(self, parent: ToolSession, cap: float) -> None:
        self.pool = Pool(parent)
        self.budget = Budget(cap, calls=10**9)
        self.pool.budget = self.budget
        self.found: dict[str, Disagreement] = {}
        self.examples = 0
        self.calls = 0
        self.incomplete = False
        #: Why an example found no fresh subject, twice ("": every example had one).
        self.start_failed = ""
        self.max_examples = DEFAULT_EXAMPLES
        #: The examples' steps, as the machine generated them.
        self.generated: list[list[Op]] = []

    def record(self, d: Disagreement) -> None:
        old = self.found.get(d.key)
        if old is None or len(d.inputs) < len(old.inputs):
            self.found[d.key] = d

    def replay(self, ops: list[Op], label: str, ahead: int = 0) -> Disagreement | None:
        self.budget.charge(len(ops), share=1.0)
        try:
            s, where = self.pool.open(label, ahead)
        except Disagreement as failed:
            return failed
        try:
            d, calls = run_counted(s, ops, where)
            self.calls += calls
            return d
        finally:
            self.pool.close(s, where)

    def _open_example(self, ahead: int) -> tuple[ToolSession, Path]:
        try:
            return self.pool.open("example", ahead=ahead)
        except Disagreement:
            return self.pool.open("example", ahead=ahead)  # once more: a start can be unlucky

    def execute(self) -> None:
        """Each generated example on a fresh subject; every disagreement recorded."""
        for i, ops in enumerate(self.generated):
            self.budget.charge(0, share=EXPLORE_SHARE)
            self.examples += 1
            try:
                s, where = self._open_example(len(self.generated) - i - 1)
            except Disagreement as failed:
                # Twice no fresh subject: the harness could not go on (a start that fails under
                # load is time, not a verdict): the run is incomplete, never a FAIL of the tool;
                # a subject that cannot start at all fails its own case's start first.
                self.start_failed = f"{failed.message} ({failed.received})"
                return
            try:
                d, calls = run_counted(s, ops, where)
            finally:
                self.pool.close(s, where)
            self.calls += calls
            if d is not None:
                self.record(d)
                if self.pool.shared and d.key.startswith(("hang", "fault")):
                    return  # no other subject to go on with


def _machine(run: _Run, steps: int) -> type[RuleBasedStateMachine]:
    class BashMachine(RuleBasedStateMachine):
        """Generates the examples' steps (nothing is sent here: see :func:`explore_bash_model`)."""

        def __init__(self) -> None:
            super().__init__()
            self.ops: list[Op] = []
            self.timeouts = 0
            self.allow_timeout = len(run.generated) + 1 in TIMEOUT_EXAMPLES

        def step(self, op: Op) -> None:
            self.ops.append(op)
            # A step that can disturb the session is followed by a read-back (as an edit is by a
            # view in the editor machine): what it did to the state is seen at once.
            if isinstance(op, Output | SyntaxError_ | Background | Timeout | Restart) or (
                    isinstance(op, Command) and any(isinstance(p, Fail) for p in op.parts)):
                self.ops.append(ReadBack())

        def teardown(self) -> None:
            if self.allow_timeout and not self.timeouts:  # its example always has one
                self.timeout()
            self.step(ReadBack())
            run.generated.append(self.ops)

        @initialize()
        def setup(self) -> None:
            self.step(Setup())

        # One rule drawing the kind of step (hypothesis' per-example rule switching would leave
        # whole kinds out of a derandomized run; a sampled kind keeps every kind in play).
        @rule(kind=st.sampled_from(KINDS), data=st.data())
        def act(self, kind: str, data: st.DataObject) -> None:
            if kind == "command":
                parts = data.draw(st.lists(PARTS, min_size=1, max_size=3))
                joiner = data.draw(st.sampled_from(("; ", " && ", "\n")))
                self.step(Command(parts, joiner))
            elif kind == "read-back":
                self.step(ReadBack())
            elif kind == "failure":
                # State set, then a command that fails, in one command line: the failure is
                # the line's exit status, and the session keeps what it set (seed 003 "Bash
                # tool": state persists between commands; a failure is not a restart). A shell
                # that a syntax error ends may be replaced (the syntax step); one that fails a
                # command may not.
                parts = data.draw(st.lists(PARTS, min_size=1, max_size=2))
                failing = Fail(data.draw(st.sampled_from(FAILING)))
                self.step(Command([*parts, failing], "; "))
            elif kind == "output":
                how = data.draw(st.sampled_from(tuple(SIZES)))
                self.step(Output(how, data.draw(st.sampled_from(SIZES[how]))))
            elif kind == "syntax":
                self.step(SyntaxError_(data.draw(st.integers(0, len(SYNTAX_ERRORS) - 1))))
            elif kind == "background":
                self.step(Background(data.draw(st.integers(0, len(BACKGROUND_FORMS) - 1))))
            elif kind == "restart":
                self.step(Restart())
            elif kind == "timeout":
                self.timeout()

        def timeout(self) -> None:
            # Only in the examples of TIMEOUT_EXAMPLES (by their number: the run stays the same),
            # at most once: a timeout costs a whole command timeout of wall time.
            if self.allow_timeout and not self.timeouts:
                self.timeouts += 1
                self.step(Timeout())

    return BashMachine


def explore_bash_model(s: ToolSession, *, max_examples: int = DEFAULT_EXAMPLES,
                       steps: int = DEFAULT_STEPS, cap: float | None = None,
                       fails: Callable[[str, ToolSession], bool] | None = None
                       ) -> BashModelReport:
    """Run the machine on fresh instances of ``s``'s subject (see the module docstring).
    ``fails(check_id, session)`` runs a fixed check on a fresh session and says whether it
    failed (the check module passes the catalog's; without it nothing is set aside)."""
    timeout = float(getattr(s, "timeout", 3.0) or 3.0)
    run = _Run(s, cap if cap is not None else max(MIN_CAP_SECONDS, CAP_TIMEOUTS * timeout))
    run.max_examples = max_examples
    machine = _machine(run, steps)
    config = quiet_settings(max_examples=max_examples, stateful_step_count=steps,
                            phases=(Phase.generate,))
    started = time.monotonic()
    aside: dict[str, list[Disagreement]] = {}
    findings: list[Disagreement] = []
    ended = "stopped"
    replayed = 0.0
    try:
        # Hypothesis only generates the examples (quickly, in its turn); they run after it, so
        # that other property checks do not wait for subjects' answers.
        with hypothesis_turn(run.budget):
            ended = explore(lambda: run_machine(machine, config), ())
        run.budget.restart()
        try:
            run.execute()
        except StopExploring:
            pass
        run.incomplete = run.budget.ran_out or bool(run.start_failed)
        failing = _FixedChecks(run, fails)
        for key in sorted(run.found, key=lambda k: len(run.found[k].inputs)):
            # A finding a failing fixed check reports is set aside before it is shrunk and
            # verified: it is only counted, and shrinking a hang costs a command timeout a try
            # (40 of them on a subject whose background jobs hang every answer; issue 21).
            owners = [c for c in reported_by(key) if failing(c)]
            if owners:
                aside.setdefault(owners[0], []).append(run.found[key])
                continue
            d = minimize(run, run.found[key])
            t0 = time.monotonic()
            d.reproduced = verify(s, run.budget, d)
            replayed += time.monotonic() - t0
            findings.append(d)
    finally:
        run.pool.finish()
    findings.sort(key=lambda d: len(d.inputs))
    return BashModelReport(findings, aside, run.examples, run.calls,
                           time.monotonic() - started, run.incomplete, ended,
                           examples_planned=len(run.generated), replay_seconds=replayed,
                           start_failed=run.start_failed)


def variants(ops: list[Op]) -> Iterator[list[Op]]:
    """Simpler versions of an example, in the order shrinking tries them. The first step
    (:class:`Setup`) and the last (the one that disagreed) are kept: first each other step alone
    between them (a disagreement is usually one step's doing), then steps deleted
    (:func:`~conformance.properties.exploration.deletions`), then one simple command dropped from
    a chained command line."""
    if len(ops) < 2:
        return
    head, middle, last = ops[:1], ops[1:-1], ops[-1:]
    if len(middle) > 1:
        for i in range(len(middle) - 1, -1, -1):
            yield [*head, middle[i], *last]
    for shorter in deletions(middle):
        yield [*head, *shorter, *last]
    rest = ops[1:]
    for i, op in enumerate(rest):
        if isinstance(op, Command) and len(op.parts) > 1:
            for j in range(len(op.parts)):
                fewer = Command(op.parts[:j] + op.parts[j + 1:], op.joiner)
                yield [*head, *rest[:i], fewer, *rest[i + 1:]]


def minimize(run: _Run, found: Disagreement, *, tries: int | None = None) -> Disagreement:
    """The smallest example showing the same disagreement (its key) that
    :func:`~conformance.properties.exploration.shrink_finding` reaches with :func:`variants`,
    each try on a fresh subject; at most ``tries`` replays (a count, never a clock)."""
    if not found.ops:
        return found
    limit = SHRINK_TRIES if tries is None else tries
    made = [0]

    def replay(ops: list[Op]) -> Disagreement | None:
        # The next tries' subjects start while this one runs: the run's start pool holds as
        # many as its bounds allow (what shrinking leaves unused, later examples or cases of
        # the subject take, or the pool stops at the end); spawned, none ahead.
        made[0] += 1
        return run.replay(ops, "minimize", ahead=limit - made[0])
    return shrink_finding(found, found.ops, replay, variants, tries=limit)


def verify(s: ToolSession, budget: Budget, d: Disagreement) -> str:
    """Replay ``d``'s reproducer exactly as it is printed (inputs and setup steps, the case's
    directory as ``$TOOLUSE_WORKDIR``) on a fresh subject, its steps judging each answer as it
    comes (:func:`~conformance.reproducers.replay_fresh_subject` with a driver): ``verified``
    when the same disagreement shows again, ``did not reproduce`` when not, empty when it was
    not replayed (no fresh subject, or the time cap)."""
    if not d.ops:
        return ""
    try:
        budget.charge(len(d.inputs), share=1.0)
    except StopExploring:
        return ""
    workdir = Path(s.workdir)
    printed = relativize_inputs(d.reproducer(str(workdir)), workdir)
    setup = relativize_value(d.setup(str(workdir)), workdir)
    again: list[Disagreement | None] = [None]

    def drive(fresh: Any, where: Path) -> None:
        again[0] = run_ops(fresh, d.ops, where)

    def judge(_: Replayed) -> bool:
        return again[0] is not None and again[0].key == d.key

    return verdict_of(replay_fresh_subject(s, printed, setup, judge, drive=drive))


class _FixedChecks:
    """Runs a fixed bash check once, on a fresh subject: does it fail there?"""

    def __init__(self, run: _Run, fails: Callable[[str, ToolSession], bool] | None) -> None:
        self.run, self.fails = run, fails
        self.seen: dict[str, bool] = {}

    def __call__(self, check_id: str) -> bool:
        if self.fails is None:
            return False
        if check_id not in self.seen:
            try:
                s, where = self.run.pool.open("related")
            except Disagreement:
                self.seen[check_id] = False
                return False
            try:
                self.seen[check_id] = self.fails(check_id, s)
            finally:
                self.run.pool.close(s, where)
        return self.seen[check_id]


__all__ = ["BACKGROUND_FORMS", "BashModelReport", "Disagreement", "REPORTED_BY", "reported_by",
           "explore_bash_model", "minimize", "run_ops", "variants", "verify"]
