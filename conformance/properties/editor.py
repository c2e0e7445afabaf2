"""Model-based stateful testing of an editor subject (hypothesis ``RuleBasedStateMachine``).

:func:`~conformance.properties.editor_machine.editor_machine` builds a state machine that drives an editor with generated commands
(create, view, view_range, str_replace, insert, undo_edit where the version has it, and files
planted behind the editor's back) and compares the subject, command by command, to
:class:`~conformance.properties.editor_model.EditorModel`, which accepts every documented-compatible
convention (and notes which one the subject followed).

:func:`explore_editor_model` runs it deterministically (the recipe of
:mod:`conformance.properties.exploration`):

- a **fixed number of examples** (``max_examples``; generation only, derandomized), never a time
  budget: the same subject gets the same examples, the same findings and the same reproducers on
  an idle or a loaded machine. Generation stops early, deterministically, once :data:`ENOUGH`
  distinct disagreements are known;
- examples run on **one subject** (a fresh directory each), replaced by a fresh one when it hung,
  exited or broke the protocol; a session that cannot spawn is reused (a fault of that one
  subject ends the run);
- every **distinct disagreement** (a :attr:`ModelDisagreement.key`: the command and what went
  wrong) is recorded with its first example and generation goes on; each is then shrunk by
  :func:`conformance.properties.exploration.shrink` (steps deleted, texts and planted bytes simplified, file
  names shortened; a count of tries, never a clock) and **verified**: replayed exactly as
  printed on a fresh subject in a fresh directory (``verified`` / ``did not reproduce``);
- findings that are defects fixed checks report are **set aside** (one defect, one check):
  each finding has a kind (:func:`~conformance.properties.editor_owners.kind_of`: several
  matches accepted, an insert at the start, a final newline added, ...), and a kind whose check
  (:data:`~conformance.properties.editor_owners.REPORTED_BY`) fails on the same subject owns the
  finding; a finding that needs tabs or CRs (gone when replayed without them) is
  ``editor.bytes.tabs_preserved``'s or ``crlf_preserved``'s (the undo checks' on those bytes
  when it ends in ``undo_edit``) when that check fails; invalid ``insert_line`` values are not
  generated at all (``editor.insert.rejects_past_end`` owns them);
- the :class:`~conformance.properties.exploration.Budget`'s time cap is a hard cap: a run that hits it is
  **incomplete** (:attr:`ModelReport.incomplete`), never a pass or a failure;
- what the subjects do when closed after the examples (a slow exit) is a note, not a finding:
  no finding without a reproducer;
- nothing reaches the terminal.

Reproducers are the tool inputs in order, with what was planted behind the editor's back stated
as setup steps (:attr:`ModelDisagreement.setup`: "before input 1, write ..."), paths in the
check's own working directory.

The parts, one responsibility each: the model of the documented semantics
(:mod:`~conformance.properties.editor_model`); one input judged against it and what a
disagreement is (:mod:`~conformance.properties.editor_judge`); the exploration, the hypothesis
state machine and its subjects (:mod:`~conformance.properties.editor_machine`); the reproducers,
replayed, shrunk and verified (:mod:`~conformance.properties.editor_reproducers`); which fixed
check owns a finding (:mod:`~conformance.properties.editor_owners`). This module runs them in
order and sets aside what fixed checks report.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import Phase

from conformance.properties.editor_judge import ModelDisagreement, Plant, disagreement
from conformance.properties.editor_machine import ENOUGH, Exploration, editor_machine
from conformance.properties.editor_owners import CRLF_CHECK, NEUTRAL, owners
from conformance.properties.editor_reproducers import minimize, replay, replay_on, variants, verify
from conformance.properties.exploration import (
    EXPLORE_SHARE,
    Budget,
    StopExploring,
    explore,
    hypothesis_turn,
    quiet_settings,
    run_machine,
)
from conformance.session import ToolSession

#: Rules per example (an edit rule sends the edit and a view): reproducers stay short.
DEFAULT_STEPS = 12
#: Examples per run: a count, never a clock.
MAX_EXAMPLES = 40
#: The hard time cap: :data:`~conformance.properties.exploration.BUDGET_TIMEOUTS` command timeouts, at
#: least this many seconds. Far above what the fixed work needs (a few seconds for a passing
#: editor); only a subject or machine far slower than that hits it (the run is incomplete).
MIN_CAP_SECONDS = 60.0


@dataclass
class ModelReport:
    """What a run of the model check found (:attr:`findings`, smallest first) and saw."""

    findings: list[ModelDisagreement]
    #: The conventions seen and how much was covered (the check's observed string).
    observed: str
    #: How hypothesis ended: passed (every example ran), stopped (enough findings, the budget,
    #: or a dead subject), unsatisfiable.
    ended: str
    budget: Budget
    #: Findings that are defects other checks report, with that check's id: not counted again.
    set_aside: list[tuple[ModelDisagreement, str]] = field(default_factory=list)
    #: The hard time cap ended the run before its fixed work was done: neither a pass nor a
    #: failure (the check is ``incomplete``).
    incomplete: bool = False
    #: Seconds the run took, and the final replays of its findings (:func:`verify`).
    seconds: float = 0.0
    replay_seconds: float = 0.0
    #: Why no fresh subject started for an example, twice ("": each did; else incomplete).
    start_failed: str = ""

    @property
    def newline_translation(self) -> list[ModelDisagreement]:
        """The set-aside findings that are ``editor.bytes.crlf_preserved``'s."""
        return [f for f, owner in self.set_aside if owner == CRLF_CHECK]

    @property
    def owners(self) -> dict[str, int]:
        """Check id → how many findings were set aside as that check's defect."""
        out: dict[str, int] = {}
        for _, owner in self.set_aside:
            out[owner] = out.get(owner, 0) + 1
        return out


