"""loop.corpus.drives_every_conversation: a loop drives every drivable cassette of the corpus.

Which cassettes are drivable is read from their exchanges (never a list of ids); the reference
loop and the SDK tool runner pass; broken loops fail under the rule they break.
"""

from __future__ import annotations

import copy
import runpy
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.checks.loop import CORPUS_CHECK
from conformance.loops import corpus, loop_subject
from conformance.loops.run import run_loop
from conformance.reference.loop import loop as reference_loop
from conformance.reference.loop import sdk_tool_runner
from conformance.results import VERIFIED, Outcome
from simulator.cassette import iter_corpus, parse_cassette

BROKEN = Path(__file__).parent / "broken"
PLAN = corpus.plan()


def _cassette(exchanges: list[dict[str, Any]]) -> Any:
    return parse_cassette({"version": 1, "id": "t/t/t", "title": "t",
                           "source": {"document": "PROTOCOL.md", "section": "x"},
                           "exchanges": exchanges})


def _ex(status: int = 200, *, path: str = "/v1/messages", stop: str | None = "end_turn",
        expect_rule: str | None = None, messages: int = 1,
        headers: dict[str, str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "message", "stop_reason": stop} if status < 400 else \
        {"type": "error", "error": {"type": "x", "message": "x"}}
    ex: dict[str, Any] = {
        "request": {"method": "POST", "path": path, "headers": {}, "body": {
            "model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "q"}] * messages}},
        "response": {"status": status, "headers": dict(headers or {}), "body": body}}
    if expect_rule:
        ex["expect_rule"] = expect_rule
    return ex


# --- which cassettes are drivable --------------------------------------------------------------

def test_every_corpus_cassette_is_driven_or_excluded_with_a_reason() -> None:
    ids = [c.id for c in iter_corpus()]
    planned = [r.scenario.id for r in PLAN.runs] + [e.cassette for e in PLAN.excluded]
    assert sorted(planned) == sorted(ids)
    assert len(PLAN.runs) > 0.85 * len(ids)
    assert all(e.reason for e in PLAN.excluded)


def test_exclusions_follow_from_the_exchanges() -> None:
    by_id = {c.id: c for c in iter_corpus()}
    for ex in PLAN.excluded:
        c = by_id[ex.cassette]
        if c.family == "managed_agents":
            assert ex.reason.startswith("not a Messages conversation")
        elif all(e.expect_rule for e in c.exchanges):
            assert ex.reason.startswith("every request breaks a rule on purpose")
        else:  # an error the loop can only raise
            assert "can only raise" in ex.reason, ex
            last = [e for e in c.exchanges if not e.expect_rule][-1]
            assert last.response["status"] >= 400 or any(
                ev.get("event") == "error" for ev in last.response.get("events", []))
    # Conversations ending in a recorded success are all driven.
    driven = {r.scenario.id for r in PLAN.runs}
    for c in by_id.values():
        if c.family != "managed_agents" and all(e.response["status"] == 200 and "events" not in
                                                e.response for e in c.exchanges):
            assert c.id in driven, c.id


@pytest.mark.parametrize(("exchanges", "reason"), [
    ([_ex(path="/v1/sessions/s/events")], "not a Messages conversation"),
    ([_ex(400, expect_rule="tools.fixed_type_name")], "breaks a rule on purpose"),
    ([_ex(401)], "HTTP 401"),
    ([_ex(500, headers={"x-should-retry": "false"}), _ex()], "HTTP 500"),
    ([_ex(429)], "HTTP 429"),  # an error last: nothing follows the retry
])
def test_excluded_kinds(exchanges: list[dict[str, Any]], reason: str) -> None:
    assert reason in (corpus.exclusion(_cassette(exchanges)) or "")


def test_retried_errors_and_rejected_requests_around_a_conversation_stay_drivable() -> None:
    assert corpus.exclusion(_cassette([_ex(429, headers={"retry-after": "0"}), _ex()])) is None
    assert corpus.exclusion(_cassette([_ex(529), _ex()])) is None
    c = _cassette([_ex(stop="tool_use"), _ex(400, expect_rule="messages.roles.alternate"),
                   _ex(messages=3)])
    assert corpus.exclusion(c) is None
    run = corpus.corpus_run(c)
    assert run.scenario.dropped == (1,) and run.kept == (0, 2) and not run.open_end
    assert run.scenario.then == ()


def test_a_user_turn_after_end_turn_is_a_new_loop_call_and_a_refused_tail_an_open_end() -> None:
    run = corpus.corpus_run(_cassette([_ex(), _ex(stop="tool_use", messages=3),
                                       _ex(400, expect_rule="messages.roles.alternate")]))
    assert run.scenario.then == (1,) and run.open_end
    ended = corpus.corpus_run(_cassette([_ex(), _ex(400, expect_rule="messages.roles.alternate")]))
    assert not ended.open_end  # the turn had ended: a correct loop sends nothing more


# --- subjects ----------------------------------------------------------------------------------

def _verdict(loop: Any, runs: Any = None, **options: Any) -> corpus.CorpusVerdict:
    plan = PLAN if runs is None else corpus.CorpusPlan(tuple(runs), PLAN.excluded)
    return corpus.verdict(plan, corpus.run_corpus(loop, plan.runs, **options))


def test_reference_loop_drives_every_conversation() -> None:
    verdict = _verdict(reference_loop)
    assert verdict.failures == () and verdict.not_run == (), verdict.message()


def test_sdk_tool_runner_drives_every_conversation() -> None:
    verdict = _verdict(sdk_tool_runner)
    assert verdict.failures == () and verdict.not_run == (), verdict.message()


def test_a_defect_a_scenario_check_reports_is_not_counted_again() -> None:
    """One defect, one failing check: dropping tool results fails
    loop.client_tools.several_per_turn; the corpus check names the conversations that show it
    and does not fail on them."""
    summary = runner.run([loop_subject(f"{BROKEN / 'loop_drops_tool_result.py'}:loop")],
                         checks=[CORPUS_CHECK])
    [result] = summary.results
    assert result.outcome is Outcome.SKIP, result.message
    assert "loop.client_tools.several_per_turn" in result.message
    assert "not counted again" in result.message


def no_extra_headers(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    """Broken: drops the anthropic-beta header (no scenario check covers it)."""
    return reference_loop(client, {k: v for k, v in params.items() if k != "extra_headers"},
                          run_tool)


def test_the_check_fails_a_broken_loop_under_the_rule_it_breaks() -> None:
    summary = runner.run([loop_subject(f"{__file__}:no_extra_headers")], checks=["loop.*"])
    outcomes = {r.check_id: r for r in summary.results}
    result = outcomes[CORPUS_CHECK]
    assert result.outcome is Outcome.FAIL
    rule = "beta.legacy_header_required"
    assert result.message.startswith(f"{rule}: the loop failed ")
    assert "bash/bash_20241022/" in result.message
    assert result.reproducer and all(r["request"]["messages"] for r in result.reproducer)
    # The cassettes the reproducer names were driven again on a fresh loop and failed again.
    assert result.reproduced == VERIFIED, result.message
    assert {r.check_id for r in summary.results if r.outcome is Outcome.FAIL} == {CORPUS_CHECK}


@pytest.mark.parametrize(("name", "where", "rule"), [
    ("loop_text_before_results", "bash/", "messages.tool_result.before_other_content"),
    ("loop_pause_not_resent", "pause_turn", "pause_turn.resend_assistant_content"),
    ("loop_forgets_container", "ptc/", "ptc.container.required"),
    ("loop_image_result_for_ptc", "ptc/", "ptc.tool_result.text_content_only"),
])
def test_broken_loops_fail_under_their_rule(name: str, where: str, rule: str) -> None:
    ns = runpy.run_path(str(BROKEN / f"{name}.py"))
    runs = [r for r in PLAN.runs if where in r.scenario.id]  # the part of the corpus it breaks
    verdict = _verdict(ns["loop"], runs)
    assert verdict.rules[0] == rule, verdict.message()
    assert verdict.message().startswith(f"{rule}: the loop failed ")


def test_a_loop_without_retries_fails_exactly_the_retried_error_cassettes() -> None:
    ns = runpy.run_path(str(BROKEN / "loop_no_retry.py"))
    runs = [r for r in PLAN.runs if r.scenario.id.startswith("api_errors/")]
    verdict = _verdict(ns["loop"], runs)
    retried = {r.scenario.id for r in runs if any(
        ex.response["status"] >= 400 for ex in r.scenario.load().exchanges)}
    assert retried and {cid for cid, _, _, _ in verdict.failures} == retried
    assert all("the loop raised" in found[0] for _, found, _, _ in verdict.failures)


def test_a_loop_dropping_the_beta_header_fails_the_legacy_tool_cassettes() -> None:
    runs = [r for r in PLAN.runs if "bash_20241022" in r.scenario.id]
    verdict = _verdict(no_extra_headers, runs)
    assert verdict.rules == ("beta.legacy_header_required",)
    assert len(verdict.failures) == len(runs)


def test_the_expired_container_recovery_is_the_scenario_checks_job() -> None:
    # The corpus drops the refused request: a loop that never recovers still drives every
    # conversation; `loop.container.expired` is what catches it.
    ns = runpy.run_path(str(BROKEN / "loop_keeps_expired_container.py"))
    runs = [r for r in PLAN.runs if "container_expired" in r.scenario.id]
    assert runs and _verdict(ns["loop"], runs).failures == ()


# --- open ends, hangs, the message ---------------------------------------------------------------

def _run(cassette_id: str) -> corpus.CorpusRun:
    return next(r for r in PLAN.runs if r.scenario.id == cassette_id)


def test_an_open_end_is_judged_by_the_rules_then_may_raise() -> None:
    run = _run("bash/bash_20250124/reject_unanswered_tool_use")
    assert run.open_end
    outcome = run_loop(reference_loop, run.scenario)
    assert len(outcome.exhausted) == 1 and outcome.raised  # the 400 past the recording
    assert corpus.problems(run, outcome) == []

    def one_request(client: Any, params: dict[str, Any]) -> Any:
        return client.messages.create(**params)

    stopped = corpus.problems(run, run_loop(one_request, run.scenario))
    assert stopped and stopped[0].startswith("stopped early")


def test_a_hanging_loop_costs_a_few_deadlines_not_one_per_cassette() -> None:
    release = threading.Event()

    def hangs(client: Any, params: dict[str, Any]) -> None:
        release.wait(30)

    try:
        outcomes = corpus.run_corpus(hangs, PLAN.runs[:4], jobs=1, deadline=0.2, max_timeouts=2)
    finally:
        release.set()
    assert [o is None for o in outcomes] == [False, False, True, True]
    assert all(o.timed_out for o in outcomes[:2] if o is not None)


def test_the_message_shows_the_first_failures_then_a_count() -> None:
    failure: tuple[str, tuple[str, ...], Any, list[Any]] = ("x.y", ("messages.roles.alternate: boom " + "z" * 400,), {"messages": []}, [])
    verdict = corpus.CorpusVerdict(10, 2, tuple(
        (f"a/b/c{i}", *copy.deepcopy(failure[1:])) for i in range(7)), (),
        ("messages.roles.alternate",))
    message = verdict.message(shown=3)
    lines = message.splitlines()
    assert lines[0].startswith("messages.roles.alternate: the loop failed 7 of 10")
    assert [line.split(":")[0] for line in lines[1:4]] == ["- a/b/c0", "- a/b/c1", "- a/b/c2"]
    assert lines[4].startswith("(+4 more failing cassettes: a/b/c3")
    assert all(len(line) < 400 for line in lines[1:4])
    assert len(verdict.reproducer(shown=3)) == 3


# --- declared kinds --------------------------------------------------------------------------------

def no_streaming(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    if params.get("stream"):
        raise RuntimeError("this loop does not stream")
    return reference_loop(client, params, run_tool)


no_streaming.tooluse_unsupported = {  # type: ignore[attr-defined]
    f"{CORPUS_CHECK}:streamed": "this loop does not stream"}


def test_declared_kinds_are_not_run_and_the_check_says_so(tmp_path: Path) -> None:
    from conformance.catalog import CATALOG, CheckSkipped
    from conformance.loops.subject import LoopSession, LoopSubject

    class Subject(LoopSubject):
        def load(self) -> Any:
            return no_streaming

    streamed = sum("streamed" in r.kinds for r in PLAN.runs)
    assert streamed == sum(any(ex.request["body"].get("stream") for ex in r.scenario.load().exchanges)
                           for r in PLAN.runs) > 0
    with pytest.raises(CheckSkipped) as skipped:
        CATALOG[CORPUS_CHECK].func(LoopSession(Subject("no-streaming", "x:y"), tmp_path, 1.0))
    message = str(skipped.value)
    assert f"{len(PLAN.runs) - streamed} corpus conversations driven" in message
    assert f"{streamed} not run" in message and "this loop does not stream" in message
