"""Agent-loop subjects: ``--loop module:attr`` naming ``loop(client, params)``.

``loop`` drives one conversation to its end: ``params`` are the Messages create parameters of the
first request (``model``, ``max_tokens``, ``tools``, ``messages``, and ``stream`` / ``container``
when the scenario has them). A sync function gets an ``anthropic.Anthropic``, a coroutine function
an ``anthropic.AsyncAnthropic``, both wired to the simulator. A loop that accepts ``run_tool``
gets ``run_tool(name, input, tool_use_id) -> content`` for client tools; otherwise it answers
them with its own implementations (results are not compared). A loop may set
``loop.tooluse_unsupported = {"loop.scenario.id": "why"}``: those checks are skipped with the
reason. ``loop.tooluse_matching = "tolerant"`` (or ``tooluse run --loop-matching tolerant``, which
wins) matches its requests with the tolerant matcher set (:mod:`simulator.matchers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.results import SubjectInfo

from .run import LoopOutcome, run_loop
from .scenarios import BY_ID

FAMILY = "loop"
TOOL_TYPE = "agent_loop"


@dataclass
class LoopSession:
    subject: LoopSubject
    workdir: Path
    timeout: float
    tool_type: str = TOOL_TYPE
    history: list[Any] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def unsupported(self, scenario_id: str) -> str | None:
        declared = getattr(self.subject.load(), "tooluse_unsupported", None) or {}
        reason = declared.get(scenario_id) if isinstance(declared, dict) else None
        return str(reason) if reason else None

    def run(self, scenario_id: str) -> LoopOutcome:
        loop = self.subject.load()
        outcome = run_loop(loop, BY_ID[scenario_id], deadline=max(10.0, self.timeout * 10),
                           matching=self.subject.matching_of(loop))
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
        from conformance.subjects.spec import resolve_factory

        return resolve_factory(self.spec)

    def open(self, workdir: Path, *, timeout: float,
             case_deadline: float | None = None) -> LoopSession:
        return LoopSession(self, workdir, timeout)


def loop_subject(spec: str, *, name: str | None = None, matching: str | None = None) -> LoopSubject:
    """``--loop SPEC`` (``module:attr`` or ``path/to/file.py:attr``), resolved now."""
    subject = LoopSubject(name or spec, spec, matching=matching)
    from simulator.matchers import matcher_set

    matcher_set(subject.matching_of(subject.load()))  # an unknown set name fails here
    return subject
