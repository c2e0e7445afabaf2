"""Closed sets and ranges the API enforces on every request (simulator/rules/fields.py): each
refusal in the live API's words, the values live traffic shows accepted pass, and a fixture
cassette that never recorded the field cannot serve such a request."""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest
from _simkit import B1, B2, assistant, error_of, post, text, tool_use, two_turns, user

from simulator.engine import Simulator
from simulator.rules import RULES, RuleContext, check_request
from simulator.rules.fields import BLOCK_TYPES_SENT, ROLES, TOOL_CHOICE_TYPES, request_fields
from simulator.schemas import BLOCK_TYPES, build_documents
from simulator.state import SimState

B: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 10,
                     "messages": [{"role": "user", "content": "hi"}]}
FIELDS = ("tool_choice.type_known", "messages.roles.known", "content.block_type_known",
          "sampling.temperature_range", "sampling.top_p_range", "request.known_fields")


def verdicts(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v.rule_id, v.message) for v in check_request(body, {}, SimState())]


def msgs(*ms: dict[str, Any]) -> dict[str, Any]:
    return {**B, "messages": list(ms)}


@pytest.mark.parametrize(("body", "rule_id", "message"), [
    # the tag-union family (dirac-run/dirac#57 for tools), the four documented types
    ({**B, "tool_choice": {"type": "sometimes"}}, "tool_choice.type_known",
     "tool_choice: Input tag 'sometimes' found using 'type' does not match any of the expected "
     "tags: 'auto', 'any', 'tool', 'none'"),
    ({**B, "tool_choice": {"type": "function", "function": {"name": "x"}}},
     "tool_choice.type_known",
     "tool_choice: Input tag 'function' found using 'type' does not match any of the expected "
     "tags: 'auto', 'any', 'tool', 'none'"),
    # langchain-ai/langchain#16563 ("ai"), NyarchLinux/NyarchAssistant#157 ("tool", 2026-07)
    (msgs(user("hi"), {"role": "bot", "content": "hello"}), "messages.roles.known",
     'messages: Unexpected role "bot". Allowed roles are "user" or "assistant"'),
    (msgs(user("hi"), {"role": "ai", "content": "hello"}), "messages.roles.known",
     'messages: Unexpected role "ai". Allowed roles are "user" or "assistant"'),
    (msgs(user("hi"), {"role": "tool", "content": "42"}), "messages.roles.known",
     'messages: Unexpected role "tool". Allowed roles are "user" or "assistant". For '
     "instructions on how to use tools, see "
     "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."),
    # AstrBotDevs/AstrBot#4444: the raw index of the message and of the block
    (msgs(user(text("a"), text("b"), {"type": "image_url", "image_url": {"url": "u"}})),
     "content.block_type_known",
     "messages.0.content.2: Input tag 'image_url' found using 'type' does not match any of the "
     f"expected tags: {', '.join(repr(t) for t in sorted(BLOCK_TYPES_SENT))}"),
    # anthropics/anthropic-sdk-python#893, odysseus-dev/odysseus#1615 (1.2 refused)
    ({**B, "temperature": 5}, "sampling.temperature_range", "temperature: range: 0..1"),
    ({**B, "temperature": 1.2}, "sampling.temperature_range", "temperature: range: 0..1"),
    ({**B, "temperature": -0.5}, "sampling.temperature_range", "temperature: range: 0..1"),
    # anthropics/anthropic-sdk-typescript#484
    ({**B, "top_p": 1.5}, "sampling.top_p_range", "top_p: range: 0..1"),
    ({**B, "top_p": -2}, "sampling.top_p_range", "top_p: range: 0..1"),
    # amrit110/oli#7
    ({**B, "response_format": {"type": "json_object"}}, "request.known_fields",
     "response_format: Extra inputs are not permitted"),
    ({**B, "frobnicate": True}, "request.known_fields",
     "frobnicate: Extra inputs are not permitted"),
])
def test_a_closed_set_is_refused_in_the_api_words(body: dict[str, Any], rule_id: str,
                                                  message: str) -> None:
    assert verdicts(body) == [(rule_id, message)]


