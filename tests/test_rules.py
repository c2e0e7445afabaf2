"""Every rule: a request breaking it gets the rule's error (status, type, exact message) through
the engine, and a correct request passes. A completeness test keeps the table and the registry in
step."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from _simkit import (
    MODEL,
    PTC_CE,
    QUERY_DB,
    WEATHER,
    assistant,
    body,
    cassette,
    error_of,
    exchange,
    message,
    post,
    text,
    tool_result,
    tool_use,
    user,
)

from simulator.engine import Simulator
from simulator.rules import ALL_RULES, RULES
from simulator.sources import Source

CALLER = {"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}
SRV = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
       "input": {"code": "await query_database({'sql': 'x'})"}}
PTC_TOOLS = [PTC_CE, QUERY_DB]
PTC_PAUSE = assistant(text("Querying."), SRV, tool_use("toolu_p", "query_database", {"sql": "x"},
                                                       caller=CALLER))
CONTAINER = {"id": "container_1", "expires_at": "2026-01-20T13:00:00Z"}
RECURSIVE = {"type": "object", "$defs": {"node": {"type": "object", "properties": {
    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
    "properties": {"root": {"$ref": "#/$defs/node"}}}
PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
TOOL_USE_MSG = ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
                "after: {}. Each `tool_use` block must have a corresponding `tool_result` block in "
                "the next message.")
PAUSED = [text("Working."), {"type": "server_tool_use", "id": "srvtoolu_p", "name": "bash_code_execution",
                              "input": {"command": "ls"}}]


def ptc_reply(*blocks: Any, container: Any = "container_1") -> dict[str, Any]:
    extra = {"container": container} if container else {}
    return body([user("Top customers?"), PTC_PAUSE, user(*blocks)], tools=PTC_TOOLS, **extra)


@dataclass
class Case:
    bad: dict[str, Any]
    good: dict[str, Any]
    message: str | re.Pattern[str]
    bad_headers: dict[str, str] = field(default_factory=dict)
    good_headers: dict[str, str] = field(default_factory=dict)
    #: Exchanges served first (request body, response message).
    prelude: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)


FILE_DOC = {"type": "document", "source": {"type": "file", "file_id": "file_011CYiV4psfMwLCihcy8Ba6m"}}
HAIKU = "claude-haiku-4-5"

CASES: dict[str, Case] = {
    # Rules of simulator/rules/request.py: messages verbatim from live captures (real_traffic).
    "model.known": Case(
        body([user("hi")], model="claude-sonet-4-5"), body([user("hi")], model="claude-sonnet-4-5"),
        "model: claude-sonet-4-5"),
    # Retired on 2025-10-22: refused by the simulator's clock (the system clock here).
    "model.not_retired": Case(
        body([user("hi")], model="claude-3-5-sonnet-latest"),
        body([user("hi")], model="claude-sonnet-4-5"), "model: claude-3-5-sonnet-latest"),
    "container.param_is_string": Case(
        body([user("hi")], container={"id": "container_1"}),
        body([user("hi")], container={"id": "container_1"}),
        "container: Input should be a valid string",
        good_headers={"anthropic-beta": "skills-2025-10-02"}),
    "effort.supported_level": Case(
        body([user("hi")], output_config={"effort": "xhigh"}),
        body([user("hi")], output_config={"effort": "max"}),
        "This model does not support effort level 'xhigh'. Supported levels: high, low, max, "
        "medium."),
    "thinking.budget_below_max_tokens": Case(
        body([user("hi")], thinking={"type": "enabled", "budget_tokens": 1024}),
        body([user("hi")], thinking={"type": "enabled", "budget_tokens": 1023}),
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
        "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        "#max-tokens-and-context-window-size"),
    "content.file_source_needs_files_beta": Case(
        body([user(text("Summarise."), FILE_DOC)]), body([user(text("Summarise."), FILE_DOC)]),
        "messages.0.content.1.document.source: Input tag 'file' found using 'type' does not match "
        "any of the expected tags: 'base64', 'content', 'text', 'url'",
        good_headers={"anthropic-beta": "files-api-2025-04-14"}),
    "request.prompt_within_context_window": Case(
        body([user("x" * 800_100)], model=HAIKU), body([user("x" * 700_000)], model=HAIKU),
        re.compile(r"^prompt is too long: 2000\d\d tokens > 200000 maximum$")),
    # Closed sets and ranges (simulator/rules/fields.py): the live API's wording from public
    # reports of live answers, cited in the module.
    "tool_choice.type_known": Case(
        body([user("hi")], tools=[WEATHER], tool_choice={"type": "sometimes"}),
        body([user("hi")], tools=[WEATHER], tool_choice={"type": "none"}),
        "tool_choice: Input tag 'sometimes' found using 'type' does not match any of the expected "
        "tags: 'auto', 'any', 'tool', 'none'"),
    "messages.roles.known": Case(
        body([user("hi"), {"role": "bot", "content": "hello"}, user("again")]),
        body([user("hi"), {"role": "system", "content": "Answer in French."}]),
        'messages: Unexpected role "bot". Allowed roles are "user" or "assistant"'),
    "content.block_type_known": Case(
        body([user(text("What is this?"), {"type": "image_url", "image_url": {"url": "x"}})]),
        body([user(text("Summarise."), {"type": "search_result", "source": "https://e.org",
                                        "title": "E", "content": [text("e")]})]),
        re.compile(r"^messages\.0\.content\.1: Input tag 'image_url' found using 'type' does "
                   r"not match any of the expected tags: 'advisor_tool_result', .*'document', .*"
                   r"'image', .*'web_search_tool_result'$")),
    "sampling.temperature_range": Case(
        body([user("hi")], temperature=1.2), body([user("hi")], temperature=1),
        "temperature: range: 0..1"),
    "sampling.top_p_range": Case(
        body([user("hi")], top_p=1.5), body([user("hi")], top_p=0.9), "top_p: range: 0..1"),
    "request.known_fields": Case(
        body([user("hi")], response_format={"type": "json_object"}),
        body([user("hi")], output_format={"type": "json_schema", "schema": {"type": "object"}},
             context_management={"edits": []}),
        "response_format: Extra inputs are not permitted"),
    "request.schema": Case(
        {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user"}]},
        body([user("hi")]), "messages.0.content: Field required"),
    "beta.header_known": Case(
        body([user("hi")]), body([user("hi")]),
        "Unexpected value(s) `invalid-beta-name` for the `anthropic-beta` header. Please consult "
        "our documentation at platform.claude.com/docs or try again without the header.",
        bad_headers={"anthropic-beta": "invalid-beta-name"},
        good_headers={"anthropic-beta": "files-api-2025-04-14"}),
    "tools.fixed_type_name": Case(
        body([user("hi")], tools=[{"type": "bash_20250124", "name": "shell"}]),
        body([user("hi")], tools=[{"type": "bash_20250124", "name": "bash"}]),
        "tools.0.bash_20250124.name: Input should be 'bash'"),
    "beta.legacy_header_required": Case(
        body([user("hi")], tools=[{"type": "code_execution_20250522", "name": "code_execution"}]),
        body([user("hi")], tools=[{"type": "code_execution_20250522", "name": "code_execution"}]),
        "tools.0.code_execution_20250522: `code_execution_20250522` requires the beta header "
        "`anthropic-beta: code-execution-2025-05-22`. Add the header, or use "
        "`code_execution_20260521`.",
        good_headers={"anthropic-beta": "code-execution-2025-05-22"}),
    "tools.model_compatibility": Case(
        body([user("hi")], tools=[{"type": "text_editor_20250124", "name": "str_replace_editor"}]),
        body([user("hi")], tools=[{"type": "text_editor_20250728",
                                   "name": "str_replace_based_edit_tool"}]),
        "tools.0.text_editor_20250124: `text_editor_20250124` is not supported on model "
        "`claude-opus-4-6`. Use `text_editor_20250728`."),
    "tools.web_tools_need_code_execution_20260120": Case(
        body([user("hi")], tools=[{"type": "code_execution_20250825", "name": "code_execution"},
                                  {"type": "web_search_20260209", "name": "web_search"}]),
        body([user("hi")], tools=[PTC_CE, {"type": "web_search_20260209", "name": "web_search"}]),
        "tools.0.code_execution_20250825: `web_search_20260209` requires code_execution_20260120 "
        "or later, but the request has `code_execution_20250825`. Use code_execution_20260120 or "
        "later, or remove the code_execution tool."),
    "ptc.strict_unsupported": Case(
        body([user("hi")], tools=[PTC_CE, {**QUERY_DB, "strict": True}]),
        body([user("hi")], tools=[PTC_CE, QUERY_DB, {**WEATHER, "strict": True}]),
        "tools.1.custom.strict: `strict: true` is not supported with programmatic tool calling "
        "(`allowed_callers` includes `code_execution_20260120`). Remove `strict` or the code "
        "execution caller."),
    "ptc.disable_parallel_tool_use_unsupported": Case(
        body([user("hi")], tools=PTC_TOOLS,
             tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
        body([user("hi")], tools=[WEATHER],
             tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
        "tool_choice.disable_parallel_tool_use: `disable_parallel_tool_use: true` is not supported "
        "with programmatic tool calling (tool `query_database` has `allowed_callers` "
        "`code_execution_20260120`)."),
    "ptc.recursive_ref": Case(
        body([user("hi")], tools=[PTC_CE, {**QUERY_DB, "input_schema": RECURSIVE}]),
        body([user("hi")], tools=[PTC_CE, {**WEATHER, "input_schema": RECURSIVE}]),
        "tools.1.custom.input_schema: Circular $ref detected (#/$defs/node): a tool whose "
        "`allowed_callers` includes `code_execution_20260120` cannot use a self-referencing "
        "schema. Unroll the recursion to a fixed depth or keep the tool direct-only."),
    "ptc.mcp_not_code_callable": Case(
        body([user("hi")], tools=[PTC_CE, {"type": "mcp_toolset", "mcp_server_name": "crm",
                                           "default_config": {"allowed_callers":
                                                              ["code_execution_20260120"]}}]),
        body([user("hi")], tools=[PTC_CE, {"type": "mcp_toolset", "mcp_server_name": "crm",
                                           "default_config": {"allowed_callers": ["direct"]}}]),
        "tools.1.mcp_toolset: tools from an MCP connector cannot be called programmatically; "
        "`allowed_callers` must not include `code_execution_20260120`. Expose the capability as "
        "a custom tool instead."),
    "tool_choice.requires_direct_caller": Case(
        body([user("hi")], tools=PTC_TOOLS, tool_choice={"type": "tool", "name": "query_database"}),
        body([user("hi")], tools=[*PTC_TOOLS, WEATHER],
             tool_choice={"type": "tool", "name": "get_weather"}),
        "tool_choice.name: tool `query_database` cannot be forced with `tool_choice` because its "
        "`allowed_callers` does not include \"direct\". Add \"direct\" to `allowed_callers` or "
        "use tool_choice {\"type\": \"auto\"}."),
    "messages.roles.alternate": Case(
        body([user("hi"), user("again")]), body([user("hi"), assistant(text("yes")), user("again")]),
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" '
        "roles in a row"),
    "messages.tool_result.answers_previous_tool_use": Case(
        body([user("w?"), assistant(tool_use("toolu_1")), user(tool_result("toolu_2"))],
             tools=[WEATHER]),
        body([user("w?"), assistant(tool_use("toolu_1")), user(tool_result("toolu_1"))],
             tools=[WEATHER]),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message."),
    "messages.tool_use.answered_once_in_next_message": Case(
        body([user("w?"), assistant(tool_use("toolu_1"), tool_use("toolu_2")),
              user(tool_result("toolu_1"))], tools=[WEATHER]),
        body([user("w?"), assistant(tool_use("toolu_1"), tool_use("toolu_2")),
              user(tool_result("toolu_2"), tool_result("toolu_1"))], tools=[WEATHER]),
        TOOL_USE_MSG.format("toolu_2")),
    "messages.tool_result.before_other_content": Case(
        body([user("w?"), assistant(tool_use("toolu_1")),
              user(text("Here you go:"), tool_result("toolu_1"))], tools=[WEATHER]),
        body([user("w?"), assistant(tool_use("toolu_1")),
              user(tool_result("toolu_1"), text("Anything else?"))], tools=[WEATHER]),
        TOOL_USE_MSG.format("toolu_1")),
    "ptc.pending.only_tool_results": Case(
        ptc_reply(tool_result("toolu_p", "[]"), text("Thanks!")),
        ptc_reply(tool_result("toolu_p", "[]")),
        "`code_execution` tool use with id `srvtoolu_1` was found without a corresponding "
        "`code_execution_tool_result` block"),
    "ptc.tool_result.text_content_only": Case(
        ptc_reply(tool_result("toolu_p", [PNG])),
        ptc_reply(tool_result("toolu_p", [text("[]"), text("more")])),
        "messages.2.content.0.tool_result.content.0: the result of a tool call made by code "
        "execution must be a string or a list of `text` blocks; found `image`."),
    "ptc.container.required": Case(
        ptc_reply(tool_result("toolu_p", "[]"), container=None),
        ptc_reply(tool_result("toolu_p", "[]")),
        "container_id is required when there are pending tool uses generated by code execution "
        "with tools."),
    "container.unknown_or_expired": Case(
        body([user("again")], tools=[PTC_CE], container="container_nope"),
        body([user("hi"), assistant(text("done")), user("again")], tools=[PTC_CE],
             container="container_1"),
        "container: container `container_nope` was not found. Send the request again without the "
        "`container` parameter to get a new container.",
        prelude=[(body([user("hi")], tools=[PTC_CE]),
                  message([text("done")], container=CONTAINER))]),
    "pause_turn.resend_assistant_content": Case(
        body([user("go")], tools=[PTC_CE]),
        body([user("go"), assistant(*PAUSED)], tools=[PTC_CE]),
        "messages: the previous response stopped with `pause_turn`; send its content back as the "
        "last `assistant` message (as-is, or modified) so Claude can continue the turn. Missing: "
        "`srvtoolu_p`.",
        prelude=[(body([user("go")], tools=[PTC_CE]), message(PAUSED, "pause_turn"))]),
    "messages.resent_turn.unchanged": Case(
        body([user("weather?"), assistant(text("Checking."), {**tool_use("toolu_w"), "input": {}}),
              user(tool_result("toolu_w"))], tools=[WEATHER]),
        body([user("weather?"), assistant(text("Checking."), tool_use("toolu_w")),
              user(tool_result("toolu_w"))], tools=[WEATHER]),
        "messages.1.content.1.input: `tool_use` block with id `toolu_w`: served "
        '{"city": "Paris"}, sent back {}; send an assistant turn back as it was served: its '
        "blocks in order, their inputs unchanged.",
        prelude=[(body([user("weather?")], tools=[WEATHER]),
                  message([text("Checking."), tool_use("toolu_w")], "tool_use"))]),
    "server_tool_use.pending.same_tools": Case(
        body([user("go"), assistant(*PAUSED)], tools=[WEATHER]),
        body([user("go"), assistant(*PAUSED)], tools=[WEATHER, PTC_CE]),
        "messages.1.content.1: `server_tool_use` block with id `srvtoolu_p` is waiting for its "
        "result but no `code_execution` tool was provided"),
}


def _sim(case: Case, last: dict[str, Any], *, expect_rule: str | None = None) -> Simulator:
    exs = [exchange(req, resp) for req, resp in case.prelude]
    final = message([text("ok")])
    if expect_rule:
        exs.append(exchange(last, {"type": "error"}, 400, expect_rule=expect_rule))
    else:
        exs.append(exchange(last, final))
    sim = Simulator(cassette(*exs), rules=ALL_RULES)
    for req, _ in case.prelude:
        assert sim(post(req)).status == 200
    return sim


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == set(RULES)


def test_rules_carry_metadata() -> None:
    assert [r.id for r in ALL_RULES] and len({r.id for r in ALL_RULES}) == len(ALL_RULES)
    for r in ALL_RULES:
        assert isinstance(r.source, Source) and r.level in ("MUST", "SHOULD", "INFO")
        assert r.statement and r.message


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_breaking_request_gets_the_rules_error(rule_id: str) -> None:
    case = CASES[rule_id]
    sim = _sim(case, case.bad, expect_rule=rule_id)
    resp = sim(post(case.bad, case.bad_headers))
    status, etype, msg = error_of(resp)
    assert (status, etype) == (RULES[rule_id].status, RULES[rule_id].error_type)
    assert resp.headers.get("x-should-retry") == "false"  # as the API's 4xx (real_traffic pysdk__112)
    if isinstance(case.message, str):
        assert msg == case.message
    else:
        assert case.message.search(msg), msg
    assert resp.headers["request-id"] == resp.body["request_id"]
    assert resp.headers["request-id"].startswith("req_")
    assert resp.headers["content-type"] == "application/json"
    answered = [v for v in sim.violations if v.answered and v.request_id == resp.headers["request-id"]]
    assert [v.rule_id for v in answered] == [rule_id]
    assert answered[0].body == case.bad and answered[0].expected
    assert sim.done, "the expect_rule exchange is consumed by the expected violation"


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_correct_request_passes(rule_id: str) -> None:
    case = CASES[rule_id]
    sim = _sim(case, case.good)
    resp = sim(post(case.good, case.good_headers))
    assert resp.status == 200, resp.body
    assert not sim.violations and not sim.mismatches
    assert sim.done


def test_disabled_rule_does_not_fire() -> None:
    from simulator.rules import rules_except
    case = CASES["ptc.strict_unsupported"]
    sim = Simulator(cassette(exchange(case.bad, message([text("ok")]))),
                    rules=rules_except("ptc.strict_unsupported"))
    assert sim(post(case.bad)).status == 200


def test_roles_alternate_is_off_by_default_as_the_live_api_combines_turns() -> None:
    from simulator.rules import DEFAULT_RULES
    assert [r.id for r in ALL_RULES if r not in DEFAULT_RULES] == ["messages.roles.alternate"]
    case = CASES["messages.roles.alternate"]
    sim = Simulator(cassette(exchange(case.bad, message([text("ok")]))))
    assert sim(post(case.bad)).status == 200


def test_rules_except_refuses_unknown_ids() -> None:
    from simulator.rules import rules_except
    with pytest.raises(KeyError, match="no.such.rule"):
        rules_except("no.such.rule")