def explore_editor_model(s: ToolSession, *, max_examples: int = MAX_EXAMPLES,
                         steps: int = DEFAULT_STEPS, budget: Budget | None = None,
                         fails: FixedCheckFails | None = None) -> ModelReport:
    """Run the machine against the session's subject; see the module docstring. Findings are
    shrunk, verified, and their paths moved into ``s.workdir``. ``fails(check_id, session)``
    runs a fixed check on a fresh session and says whether it failed: the findings such a
    check owns are set aside (without it, none is)."""
    if budget is None:
        budget = Budget.for_session(s)
        budget.seconds = max(budget.seconds, MIN_CAP_SECONDS)
    x = Exploration(s, budget)
    machine = editor_machine(x)
    config = quiet_settings(max_examples=max_examples, stateful_step_count=steps,
                            phases=(Phase.generate,))
    found: list[ModelDisagreement] = []
    aside: list[tuple[ModelDisagreement, str]] = []
    started, replayed = time.monotonic(), 0.0
    try:
        with hypothesis_turn(x.budget):
            x.ended = explore(lambda: run_machine(machine, config),
                              (ModelDisagreement,))
        if x.ended == "flaky" and x.budget.ran_out:
            x.ended = "stopped"  # hypothesis saw the budget's stop as a changed example
        try:
            for f in sorted(x.findings.by_key.values(), key=lambda f: f.order):
                small = f.error
                if small.steps:
                    small = minimize(x, small)
                    t0 = time.monotonic()
                    small.reproduced = verify(x, small)
                    replayed += time.monotonic() - t0
                found.append(small.moved(Path(s.workdir)))
            aside = _set_aside(x, found, _Owners(x, fails))
        except StopExploring:
            pass  # the time cap (or a subject that no longer starts): reported below
    finally:
        x.finish()
    done = {id(f) for f, _ in aside}
    found = [f for f in found if id(f) not in done]
    found.sort(key=lambda d: len(d.steps))
    return ModelReport(found, x.observed(), x.ended, x.budget, aside,
                       incomplete=x.budget.timed_out or bool(x.start_failed),
                       seconds=time.monotonic() - started, replay_seconds=replayed,
                       start_failed=x.start_failed)


