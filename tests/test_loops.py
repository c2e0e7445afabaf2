"""Agent-loop subjects: the reference loop and the SDK tool runner pass; each broken loop fails
under the simulator rule it breaks."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CATALOG, CheckFailure
from conformance.checks.loop import judge
from conformance.errors import UsageError
from conformance.loops import BY_ID, SCENARIOS, loop_subject, run_loop
from conformance.results import Outcome
from simulator.rules import RULES

BROKEN = sorted((Path(__file__).parent / "broken").glob("loop_*.py"))
LOOP_CHECKS = sorted([*(s.id for s in SCENARIOS), "loop.corpus.drives_every_conversation",
                      "loop.container.kept_on_continuation", "loop.ptc.caller_resent",
                      "loop.errors.retry_after_respected"])


def test_every_scenario_is_a_registered_check_on_a_corpus_cassette() -> None:
    for s in SCENARIOS:
        assert s.id in CATALOG and CATALOG[s.id].family == "loop"
        cassette = s.load()
        assert len(cassette.exchanges) > s.setup + 1 or s.faults


def test_reference_loop_passes_every_scenario() -> None:
    summary = runner.run([loop_subject("conformance.reference.loop:loop")], checks=["loop.*"],
                         jobs=2)
    outcomes = {r.check_id: (r.outcome, r.message) for r in summary.results}
    assert sorted(outcomes) == LOOP_CHECKS
    assert all(o is Outcome.PASS for o, _ in outcomes.values()), outcomes


def test_sdk_tool_runner_passes_the_scenarios_it_supports() -> None:
    summary = runner.run([loop_subject("conformance.reference.loop:sdk_tool_runner")],
                         checks=["loop.*"], jobs=2)
    outcomes = {r.check_id: r.outcome for r in summary.results}
    assert outcomes.pop("loop.container.expired") is Outcome.SKIP
    assert set(outcomes.values()) == {Outcome.PASS}, summary.results


def test_transient_errors_are_really_injected() -> None:
    from conformance.reference.loop import loop

    outcome = run_loop(loop, BY_ID["loop.errors.transient_retried"])
    judge(outcome)
    assert len(outcome.requests) == 4  # two exchanges, each refused once first


async def small_async_loop(client: Any, params: dict[str, Any]) -> Any:
    """A correct async loop for client tools (receives the async client)."""
    messages = list(params["messages"])
    base = {k: v for k, v in params.items() if k != "messages"}
    while True:
        message = await client.messages.create(**base, messages=messages)
        if message.stop_reason != "tool_use":
            return message
        content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
        messages += [{"role": "assistant", "content": content},
                     {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": b["id"], "content": "done"}
                         for b in content if b["type"] == "tool_use"]}]


def test_an_async_loop_gets_the_async_client() -> None:
    judge(run_loop(small_async_loop, BY_ID["loop.client_tools.several_per_turn"]))


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_each_broken_loop_fails_under_the_rule_it_breaks(path: Path) -> None:
    ns = runpy.run_path(str(path))
    check_id, rule_id = ns["BREAKS"]
    outcome = run_loop(ns["loop"], BY_ID[check_id])
    with pytest.raises(CheckFailure) as failure:
        judge(outcome)
    if rule_id is not None:
        assert rule_id in RULES
        assert failure.value.message.startswith(f"{rule_id}: ")
        assert isinstance(failure.value.received, dict) and "messages" in failure.value.received
    assert failure.value.reproducer


def test_broken_loops_cover_the_named_failures() -> None:
    rules = {runpy.run_path(str(p))["BREAKS"][1] for p in BROKEN}
    assert {"messages.tool_use.answered_once_in_next_message",
            "messages.tool_result.before_other_content", "ptc.container.required",
            "pause_turn.resend_assistant_content", "ptc.tool_result.text_content_only",
            "container.unknown_or_expired"} <= rules


def test_bad_loop_spec_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        loop_subject("conformance.reference.loop:no_such_loop")


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_a_broken_loop_fails_one_check_not_the_corpus_as_well(path: Path) -> None:
    """One defect, one failing check: the corpus check does not count again the conversations
    that show the defect a scenario check already reports (it names them in its note)."""
    check_id = runpy.run_path(str(path))["BREAKS"][0]
    summary = runner.run([loop_subject(f"{path}:loop")], checks=["loop.*"], jobs=2)
    failing = {r.check_id for r in summary.results if r.outcome is Outcome.FAIL}
    assert check_id in failing
    assert "loop.corpus.drives_every_conversation" not in failing, [
        r.message[:600] for r in summary.results if r.check_id.startswith("loop.corpus")]
