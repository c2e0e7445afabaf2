"""Property tests of the pairing rules: generated well-formed conversations break no rule, and
each mutation a faulty agent loop makes is caught by the rule that names it."""

from __future__ import annotations

import copy
from typing import Any

from _simkit import WEATHER, assistant, body, text, tool_result, tool_use, user
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.rules import check_request
from simulator.state import SimState


@st.composite
def conversations(draw: Any) -> dict[str, Any]:
    """user, then turns of (assistant with 0-3 tool_use, user answering all of them, results
    first, in any order, optionally followed by text)."""
    msgs: list[dict[str, Any]] = [user("Go.")]
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, 3))
        ids = [f"toolu_{n + i:02d}" for i in range(k)]
        n += k
        msgs.append(assistant(text("Working."), *[tool_use(i) for i in ids]))
        results = [tool_result(i, draw(st.sampled_from(["ok", [text("ok")], ""]))) for i in
                   draw(st.permutations(ids))]
        trailer = [text("Continue.")] if draw(st.booleans()) or not ids else []
        msgs.append(user(*results, *trailer))
    return body(msgs, tools=[WEATHER])


def rule_ids(b: dict[str, Any]) -> list[str]:
    return [v.rule_id for v in check_request(b, {}, SimState())]


def answering_turns(b: dict[str, Any]) -> list[int]:
    return [i for i, m in enumerate(b["messages"]) if m["role"] == "user" and isinstance(
        m["content"], list) and any(x["type"] == "tool_result" for x in m["content"])]


@settings(max_examples=40, deadline=None)
@given(conversations())
def test_well_formed_conversations_break_no_rule(b: dict[str, Any]) -> None:
    assert rule_ids(b) == []


@settings(max_examples=40, deadline=None)
@given(conversations(), st.data())
def test_each_mutation_is_caught_by_its_rule(b: dict[str, Any], data: Any) -> None:
    turns = answering_turns(b)
    if not turns:
        return
    i = data.draw(st.sampled_from(turns))
    results = [x for x in b["messages"][i]["content"] if x["type"] == "tool_result"]
    mutation = data.draw(st.sampled_from(["drop", "duplicate", "text_first", "unknown_id"]))
    bad = copy.deepcopy(b)
    content = bad["messages"][i]["content"]
    if mutation == "drop":
        content.remove(next(x for x in content if x == results[-1]))
        expected = "messages.tool_use.answered_once_in_next_message"
    elif mutation == "duplicate":
        content.insert(len(results), copy.deepcopy(results[0]))
        expected = "messages.tool_use.answered_once_in_next_message"
    elif mutation == "text_first":
        content.insert(0, text("Here are the results:"))
        expected = "messages.tool_result.before_other_content"
    else:
        content[0] = tool_result("toolu_99")
        expected = "messages.tool_result.answers_previous_tool_use"
    assert expected in rule_ids(bad), (mutation, bad["messages"][i])
