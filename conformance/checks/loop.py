"""Checks for agent loops: one per scenario of :mod:`conformance.loops.scenarios`.

A loop drives a recorded conversation against the replay engine, which judges every request by
the simulator's rules. A failure is reported under the violated rule's id (first in the message)
with the offending request as ``received``; requests the recording did not expect, a conversation
left unfinished, and an exception are failures too.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.loops.run import LoopOutcome
from conformance.loops.scenarios import SCENARIOS, LoopScenario
from conformance.loops.subject import FAMILY, TOOL_TYPE, LoopSession
from simulator.rules import RULES


def judge(outcome: LoopOutcome) -> None:
    """Raise the failure an outcome shows (rule violations first), or return."""
    if outcome.violations:
        rule_id, message, body = outcome.violations[0]
        rule = RULES.get(rule_id)
        more = f" (+{len(outcome.violations) - 1} more)" if len(outcome.violations) > 1 else ""
        raise CheckFailure(f"{rule_id}: {message}{more}", received=body,
                           documented=f"{rule.statement} [{rule.source}]" if rule else None,
                           reproducer=outcome.requests)
    if outcome.mismatches:
        message, body = outcome.mismatches[0]
        raise CheckFailure(f"the loop sent a request the conversation does not have: {message}",
                           received=body, reproducer=outcome.requests)
    if outcome.timed_out:
        raise CheckFailure("the loop did not finish the conversation before the deadline",
                           reproducer=outcome.requests)
    if outcome.raised:
        raise CheckFailure(f"the loop raised {outcome.raised}", reproducer=outcome.requests)
    if outcome.unserved:
        raise CheckFailure(f"the loop stopped before the conversation ended (exchanges "
                           f"{outcome.unserved} of the recording were never requested)",
                           reproducer=outcome.requests)


def _register(scenario: LoopScenario) -> Callable[[LoopSession], None]:
    def run_scenario(s: LoopSession) -> None:
        reason = s.unsupported(scenario.id)
        if reason:
            raise CheckSkipped(f"the loop declares this scenario unsupported: {reason}")
        judge(s.run(scenario.id))

    run_scenario.__name__ = scenario.id.replace(".", "_")
    run_scenario.__doc__ = f"{scenario.statement} (cassette {scenario.cassette})"
    return check(scenario.id, family=FAMILY, severity=Severity.MUST, applies_to=[TOOL_TYPE],
                 source=scenario.source, statement=scenario.statement)(run_scenario)


for _scenario in SCENARIOS:
    _register(_scenario)
