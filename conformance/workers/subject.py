"""Worker subjects: ``--worker module:attr`` (a coroutine) or ``--worker-cmd "..."`` (any language).

``module:attr`` names ``async def serve(client, environment_id, environment_key, *, tools=None,
timeout=None, workdir=None)``: it serves the environment until cancelled. ``client`` is an
``anthropic.AsyncAnthropic`` bearing the environment key and talking to the simulation; ``tools``
(when accepted) are the conformance toolset as SDK runnable tools, bounded by ``timeout``. A
worker that takes no ``tools`` serves the toolset of :mod:`.toolset` itself, as command workers do:
those get ``ANTHROPIC_BASE_URL``, ``TOOLUSE_ENVIRONMENT_ID`` / ``ANTHROPIC_ENVIRONMENT_ID``,
``TOOLUSE_ENVIRONMENT_KEY`` / ``ANTHROPIC_ENVIRONMENT_KEY``, ``TOOLUSE_TOOL_TIMEOUT`` (seconds) and
``TOOLUSE_WORKDIR`` (also their cwd).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.errors import UsageError
from conformance.results import SubjectInfo
from conformance.subjects.case import CaseSettings
from conformance.subjects.launch import Confinement
from conformance.subjects.spec import resolve_factory
from simulator.managed_agents import Scenario

from .run import WorkerRun

FAMILY = "worker"
#: Worker checks apply to custom tools (the registry's ``custom`` type).
TOOL_TYPE = "custom"


@dataclass
class WorkerSession:
    """What a worker check talks to: starts runs of the subject, remembers them for teardown."""

    subject: WorkerSubject
    workdir: Path
    #: The tool timeout the worker is given (seconds).
    timeout: float
    tool_type: str = TOOL_TYPE
    _done: list[Any] = field(default_factory=list)
    _runs: list[WorkerRun] = field(default_factory=list)
    #: The run's sandbox mode and limits for a worker command.
    confinement: Confinement = field(default_factory=Confinement)

    def start(self, scenarios: Sequence[Scenario], *, lease_ttl_seconds: int = 90,
              tool_timeout: float | None = None) -> WorkerRun:
        run = WorkerRun(scenarios=scenarios, workdir=self.workdir,
                        tool_timeout=tool_timeout or self.timeout,
                        lease_ttl_seconds=lease_ttl_seconds, confinement=self.confinement)
        self._runs.append(run)
        if self.subject.kind == "command":
            run.start_command(self.subject.spec)
        else:
            run.start_coroutine(self.subject.load())
        return run

    @property
    def history(self) -> list[Any]:
        """The worker's requests so far, runs in the order they started (what a failure that
        is not the check's own, a fault, prints as its reproducer)."""
        return [*self._done, *(r for run in self._runs for r in run.requests_summary())]

    def close(self) -> None:
        for run in self._runs:
            run.stop()
            self._done.extend(run.requests_summary())
        self._runs.clear()

    @property
    def faults(self) -> list[str]:
        """What went wrong with the worker itself (it raised, or its command exited)."""
        return [f for r in self._runs for f in r.faults]


@dataclass(frozen=True)
class WorkerSubject:
    name: str
    spec: str
    kind: Literal["factory", "command"] = "factory"
    family: str = FAMILY
    tool_type: str = TOOL_TYPE

    @property
    def info(self) -> SubjectInfo:
        return SubjectInfo(name=self.name, family=self.family, tool_type=self.tool_type,
                           spec=self.spec if self.kind == "factory" else f"cmd:{self.spec}")

    def load(self) -> Any:
        return resolve_factory(self.spec)

    def open(self, workdir: Path, case: CaseSettings) -> WorkerSession:
        return WorkerSession(self, workdir, case.timeout, confinement=case.confinement)


def worker_subject(spec: str, *, name: str | None = None) -> WorkerSubject:
    """``--worker SPEC``: ``module:attr``, resolved now (a bundled worker's name is looked up by
    :func:`conformance.options.agent_subjects`)."""
    subject = WorkerSubject(name or spec, spec)
    subject.load()
    return subject


def worker_command_subject(command: str, *, name: str | None = None) -> WorkerSubject:
    """``--worker-cmd CMD``: any program serving the environment named in its environment."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"worker command {command!r} does not parse ({e}); quote it as for a "
                         "shell") from None
    if not words:
        raise UsageError("the worker command is empty; give the command that starts your worker")
    return WorkerSubject(name or f"cmd:{Path(words[0]).name}", command, "command")
