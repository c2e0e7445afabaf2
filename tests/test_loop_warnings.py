"""The loop warnings (conformance/checks/loop_warnings.py): each broken loop fails its warning
and nothing else; correct and unusual-but-conformant loops pass them; a defect a MUST check
reports already leaves the warning SKIP."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.checks.loop_warnings import CALLER_CHECK, CONTAINER_CHECK, RETRY_CHECK
from conformance.loops import SCENARIOS, loop_subject
from conformance.loops.run import LoopOutcome, Sent
from conformance.loops.scenarios import RETRY_AFTER
from conformance.loops.warnings import early_retries
from conformance.results import Outcome

HERE = Path(__file__).parent
WARNINGS = [CONTAINER_CHECK, CALLER_CHECK, RETRY_CHECK]
BROKEN = sorted((HERE / "broken").glob("loopwarn_*.py"))
CHECKS = [s.id for s in SCENARIOS] + WARNINGS


def _outcomes(spec: str, checks: list[str]) -> dict[str, tuple[Outcome, str]]:
    summary = runner.run([loop_subject(spec)], checks=checks, jobs=2)
    return {r.check_id: (r.outcome, r.message or "") for r in summary.results}


def test_warnings_are_should_in_the_loop_family_with_a_source() -> None:
    for check_id in WARNINGS:
        c = CATALOG[check_id]
        assert c.family == "loop" and c.severity is Severity.SHOULD and c.source
        assert "MUST" in (c.func.__doc__ or "")  # says what would make it one
    assert {p.stem for p in BROKEN} and all(runpy.run_path(str(p))["WARNS"] in WARNINGS
                                           for p in BROKEN)
    # a lost code execution caller is refused by messages.resent_turn.unchanged (issue 37):
    # tests/broken/loop_strips_caller.py fails the MUST check, and the warning SKIPs
    assert {runpy.run_path(str(p))["WARNS"] for p in BROKEN} == set(WARNINGS) - {CALLER_CHECK}


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_a_broken_loop_fails_its_warning_and_nothing_else(path: Path) -> None:
    warns = runpy.run_path(str(path))["WARNS"]
    outcomes = _outcomes(f"{path}:loop", CHECKS)
    failing = {c for c, (o, _) in outcomes.items() if o is Outcome.FAIL}
    assert failing == {warns}, outcomes


@pytest.mark.parametrize("spec", ["conformance.reference.loop:loop",
                                  f"{HERE / 'conformant' / 'loopwarn_own_retries.py'}:loop"])
def test_correct_loops_pass_every_warning(spec: str) -> None:
    outcomes = _outcomes(spec, WARNINGS)
    assert {o for o, _ in outcomes.values()} == {Outcome.PASS}, outcomes


def test_a_dropped_container_the_api_refuses_is_the_must_check_only() -> None:
    """loop_forgets_container never sends the container back: ptc.container.required fails
    loop.ptc.pause_resume; the same drop on a pause_turn resend is not failed again."""
    outcomes = _outcomes(f"{HERE / 'broken' / 'loop_forgets_container.py'}:loop",
                         ["loop.ptc.pause_resume", CONTAINER_CHECK])
    assert outcomes["loop.ptc.pause_resume"][0] is Outcome.FAIL
    outcome, message = outcomes[CONTAINER_CHECK]
    assert outcome is Outcome.SKIP and "ptc.container.required" in message, message


def test_a_lost_caller_the_api_refuses_is_the_must_check_only() -> None:
    outcomes = _outcomes(f"{HERE / 'broken' / 'loop_strips_caller.py'}:loop",
                         ["loop.ptc.pause_resume", CALLER_CHECK])
    assert outcomes["loop.ptc.pause_resume"][0] is Outcome.FAIL
    outcome, message = outcomes[CALLER_CHECK]
    assert outcome is Outcome.SKIP and "messages.resent_turn.unchanged" in message, message


def test_a_loop_that_never_retries_is_the_transient_check_only() -> None:
    outcomes = _outcomes(f"{HERE / 'broken' / 'loop_no_retry.py'}:loop",
                         ["loop.errors.transient_retried", RETRY_CHECK])
    assert outcomes["loop.errors.transient_retried"][0] is Outcome.FAIL
    assert outcomes[RETRY_CHECK][0] is Outcome.SKIP, outcomes


def _retried(after: float, wait: str = "1") -> LoopOutcome:
    outcome = LoopOutcome(RETRY_AFTER)
    outcome.sent = [Sent({}, 10.0, 10.1, 429, wait), Sent({}, 10.1 + after, 10.2 + after, 200)]
    return outcome


def test_early_is_measured_from_the_answer_with_timer_slack() -> None:
    assert early_retries(_retried(0.5))
    assert not early_retries(_retried(0.97))
    assert not early_retries(_retried(30.0))
    assert not early_retries(_retried(0.0, wait="not a number"))
