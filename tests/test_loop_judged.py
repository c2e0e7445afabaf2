"""Loop checks judge only what they observed (issue 37): a request a matcher refused leaves the
scenario not judged (SKIP, with the one-line difference), never a FAIL of the behaviour the
check is about; a fault scenario says which of its faults were served before judging the loop's
answer; a loop that formats its tools as the API treats alike passes."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CheckFailure, CheckSkipped
from conformance.checks.loop import judge
from conformance.loops import BY_ID, loop_subject, run_loop
from conformance.results import Outcome

HERE = Path(__file__).parent
DESCRIBED = HERE / "conformant" / "loop_described_properties.py"
NOT_JUDGED = "not judged: request 0 does not match the recording: tools["


def _outcomes(spec: str, checks: list[str], matching: str | None = None
              ) -> dict[str, tuple[Outcome, str]]:
    summary = runner.run([loop_subject(spec, matching=matching)], checks=checks, jobs=2)
    return {r.check_id: (r.outcome, r.message or "") for r in summary.results}


def test_a_check_whose_scenario_a_matcher_refused_is_skip_with_the_difference() -> None:
    """Under the exact set the described tools do not match the recording: nothing is judged,
    and the message names the first differing path, whole."""
    outcomes = _outcomes(f"{DESCRIBED}:loop", ["loop.client_tools.one_per_turn",
                                               "loop.ptc.pause_resume", "loop.ptc.caller_resent",
                                               "loop.errors.*"], matching="exact")
    assert {o for o, _ in outcomes.values()} == {Outcome.SKIP}, outcomes
    for check_id, (_, message) in outcomes.items():
        assert NOT_JUDGED in message, (check_id, message)
        assert ".input_schema.properties." in message and ".description: recorded" in message
        assert 'received "Property ' in message, message
    # the fault scenarios say their faults were never served, not that the loop did not retry
    transient = outcomes["loop.errors.transient_retried"][1]
    assert "429 rate_limit_error planned at exchange 0 not served" in transient, transient
    retry_after = outcomes["loop.errors.retry_after_respected"][1]
    assert "sent nothing after" not in retry_after and "no 429 was served" in retry_after


def test_a_fault_never_served_is_not_judged() -> None:
    def silent(client: Any, params: dict[str, Any]) -> Any:
        raise RuntimeError("gave up before sending anything")

    outcome = run_loop(silent, BY_ID["loop.errors.transient_retried"])
    assert outcome.faults == []
    with pytest.raises(CheckSkipped) as skipped:
        judge(outcome)
    assert "never served" in str(skipped.value), skipped.value


def test_a_fault_served_then_mishandled_says_which_fault() -> None:
    ns = runpy.run_path(str(HERE / "broken" / "loop_no_retry.py"))
    outcome = run_loop(ns["loop"], BY_ID["loop.errors.transient_retried"])
    assert [(f.request, f.exchange, f.kind) for f in outcome.faults] == [(0, 0, "rate_limit")]
    with pytest.raises(CheckFailure) as failure:
        judge(outcome)
    assert failure.value.message.startswith("faults: 429 rate_limit_error served to request 0; "
                                            "529 overloaded_error planned at exchange 1 not "
                                            "served. Then the loop raised"), failure.value.message


@pytest.mark.parametrize("name", ["loop", "loop_blank"])
def test_a_loop_describing_every_property_passes_every_scenario(name: str) -> None:
    """``"Property <name>"`` or ``""`` on every property: the API answers alike (an annotation
    keyword: simulator.matchers' API equivalence), so every loop check passes as it does for the
    reference loop, the corpus included."""
    outcomes = _outcomes(f"{DESCRIBED}:{name}", ["loop.*"])
    assert {o for o, _ in outcomes.values()} == {Outcome.PASS}, {
        c: m[:300] for c, (o, m) in outcomes.items() if o is not Outcome.PASS}
