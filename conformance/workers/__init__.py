"""Custom-tool worker subjects (Managed Agents): the conformance toolset, runs of a worker against
the simulation, and the subject specs. The checks are in :mod:`conformance.checks.worker`."""

from .run import WorkerRun
from .subject import WorkerSession, WorkerSubject, worker_command_subject, worker_subject
from .toolset import DECLARATIONS, ECHO, FAIL, HANG, SERVED, SLEEP, UNSERVED

__all__ = ["DECLARATIONS", "ECHO", "FAIL", "HANG", "SERVED", "SLEEP", "UNSERVED", "WorkerRun",
           "WorkerSession", "WorkerSubject", "worker_command_subject", "worker_subject"]