# --- one defect, one check ------------------------------------------------------------------------

#: Runs a fixed check on a session and says whether it failed (the check module passes the
#: catalog's; without it nothing is set aside).
FixedCheckFails = Callable[[str, ToolSession], bool]


class _Owners:
    """Runs each fixed check at most once, on a fresh subject (the examples' subject in a fresh
    directory when none can be started): does it fail on this subject?"""

    def __init__(self, x: Exploration, fails: FixedCheckFails | None) -> None:
        self.x, self.fails = x, fails
        self.seen: dict[str, bool] = {}

    def __call__(self, check_id: str) -> bool:
        if self.fails is None:
            return False
        if check_id not in self.seen:
            self.seen[check_id] = self._run(check_id, self.fails)
        return self.seen[check_id]

    def _run(self, check_id: str, fails: FixedCheckFails) -> bool:
        self.x.budget.charge(4, share=1.0)
        got = self.x.fresh("owner")
        if got is not None:
            s, where = got
            try:
                return fails(check_id, s)
            finally:
                self.x.retire(s)
                shutil.rmtree(where, ignore_errors=True)
        s = self.x.parent  # no fresh subject: the one session, as the check itself runs
        return fails(check_id, s)


def _kind(f: ModelDisagreement) -> str:
    """The finding kind its key ends in (:func:`~conformance.properties.editor_owners.kind_of`)."""
    parts = f.key.split(": ")
    return parts[2] if len(parts) > 2 else ""


def _last_command(f: ModelDisagreement) -> str:
    inputs = f.reproducer
    return str(inputs[-1]["command"]) if inputs else ""


def _set_aside(x: Exploration, found: list[ModelDisagreement], failing: _Owners
               ) -> list[tuple[ModelDisagreement, str]]:
    """The findings that are defects fixed checks report, each with the check that owns it
    (:data:`~conformance.properties.editor_owners.REPORTED_BY`): a finding of a kind whose
    check fails on this subject; or one that needs tabs or CRs (gone when the same steps are
    replayed without them) on a subject whose tab or CRLF check fails (one defect, one check)."""
    aside: list[tuple[ModelDisagreement, str]] = []
    for f in found:
        owner = next((c for c in owners(_kind(f), _last_command(f)) if failing(c)), None)
        if owner is None and not f.key.endswith(("hung", "faulted")):
            # (A hang or a crash is no byte property, and each replay of it costs a timeout.)
            for byte_kind, (holds, without) in NEUTRAL.items():
                checks = [c for c in owners(byte_kind, _last_command(f))
                          if f.steps and holds(f.steps) and failing(c)]
                if checks and replay_on(x, without(f.steps), "owner") is None:
                    owner = checks[0]
                    break
        if owner is not None:
            aside.append((f, owner))
    return aside


def run_editor_model(s: ToolSession, *, max_examples: int = MAX_EXAMPLES,
                     steps: int = DEFAULT_STEPS,
                     seed: int | None = 0, budget: Budget | None = None
                     ) -> ModelDisagreement | None:
    """The smallest disagreement :func:`explore_editor_model` finds, or None. (``seed`` is kept
    for callers; runs are always derandomized.)"""
    report = explore_editor_model(s, max_examples=max_examples, steps=steps, budget=budget)
    return report.findings[0] if report.findings else None


__all__ = ["ENOUGH", "EXPLORE_SHARE", "MAX_EXAMPLES", "Exploration", "ModelDisagreement",
           "ModelReport", "Plant", "disagreement", "editor_machine", "explore_editor_model",
           "minimize", "replay", "replay_on", "run_editor_model", "variants", "verify"]
