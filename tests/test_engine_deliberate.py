"""Issue 23: cassettes recording a deliberate violation (``expect_rule``) never capture a correct
client. A request that passes every rule gets the corrected request recorded after the
violation (the violation skipped), a clean conversation is preferred at the start of one, and
"expects this request to break rule" is said only of the conversation under way (or the one
cassette served)."""

from __future__ import annotations

from typing import Any

import anthropic
from _simkit import (
    B1,
    B2,
    R1,
    R2,
    WEATHER,
    assistant,
    body,
    cassette,
    error_of,
    exchange,
    post,
    text,
    tool_result,
    tool_use,
    two_turns,
    user,
)

import simulator
from conformance.loops import BY_ID, run_loop
from conformance.loops.scenarios import LoopScenario
from conformance.reference.loop import loop as reference_loop
from simulator.engine import Simulator
from simulator.routes import load_cassettes

# The deliberate mistake: text before the tool_result (messages.tool_result.before_other_content).
BAD = body([user("Weather in Paris?"), assistant(text("Checking."), tool_use("toolu_1")),
            user(text("here:"), tool_result("toolu_1", "sunny"))], tools=[WEATHER])
REFUSED = {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}
RULE = "messages.tool_result.before_other_content"


def clean(id: str = "tests/clean") -> Any:
    return two_turns(id)


def corrected(id: str = "tests/a_reject_corrected") -> Any:
    """A mistake, then the corrected request: a correct client can finish it."""
    return cassette(exchange(B1, R1), exchange(BAD, REFUSED, 400, expect_rule=RULE),
                    exchange(B2, R2), id=id)


def dead_end(id: str = "tests/a_reject_dead_end") -> Any:
    """A recording that ends in the mistake: a correct client cannot finish it."""
    return cassette(exchange(B1, R1), exchange(BAD, REFUSED, 400, expect_rule=RULE), id=id)


def converse(sim: Simulator) -> list[int]:
    return [sim(post(B1)).status, sim(post(B2)).status]


def test_a_correct_client_gets_the_corrected_request_after_a_recorded_mistake() -> None:
    sim = Simulator([clean(), corrected()])
    assert converse(sim) == [200, 200]  # the clean conversation
    assert converse(sim) == [200, 200]  # the mistake's recording, its mistake skipped
    assert sim.done and not sim.unmet and not sim.mismatches
    [skipped] = sim.skipped
    assert (skipped.cassette_id, skipped.exchange_index, skipped.expect_rule) == \
        ("tests/a_reject_corrected", 1, RULE)
    assert [(e.cassette_id, e.exchange_index) for e in sim.served] == [
        ("tests/clean", 0), ("tests/clean", 1),
        ("tests/a_reject_corrected", 0), ("tests/a_reject_corrected", 2)]


def test_a_client_committing_the_mistake_still_gets_the_recorded_refusal() -> None:
    sim = Simulator([clean(), corrected()])
    converse(sim)
    assert sim(post(B1)).status == 200
    status, _, message_ = error_of(sim(post(BAD)))
    assert status == 400 and "tool_result" in message_
    assert sim(post(B2)).status == 200
    assert sim.done and not sim.skipped and [v.expected for v in sim.violations] == [True]


def test_a_conversation_starts_where_a_correct_client_can_finish_it() -> None:
    """The dead end comes first in order; the cassettes a correct client can finish are chosen
    first (in order: the one with a corrected request, then the clean one); the dead end only
    when nothing else is left."""
    sim = Simulator([dead_end(), corrected(), clean()])
    for _ in range(2):
        assert converse(sim) == [200, 200]
    served = [e.cassette_id for e in sim.served]
    assert served == ["tests/a_reject_corrected"] * 2 + ["tests/clean"] * 2
    assert sim(post(B1)).status == 200  # the dead end's first exchange: the only one left
    status, _, msg = error_of(sim(post(B2)))
    # its conversation is under way: it did expect the mistake
    assert status == 400 and f"expects this request to break rule `{RULE}`" in msg


def test_a_recording_of_a_mistake_never_answers_the_start_of_a_correct_conversation() -> None:
    """Before issue 23, an ``expect_rule`` first exchange (matched on endpoint and model only)
    answered any request first in order, and a correct client's third run got "expects this
    request to break rule" once the clean recordings were used up."""
    first_mistake = cassette(exchange(BAD, REFUSED, 400, expect_rule=RULE), id="tests/a_first")
    sim = Simulator([first_mistake, clean()])
    assert converse(sim) == [200, 200]
    status, _, msg = error_of(sim(post(B1)))
    assert status == 400 and "expects this request to break rule" not in msg
    assert "requests recorded breaking a rule on purpose (`tests/a_first` (exchange 0: rule " \
           f"`{RULE}`))" in msg
    assert "--repeat" in msg and sim.unmet == []


def test_one_cassette_still_says_what_the_request_should_have_broken() -> None:
    sim = Simulator(cassette(exchange(BAD, REFUSED, 400, expect_rule=RULE), id="tests/only"))
    status, _, msg = error_of(sim(post(B1)))
    assert status == 400 and f"expects this request to break rule `{RULE}`" in msg


def test_a_conversation_run_again_is_told_it_was_served_already() -> None:
    sim = Simulator([clean()])
    converse(sim)
    sim2 = Simulator([clean(), cassette(exchange(B1, R1), exchange(BAD, R2), id="tests/other")])
    converse(sim2)
    status, _, msg = error_of(sim2(post(B2)))  # the clean conversation's second request, again
    assert status == 400 and "served already" in msg and "--repeat" in msg


def test_serve_family_three_runs_of_a_correct_client() -> None:
    """The issue's reproduction: the SDK-driven reference loop runs the deferred-result
    conversation three times against the whole ``mixed`` family (``tooluse serve mixed``); the
    third run used to get "expects this request to break rule
    `server_tool_use.pending.same_tools`"."""
    family = load_cassettes("mixed/code_execution_20250825")
    [target] = [c for c in family if c.id.endswith("/deferred_server_result")]
    params = dict(target.exchanges[0].request["body"])
    with simulator.mock(family) as api:
        client = anthropic.Anthropic(max_retries=0)
        for _ in range(3):
            reply = reference_loop(client, dict(params))
            assert reply.stop_reason == "end_turn"
        engine: Any = api.simulator
    assert not engine.unmet and not engine.mismatches and not engine.violations
    assert [(e.cassette_id.rsplit("/", 1)[1], e.expect_rule) for e in engine.skipped] == [
        ("reject_resume_without_server_tool", "server_tool_use.pending.same_tools")]


class InMemoryScenario(LoopScenario):
    def load(self) -> Any:
        return corrected("tests/loop_corrected")


def test_the_loop_harness_counts_a_skipped_mistake_as_not_driven() -> None:
    """A loop that does not commit the recorded mistake gets the corrected request, but the
    recording was not driven as recorded: the skipped exchange is reported unserved."""
    scenario = InMemoryScenario("loop.tests.skipped", "<memory>", "a mistake, then the correction",
                                BY_ID["loop.client_tools.one_per_turn"].source)
    outcome = run_loop(reference_loop, scenario)
    assert outcome.unserved == [1] and not outcome.mismatches and outcome.raised is None