@pytest.mark.parametrize("body", [
    {**B, "temperature": 0}, {**B, "temperature": 1}, {**B, "temperature": 1.0},
    {**B, "temperature": 0.7}, {**B, "top_p": 0}, {**B, "top_p": 1}, {**B, "top_p": 0.95},
    # -1 was the "unset" value older models took (range: -1 or 0..1): not judged
    {**B, "temperature": -1}, {**B, "top_p": -1},
    # top_k has no documented range
    {**B, "top_k": -1}, {**B, "top_k": 500},
    *({**B, "tool_choice": {"type": t, **({"name": "x"} if t == "tool" else {})},
       "tools": [{"name": "x", "input_schema": {"type": "object"}}]} for t in TOOL_CHOICE_TYPES),
    # a mid-conversation system message (SDK BetaSystemMessageParam; live pydai__075)
    msgs(user("hi"), {"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "x"}}]}),
    # beta-gated fields are known without their header (recordings drop headers)
    {**B, "context_management": {"edits": []}, "mcp_servers": [], "container": "container_1",
     "output_format": {"type": "json_schema", "schema": {"type": "object"}},
     "output_config": {"effort": "high"}, "cache_control": {"type": "ephemeral"}},
])
def test_what_the_api_accepts_passes(body: dict[str, Any]) -> None:
    assert [r for r, _ in verdicts(body) if r in FIELDS] == []


def test_other_problems_are_left_to_the_schema_rule() -> None:
    # a role that is not a string, a tag that is not a string, a temperature that is no number
    for body in (msgs({"role": 3, "content": "hi"}),
                 msgs(user({"type": 7, "text": "x"})),
                 {**B, "tool_choice": {"type": 1}},
                 {**B, "temperature": True}, {**B, "temperature": "hot"}):
        assert not [r for r, _ in verdicts(body) if r in FIELDS], body


def test_the_block_index_is_the_raw_one_not_the_combined_turn() -> None:
    # two user turns in a row are combined by the API for the conversation rules, but the
    # validator names the item as sent (a schema error)
    body = msgs(user("first"), user(text("second"), {"type": "input_text", "text": "x"}))
    (rule_id, message), = verdicts(body)
    assert rule_id == "content.block_type_known"
    assert message.startswith("messages.1.content.1: Input tag 'input_text' found using 'type'")


def test_every_field_the_strict_schema_and_the_sdk_know_is_known() -> None:
    from anthropic.types.beta.message_create_params import MessageCreateParamsBase
    strict = build_documents("strict")["messages"]["$defs"]["request"]["properties"]
    assert request_fields() == frozenset(strict)
    assert set(MessageCreateParamsBase.__annotations__) - request_fields() == set()
    ctx = RuleContext({k: None for k in strict}, {}, SimState())
    assert RULES["request.known_fields"].check(ctx) is None


def _tags(union: Any) -> list[str]:
    """The ``type`` tags of the SDK's TypedDict (or model) members of ``union``, in order."""
    out: list[str] = []
    for member in typing.get_args(union):
        ann = getattr(member, "__annotations__", {}).get("type")
        if ann is None:  # a nested union (Annotated[Union[...], discriminator])
            out += _tags(member)
            continue
        m = re.search(r"Literal\[['\"](\w+)['\"]\]", getattr(ann, "__forward_arg__", str(ann)))
        assert m, ann
        out.append(m.group(1))
    return out


def test_the_known_sets_cover_the_schemas_and_the_sdk() -> None:
    from anthropic.types import ToolChoiceParam
    from anthropic.types.beta import BetaContentBlockParam
    assert set(BLOCK_TYPES) <= BLOCK_TYPES_SENT
    sdk = set(_tags(BetaContentBlockParam))
    assert {"tool_addition", "fallback", "mcp_tool_listing"} <= sdk  # the walk reaches them
    assert sdk <= BLOCK_TYPES_SENT, sdk - BLOCK_TYPES_SENT
    assert tuple(_tags(ToolChoiceParam)) == TOOL_CHOICE_TYPES
    choice = build_documents("strict")["messages"]["$defs"]["tool_choice"]
    assert tuple(choice["properties"]["type"]["enum"]) == tuple(sorted(
        TOOL_CHOICE_TYPES, key=("auto", "any", "none", "tool").index))
    assert ROLES[:2] == ("user", "assistant")


@pytest.mark.parametrize(("change", "message"), [
    # the audit's two requests a cassette served 200: its matchers compare neither field
    ({"frobnicate": True}, "frobnicate: Extra inputs are not permitted"),
    ({"tool_choice": {"type": "sometimes"}},
     "tool_choice: Input tag 'sometimes' found using 'type' does not match any of the expected "
     "tags: 'auto', 'any', 'tool', 'none'"),
    ({"temperature": 5}, "temperature: range: 0..1"),
    ({"top_p": 1.5}, "top_p: range: 0..1"),
])
def test_a_cassette_that_never_recorded_the_field_does_not_serve_it(
        change: dict[str, Any], message: str) -> None:
    sim = Simulator(two_turns())
    assert error_of(sim(post({**B1, **change}))) == (400, "invalid_request_error", message)
    assert sim(post(B1)).status == 200  # the exchange is still there for the request as recorded


def test_a_resent_history_is_judged_as_a_fresh_one() -> None:
    # the engine judges what is new through the history's cached facts: same answer
    sim = Simulator(two_turns())
    assert sim(post(B1)).status == 200
    last = B2["messages"][2]
    bad = {**B2, "messages": [*B2["messages"][:2], {**last, "content": [
        *last["content"], {"type": "function_call_output"}]}]}
    expected = verdicts(bad)
    assert [r for r, _ in expected] == ["content.block_type_known"]
    assert error_of(sim(post(bad))) == (400, "invalid_request_error", expected[0][1])
    assert expected[0][1].startswith("messages.2.content.1: Input tag 'function_call_output'")
    role = {**B2, "messages": [*B2["messages"][:2], {"role": "function", "content": "sunny"}]}
    assert error_of(sim(post(role)))[2] == \
        'messages: Unexpected role "function". Allowed roles are "user" or "assistant"'
    assert sim(post(B2)).status == 200


def test_the_first_unknown_is_named_in_request_order() -> None:
    body = msgs(user("a"), assistant(tool_use("toolu_1"), {"type": "x_first"}),
                user({"type": "x_second"}))
    (_, message), = [v for v in verdicts(body) if v[0] == "content.block_type_known"]
    assert message.startswith("messages.1.content.1: Input tag 'x_first'")
    assert verdicts({**B, "zz": 1, "aa": 2}) == [("request.known_fields",
                                                  "zz: Extra inputs are not permitted")]
