"""Agent-loop subjects: ``--loop module:attr`` naming ``loop(client, params)``, and ``--loop-cmd
CMD``, a program in any language (:mod:`conformance.loops.command`).

``loop`` drives one conversation to its end: ``params`` are the Messages create parameters of the
first request (``model``, ``max_tokens``, ``tools``, ``messages``, and ``stream`` / ``container``
when the scenario has them). A sync function gets an ``anthropic.Anthropic``, a coroutine function
an ``anthropic.AsyncAnthropic``, both wired to the simulator. A loop that accepts ``run_tool``
gets ``run_tool(name, input, tool_use_id) -> content`` for client tools; otherwise it answers
them with its own implementations (results are not compared). A loop may set
``loop.tooluse_unsupported = {"loop.scenario.id": "why"}``: those checks are skipped with the
reason. ``loop.tooluse_matching = "tolerant"`` (or ``tooluse run --loop-matching tolerant``, which
wins) matches its requests with the tolerant matcher set (:mod:`simulator.matchers`); a command
declares what a callable declares when run with ``TOOLUSE_LOOP_DESCRIBE=1``.

A scenario's run has a wall-time deadline of its own,
:data:`~conformance.loops.run.CONVERSATION_DEADLINE` per conversation, not derived from
``--timeout`` (the bash and editor call budget).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.results import SubjectInfo
from conformance.subjects.case import CaseSettings
from conformance.subjects.launch import Confinement
from conformance.subjects.spec import resolve_factory

from .run import LoopOutcome, run_loop
from .scenarios import BY_ID, LoopScenario

FAMILY = "loop"
TOOL_TYPE = "agent_loop"


@dataclass
class LoopSession:
    subject: LoopSubject
    workdir: Path
    timeout: float
    tool_type: str = TOOL_TYPE
    #: A command's start-up allowance (``--startup-timeout``), added to each run's deadline.
    start_timeout: float = 0.0
    history: list[Any] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    #: The run's sandbox mode and limits for a loop command.
    confinement: Confinement = field(default_factory=Confinement)

    def unsupported(self, scenario_id: str) -> str | None:
        """Why the check is not applicable to this loop (declared, or no recording of the
        scenario for the variant the loop declares), or None."""
        unsupported, variants = self.subject.declared(self.workdir, self.confinement)
        reason = unsupported.get(scenario_id)
        if reason:
            return str(reason)
        scenario = BY_ID.get(scenario_id)
        resolved = scenario.for_variants(variants) if scenario is not None else None
        return resolved if isinstance(resolved, str) else None

    def scenario(self, scenario_id: str) -> LoopScenario:
        """The scenario as this loop runs it (the recording of its declared variant)."""
        resolved = BY_ID[scenario_id].for_variants(
            self.subject.declared(self.workdir, self.confinement)[1])
        if isinstance(resolved, str):
            raise ValueError(f"{scenario_id}: {resolved}")
        return resolved

    def run(self, scenario_id: str) -> LoopOutcome:
        return self.drive(self.scenario(scenario_id))

    def resolve(self, scenario: LoopScenario) -> LoopScenario | str:
        """A scenario that is not a check of its own (a warning check's) as this loop runs it,
        or why it is not applicable (the loop declares its id unsupported, or no recording for
        the loop's variant)."""
        unsupported, variants = self.subject.declared(self.workdir, self.confinement)
        reason = unsupported.get(scenario.id)
        return str(reason) if reason else scenario.for_variants(variants)

    def drive(self, scenario: LoopScenario) -> LoopOutcome:
        """One run of ``scenario`` as given (already resolved for the loop's variants)."""
        outcome = self.subject.drive(scenario, self.workdir, start_timeout=self.start_timeout,
                                     confinement=self.confinement)
        self.history = list(outcome.requests)
        return outcome

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class LoopSubject:
    name: str
    spec: str
    family: str = FAMILY
    tool_type: str = TOOL_TYPE
    kind: str = "factory"
    #: The matcher set (``--loop-matching``); None: the loop's ``tooluse_matching``, else exact.
    matching: str | None = None

    def matching_of(self, loop: Any) -> str:
        declared = getattr(loop, "tooluse_matching", None)
        return self.matching or (declared if isinstance(declared, str) else None) or "exact"

    @property
    def info(self) -> SubjectInfo:
        return SubjectInfo(name=self.name, family=self.family, tool_type=self.tool_type,
                           spec=self.spec)

    def load(self) -> Any:
        return resolve_factory(self.spec)

    def declared(self, workdir: Path, confinement: Confinement
                 ) -> tuple[dict[str, str], dict[str, str]]:
        """What the loop declares: check id -> why it cannot express it
        (``tooluse_unsupported``), and its variants (``tooluse_variants``: ``client_tool``,
        ``code_execution``; :meth:`LoopScenario.for_variants`)."""
        loop = self.load()
        return (_strings(getattr(loop, "tooluse_unsupported", None)),
                _strings(getattr(loop, "tooluse_variants", None)))

    def drive(self, scenario: LoopScenario, workdir: Path, *, start_timeout: float = 0.0,
              confinement: Confinement) -> LoopOutcome:
        """One run of ``scenario`` (its own engine), within its deadline (a command's start-up
        allowance ``start_timeout`` added; ``confinement``: a command's sandbox and limits)."""
        from .run import scenario_deadline

        loop = self.load()
        return run_loop(loop, scenario, matching=self.matching_of(loop),
                        deadline=start_timeout + scenario_deadline(scenario))

    def open(self, workdir: Path, case: CaseSettings) -> LoopSession:
        return LoopSession(self, workdir, case.timeout, start_timeout=case.startup_timeout,
                           confinement=case.confinement)


def loop_subject(spec: str, *, name: str | None = None, matching: str | None = None) -> LoopSubject:
    """``--loop SPEC`` (``module:attr`` or ``path/to/file.py:attr``), resolved now."""
    subject = LoopSubject(name or spec, spec, matching=matching)
    from simulator.matchers import matcher_set

    matcher_set(subject.matching_of(subject.load()))  # an unknown set name fails here
    return subject


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items() if v} if isinstance(value, dict) else {}


#: A command's declarations: unsupported checks, variants, its matcher set (or None).
Description = tuple[dict[str, str], dict[str, str], str | None]
#: ``TOOLUSE_LOOP_DESCRIBE`` answers, by command (asked once per process).
_DESCRIBED: dict[str, Description] = {}


@dataclass(frozen=True)
class LoopCommandSubject(LoopSubject):
    """``--loop-cmd CMD``: the program is started once per scenario run."""

    kind: str = "command"

    @property
    def info(self) -> SubjectInfo:
        return SubjectInfo(name=self.name, family=self.family, tool_type=self.tool_type,
                           spec=f"cmd:{self.spec}")

    def load(self) -> Any:
        raise TypeError("a --loop-cmd subject is a program, not a Python callable")

    def _described(self, workdir: Path, confinement: Confinement) -> Description:
        from .command import describe

        if self.spec not in _DESCRIBED:
            _DESCRIBED[self.spec] = describe(self.spec, workdir, confinement)
        return _DESCRIBED[self.spec]

    def declared(self, workdir: Path, confinement: Confinement
                 ) -> tuple[dict[str, str], dict[str, str]]:
        unsupported, variants, _ = self._described(workdir, confinement)
        return unsupported, variants

    def drive(self, scenario: LoopScenario, workdir: Path, *, start_timeout: float = 0.0,
              confinement: Confinement) -> LoopOutcome:
        from .command import run_loop_command
        from .run import scenario_deadline

        declared = self._described(workdir, confinement)[2]
        return run_loop_command(self.spec, scenario, workdir / _case_dir(scenario.id),
                                matching=self.matching or declared or "exact",
                                deadline=start_timeout + scenario_deadline(scenario),
                                confinement=confinement)


def _case_dir(scenario_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in scenario_id)[:120]


def loop_command_subject(command: str, *, name: str | None = None,
                         matching: str | None = None) -> LoopCommandSubject:
    """``--loop-cmd CMD``: checked for an empty command now; started per scenario."""
    from conformance.errors import UsageError

    if not command.strip():
        raise UsageError("--loop-cmd: give the command that runs the loop program")
    return LoopCommandSubject(name or f"cmd:{command}", command, matching=matching)
