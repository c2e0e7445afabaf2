"""Agent-loop subjects: scenarios from the fixture corpus, runs against the replay engine, and the
subject specs. The checks are in :mod:`conformance.checks.loop`."""

from .run import LoopOutcome, run_loop
from .scenarios import BY_ID, SCENARIOS, LoopScenario
from .subject import LoopSession, LoopSubject, loop_subject

__all__ = ["BY_ID", "SCENARIOS", "LoopOutcome", "LoopScenario", "LoopSession", "LoopSubject",
           "loop_subject", "run_loop"]
