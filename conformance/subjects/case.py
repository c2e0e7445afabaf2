"""What one case needs of the run, as one value: :class:`CaseSettings`.

Every subject opens a case the same way, ``subject.open(workdir, case)`` (the runner's
``SubjectLike`` protocol): the command timeout, the case's budget, the start-up allowance and
the run's :class:`~conformance.subjects.launch.Confinement`. It is the part of the run's
:class:`~conformance.run.Run` a subject needs (``Run.case``), built once at an entry point;
nothing below reads the environment for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.subjects.launch import Confinement

#: The command timeout given to subjects unless the run says otherwise (seconds).
DEFAULT_TIMEOUT = 3.0
#: How long a subject may take to start and answer its first (readiness) call (seconds); not
#: counted as tool time.
DEFAULT_STARTUP_TIMEOUT = 30.0
#: A whole case (all calls of one check) stops after this many command timeouts.
CASE_BUDGET_TIMEOUTS = 40


def _default_confinement() -> Confinement:
    from conformance.subjects.launch import Confinement

    return Confinement()


@dataclass(frozen=True)
class CaseSettings:
    """The run's settings one case of a subject needs (defaults: the documented ones, never the
    environment's)."""

    #: The command timeout (seconds).
    timeout: float = DEFAULT_TIMEOUT
    #: Start-up and the first, harmless call (seconds each; not tool time).
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    #: The sandbox mode and limits of every process started for the case.
    confinement: Confinement = field(default_factory=_default_confinement)
    #: Factories' cases forked from one warm host per subject (``TOOLUSE_FORKSERVER=0``: no).
    fork_server: bool = True
    #: Command subjects started ahead of the cases that take them (``TOOLUSE_START_POOL=0``:
    #: no; :mod:`conformance.subjects.pool`).
    start_pool: bool = True

    @property
    def case_deadline(self) -> float:
        """The whole case's budget (seconds): :data:`CASE_BUDGET_TIMEOUTS` command timeouts."""
        return self.timeout * CASE_BUDGET_TIMEOUTS
