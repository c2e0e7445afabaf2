"""The validation API: violations with pointers and rules, modes, kinds, negative cases."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import registry
from simulator.cassette import parse_cassette
from simulator.schemas import KINDS
from simulator.strategies import response_blocks
from simulator.validation import Violation, detect_kind, errors, validate, validate_cassette
from simulator.validation import _validate as impl

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}


def _rules(vs: list[Violation]) -> set[str]:
    return {v.rule for v in errors(vs)}


# --- negative cases -----------------------------------------------------------------------------

@pytest.mark.parametrize("tool_type", sorted(registry.fixed_names()))
def test_wrong_type_name_pair_is_refused_in_both_modes(tool_type: str) -> None:
    name = registry.fixed_names()[tool_type]
    wrong = "bash" if name != "bash" else "str_replace_editor"
    for strict in (True, False):
        vs = validate({"type": tool_type, "name": wrong}, "tool_definition", strict=strict)
        assert [(v.pointer, v.rule) for v in errors(vs)] == [("/name", "tools.fixed_type_name")]
        assert repr(name) in vs[0].message
    assert validate({"type": tool_type, "name": name}, "tool_definition", strict=True) == []


def test_unknown_error_code_is_an_error_in_strict_mode_and_a_note_in_lenient() -> None:
    block = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "bash_code_execution_tool_result_error", "error_code": "disk_full"}}
    strict = validate(block, "block", strict=True)
    assert [(v.pointer, v.severity) for v in strict] == [("/content/error_code", "error")]
    lenient = validate(block, "block")
    assert [(v.pointer, v.severity) for v in lenient] == [("/content/error_code", "info")]
    assert "unknown error_code" in lenient[0].message


@pytest.mark.parametrize("code", registry.LEGACY_ERROR_CODES)
def test_legacy_error_codes_are_info_notes_in_lenient_mode(code: str) -> None:
    block = {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "text_editor_code_execution_tool_result_error", "error_code": code}}
    notes = validate(block, "block")
    assert [v.severity for v in notes] == ["info"] and "legacy" in notes[0].message
    assert errors(validate(block, "block", strict=True))


def test_tool_result_without_tool_use_id() -> None:
    for strict in (True, False):
        vs = validate({"type": "tool_result", "content": "ok"}, "block", strict=strict)
        assert [(v.pointer, v.rule) for v in vs] == [("", "blocks/tool_result:required")]
        assert "tool_use_id" in vs[0].message


@pytest.mark.parametrize("strict", [True, False])
def test_undo_edit_is_not_a_command_of_text_editor_20250429(strict: bool) -> None:
    undo = {"command": "undo_edit", "path": "/tmp/a.py"}
    vs = validate(undo, "tool_input:text_editor_20250429", strict=strict)
    assert _rules(vs) == {"tools.commands"} and vs[0].pointer == "/command"
    assert validate(undo, "tool_input:text_editor_20250124", strict=strict) == []
    block = {**TOOL_USE, "name": "str_replace_based_edit_tool", "input": undo}
    assert _rules(validate(block, "block", strict=strict)) == {"tools.commands"}


def test_max_characters_only_on_text_editor_20250728() -> None:
    for t in ("text_editor_20250124", "text_editor_20250429"):
        d = {"type": t, "name": registry.fixed_names()[t], "max_characters": 1000}
        for strict in (True, False):
            vs = validate(d, "tool_definition", strict=strict)
            assert [(v.pointer, v.rule) for v in vs] == [("/max_characters",
                                                          "tools.definition_fields")]
    ok = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
          "max_characters": 10000}
    assert validate(ok, "tool_definition", strict=True) == []


def test_caller_code_execution_20260521_has_no_variant() -> None:
    block = {**TOOL_USE, "caller": {"type": "code_execution_20260521", "tool_id": "srvtoolu_1"}}
    vs = validate(block, "block", strict=True)
    assert [(v.pointer, v.rule) for v in vs] == [("/caller/type", "ptc.caller.type")]
    assert [v.severity for v in validate(block, "block")] == ["info"]
    for t in registry.CALLER_TYPES:
        caller = {"type": t} if t == "direct" else {"type": t, "tool_id": "srvtoolu_1"}
        assert validate({**TOOL_USE, "caller": caller}, "block", strict=True) == []


def test_caller_needs_tool_id_for_code_execution() -> None:
    block = {**TOOL_USE, "caller": {"type": "code_execution_20260120"}}
    assert [v.pointer for v in validate(block, "block")] == ["/caller"]


def test_allowed_callers_values_come_from_the_registry() -> None:
    base = {"name": "q", "input_schema": {"type": "object"}}
    ok = {**base, "allowed_callers": list(registry.ALLOWED_CALLERS)}
    assert validate(ok, "tool_definition", strict=True) == []
    bad = {**base, "allowed_callers": ["code_execution_20990101"]}
    assert [v.pointer for v in validate(bad, "tool_definition", strict=True)] == [
        "/allowed_callers/0"]


def test_unknown_block_type_strict_error_lenient_note() -> None:
    block = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {}}
    assert [v.severity for v in validate(block, "block", strict=True)] == ["error"]
    assert [v.severity for v in validate(block, "block")] == ["info"]


def test_unknown_field_strict_error_lenient_ok() -> None:
    block = {"type": "text", "text": "hi", "abort_reason": None}
    assert [v.pointer for v in validate(block, "block", strict=True)] == [""]
    assert "abort_reason" in validate(block, "block", strict=True)[0].message
    assert validate(block, "block") == []


def test_text_block_needs_a_string_text() -> None:
    vs = validate({"type": "text", "text": 3}, "block")
    assert [(v.pointer, v.rule) for v in vs] == [("/text", "blocks/text:type")]


def test_bash_input_needs_command_or_restart() -> None:
    assert validate({"restart": True}, "tool_input:bash_20250124", strict=True) == []
    assert validate({"command": "ls"}, "tool_input:bash_20250124", strict=True) == []
    assert errors(validate({}, "tool_input:bash_20250124"))


def test_insert_needs_its_text_field() -> None:
    base = {"command": "insert", "path": "/a", "insert_line": 0}
    assert validate({**base, "insert_text": "x"}, "tool_input:text_editor_20250728", strict=True) == []
    assert validate({**base, "new_str": "x"}, "tool_input:text_editor_20250728", strict=True) == []
    assert errors(validate(base, "tool_input:text_editor_20250728", strict=True))


def test_streamed_blocks_start_with_an_empty_input() -> None:
    start = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "bash_code_execution",
             "input": {}}
    assert validate(start, "block", strict=True) == []
    full = {**start, "input": {"cmd": "ls"}}
    assert errors(validate(full, "block", strict=True))


def test_server_tool_usage_accepts_both_documented_shapes() -> None:
    base = {"input_tokens": 1, "output_tokens": 2}
    for stu in ({"web_search_requests": 0, "web_fetch_requests": 1},
                {"code_execution_requests": 1}):
        assert validate({**base, "server_tool_use": stu}, "usage", strict=True) == []
    assert errors(validate({**base, "server_tool_use": {"requests": 1}}, "usage", strict=True))


@pytest.mark.parametrize("reason", [*registry.STOP_REASONS, *registry.BETA_STOP_REASONS])
def test_every_stop_reason_is_accepted(reason: str) -> None:
    msg: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
           "stop_reason": reason, "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
    assert validate(msg, "response", strict=True) == []


def test_unknown_stop_reason() -> None:
    msg: dict[str, Any] = {"role": "assistant", "content": [], "stop_reason": "tool_call"}
    assert errors(validate(msg, "response", strict=True))
    assert [v.severity for v in validate(msg, "response")] == ["info"]


@pytest.mark.parametrize("status,etype", sorted(registry.API_ERROR_TYPES.items()))
def test_every_api_error_type(status: int, etype: str) -> None:
    body = {"type": "error", "error": {"type": etype, "message": "m"}, "request_id": "req_1"}
    assert validate(body, "error", strict=True) == []
    assert detect_kind(body) == "error"


def test_unknown_api_error_type_strict() -> None:
    body = {"type": "error", "error": {"type": "teapot_error", "message": "m"}}
    assert [v.pointer for v in validate(body, "error", strict=True)] == ["/error/type"]


def test_container_param_is_a_string_or_an_object() -> None:
    base = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    containers: list[Any] = ["container_xyz", {"id": "container_xyz"}, {"skills": []}]
    for c in containers:
        assert validate({**base, "container": c}, "request", strict=True) == [], c
    assert errors(validate({**base, "container": 5}, "request", strict=True))


def test_tool_choice_types() -> None:
    base = {"model": "m", "max_tokens": 5, "messages": []}
    for tc in ({"type": "auto"}, {"type": "any", "disable_parallel_tool_use": True},
               {"type": "none"}, {"type": "tool", "name": "x"}):
        assert validate({**base, "tool_choice": tc}, "request", strict=True) == []
    assert [v.pointer for v in validate({**base, "tool_choice": {"type": "tool"}}, "request")] == [
        "/tool_choice"]


@pytest.mark.parametrize("missing", ["model", "max_tokens", "messages"])
def test_lenient_requests_still_need_what_the_api_requires(missing: str) -> None:
    body: dict[str, Any] = {"model": "m", "max_tokens": 5, "messages": [], "extra_param": 1}
    del body[missing]
    vs = validate(body, "request")  # what the simulator's request.schema rule runs
    assert [(v.pointer, v.message) for v in vs] == [("", f"'{missing}' is a required property")]
    if missing == "max_tokens":
        assert validate(body, "count_tokens_request") == []


def test_request_headers_that_matter() -> None:
    ok = {"anthropic-version": "2023-06-01", "content-type": "application/json",
          "anthropic-beta": "code-execution-2025-05-22, files-api-2025-04-14", "x-stainless-os": "L"}
    assert validate(ok, "request_headers", strict=True) == []
    vs = validate({"anthropic-beta": "a b"}, "request_headers", strict=True)
    assert [(v.pointer, v.message) for v in vs] == [
        ("", "'anthropic-version' is a required property"),
        ("/anthropic-beta", "anthropic-beta is a comma-separated list of beta names")]
    assert [v.pointer for v in validate({"anthropic-beta": "a b"}, "request_headers")] == [
        "/anthropic-beta"]


# --- Managed Agents ----------------------------------------------------------------------------

MA_TOOL = {"type": "custom", "name": "get_order_status", "description": "Look up an order.",
           "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


@pytest.mark.parametrize("name", ["bash", "read", "mcp__orders", "ant__x", "", "a" * 129, "a b"])
def test_managed_agents_custom_tool_name_rules(name: str) -> None:
    vs = validate({**MA_TOOL, "name": name}, "ma_tool", strict=True)
    assert [(v.pointer, v.rule) for v in vs] == [("/name", "managed_agents.custom_tool.name")]


def test_managed_agents_custom_tool_schema_rules() -> None:
    assert validate(MA_TOOL, "ma_tool", strict=True) == []
    no_desc = {**MA_TOOL, "description": ""}
    assert _rules(validate(no_desc, "ma_tool")) == {"managed_agents.custom_tool.description"}
    with_ref = {**MA_TOOL, "input_schema": {"type": "object", "properties": {
        "a": {"type": "array", "items": {"$ref": "#/$defs/x"}}}}}
    vs = validate(with_ref, "ma_tool")
    assert [(v.pointer, v.rule) for v in vs] == [
        ("/input_schema/properties/a/items", "managed_agents.custom_tool.no_ref")]
    top_any = {**MA_TOOL, "input_schema": {"type": "object", "anyOf": [{}]}}
    assert _rules(validate(top_any, "ma_tool")) == {"managed_agents.custom_tool.input_schema"}
    nested_any = {**MA_TOOL, "input_schema": {"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}]}}}}
    assert validate(nested_any, "ma_tool", strict=True) == []
    bad_prop = {**MA_TOOL, "input_schema": {"type": "object", "properties": {"a b": {}}}}
    assert _rules(validate(bad_prop, "ma_tool")) == {"managed_agents.custom_tool.property_name"}


def test_managed_agents_tools_array_limit_is_configurable() -> None:
    agent = {"name": "a", "tools": [{**MA_TOOL, "name": f"t{i}"} for i in range(257)]}
    assert _rules(validate(agent, "ma_agent")) == {"managed_agents.tools.max_entries"}
    agent["tools"] = agent["tools"][:256]
    assert validate(agent, "ma_agent", strict=True) == []
    assert _rules(validate(agent, "ma_agent", max_agent_tools=128)) == {
        "managed_agents.tools.max_entries"}


def test_managed_agents_custom_tool_names_are_unique_per_agent() -> None:
    agent = {"name": "a", "tools": [MA_TOOL, {"type": "agent_toolset_20260401"}, MA_TOOL]}
    vs = validate(agent, "ma_agent", strict=True)
    assert [(v.pointer, v.rule) for v in vs] == [
        ("/tools/2/name", "managed_agents.custom_tool.name_unique")]
    assert "/tools/0" in vs[0].message


def test_managed_agents_events() -> None:
    use = {"type": "agent.custom_tool_use", "id": "sevt_1", "name": "get_order_status",
           "input": {"order_id": "1"}, "processed_at": "2026-04-01T00:00:00Z"}
    idle = {"type": "session.status_idle", "id": "sevt_2", "processed_at": "2026-04-01T00:00:01Z",
            "stop_reason": {"type": "requires_action", "event_ids": ["sevt_1"]}}
    result = {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_1",
              "content": [{"type": "text", "text": "shipped"}]}
    for ev in (use, idle, result):
        assert detect_kind(ev) == "ma_event"
        assert validate(ev, "ma_event", strict=True) == [], ev["type"]
    bad = {**idle, "stop_reason": {"type": "requires_action"}}
    assert [v.pointer for v in validate(bad, "ma_event")] == ["/stop_reason"]


def test_work_items_and_heartbeats() -> None:
    work = {"type": "work", "id": "work_1", "environment_id": "env_1", "state": "queued",
            "data": {"type": "session", "id": "sesn_1"}, "metadata": {},
            "created_at": "2026-04-01T00:00:00Z"}
    beat = {"type": "work_heartbeat", "last_heartbeat": "2026-04-01T00:00:00Z",
            "lease_extended": True, "state": "active", "ttl_seconds": 90}
    assert (detect_kind(work), detect_kind(beat)) == ("work_item", "work_heartbeat")
    assert validate(work, "work_item", strict=True) == []
    assert validate(beat, "work_heartbeat", strict=True) == []
    assert [v.pointer for v in validate({**beat, "state": "paused"}, "work_heartbeat",
                                        strict=True)] == ["/state"]


# --- API ---------------------------------------------------------------------------------------

def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown kind 'blob'"):
        validate({}, "blob")


@pytest.mark.parametrize("obj,kind", [
    ({"model": "m", "max_tokens": 1, "messages": []}, "request"),
    ({"role": "user", "content": "hi"}, "message"),
    ({"role": "assistant", "content": [], "id": "msg_1"}, "response"),
    ({"type": "message", "content": []}, "response"),
    (TOOL_USE, "block"),
    ({"type": "bash_20250124", "name": "bash"}, "tool_definition"),
    ({"name": "x", "input_schema": {"type": "object"}}, "tool_definition"),
    ([{"event": "ping", "data": {"type": "ping"}}], "sse_events"),
    ([{"type": "message_stop"}], "sse_events"),
    ({"type": "content_block_stop", "index": 0}, "sse_event"),
    ({"type": "agent_toolset_20260401"}, "ma_tool"),
    ({"type": "work_queue_stats", "depth": 0, "pending": 0}, "work_queue_stats"),
    ({"whatever": 1}, "unknown"),
    ([], "unknown"),
    ("text", "unknown"),
])
def test_detect_kind(obj: Any, kind: str) -> None:
    assert detect_kind(obj) == kind
    assert kind == "unknown" or kind in KINDS


def test_violation_pointers_escape_json_pointer_characters() -> None:
    req = {"model": "m", "max_tokens": 1, "messages": [], "metadata": {"a/b~c": 1}}
    vs = validate(req, "request", strict=True)
    assert vs and vs[0].pointer == "/metadata"
    assert impl.pointer_of(["a/b~c", 0]) == "/a~1b~0c/0"


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_fast_path_agrees_with_the_detailed_validator(mode: str) -> None:
    """The compiled validator says "valid" exactly when the detailed one reports nothing."""
    samples: list[tuple[Any, str]] = [
        (TOOL_USE, "block"), ({"type": "tool_result"}, "block"), ({"type": "weird"}, "block"),
        ({**TOOL_USE, "extra": 1}, "block"), ({**TOOL_USE, "caller": {"type": "x"}}, "block"),
        ({"type": "bash_20250124", "name": "bash", "max_characters": 1}, "tool_definition"),
        ({"type": "bash_20250124", "name": "bash"}, "tool_definition"), (MA_TOOL, "ma_tool"),
    ]
    for obj, kind in samples:
        fast = impl._fast_validator(kind, mode, 256)
        if fast is None:
            pytest.skip("jsonschema-rs is not installed")
        slow = impl.validator_for(kind, mode)
        assert fast.is_valid(obj) == (list(slow.iter_errors(obj)) == []), (obj, mode)


def test_validate_cassette_points_into_the_file() -> None:
    bad_block = {"type": "tool_use", "id": "toolu_1", "name": "x"}
    cassette = parse_cassette({
        "version": 1, "id": "t/x", "title": "t", "source": {"document": "PROTOCOL.md",
                                                             "section": "1"},
        "tools": [{"type": "bash_20250124", "name": "shell"}],
        "exchanges": [
            {"request": {"method": "POST", "path": "/v1/messages",
                         "body": {"model": "m", "max_tokens": 1, "messages": [
                             {"role": "user", "content": [{"type": "tool_result"}]}]}},
             "response": {"status": 200, "body": {
                 "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                 "content": [bad_block], "stop_reason": "tool_use", "stop_sequence": None,
                 "usage": {"input_tokens": 1, "output_tokens": 1}}}},
            {"request": {"method": "POST", "path": "/v1/messages", "body": {}},
             "response": {"status": 200, "events": [{"event": "ping", "data": {"type": "pong"}}]}},
            {"request": {"method": "POST", "path": "/v1/messages", "body": None},
             "response": {"status": 529, "body": {"type": "error", "error": {
                 "type": "overloaded_error", "message": "Overloaded"}}}},
        ]})
    pointers = [v.pointer for v in errors(validate_cassette(cassette, strict=True))]
    assert sorted(set(pointers)) == sorted([
        "/tools/0/name", "/exchanges/0/request/body/messages/0/content/0",
        "/exchanges/0/response/body/content/0", "/exchanges/1/request/body",
        "/exchanges/1/response/events/0/data/type",
        "/exchanges/1/response/events"])  # sse.order: a stream with no message_start/stop
    assert pointers.count("/exchanges/1/request/body") == 3  # model, max_tokens, messages


# --- the order of streamed events ------------------------------------------------------------

def _stream(*types_and_index: tuple[str, int | None]) -> list[dict[str, Any]]:
    payloads: dict[str, dict[str, Any]] = {
        "message_start": {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 0}}},
        "content_block_start": {"type": "content_block_start",
                                "content_block": {"type": "text", "text": ""}},
        "content_block_delta": {"type": "content_block_delta",
                                "delta": {"type": "text_delta", "text": "a"}},
        "content_block_stop": {"type": "content_block_stop"},
        "message_delta": {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 1}},
        "message_stop": {"type": "message_stop"}, "ping": {"type": "ping"},
    }
    out = []
    for t, index in types_and_index:
        data = dict(payloads[t])
        if index is not None:
            data["index"] = index
        out.append({"event": t, "data": data})
    return out


GOOD = [("message_start", None), ("content_block_start", 0), ("ping", None),
        ("content_block_delta", 0), ("content_block_stop", 0), ("content_block_start", 1),
        ("content_block_stop", 1), ("message_delta", None), ("message_stop", None)]


def test_a_well_ordered_stream_and_two_in_a_row() -> None:
    assert validate(_stream(*GOOD), "sse_events", strict=True) == []
    assert validate(_stream(*GOOD, *GOOD), "sse_events", strict=True) == []


@pytest.mark.parametrize("events,pointer,words", [
    (GOOD[1:], "/0", "first event is message_start"),
    ([*GOOD[:3], ("content_block_delta", 1), *GOOD[3:]], "/3", "never started"),
    ([*GOOD[:5], ("content_block_start", 2), *GOOD[6:]], "/5", "next block index is 1"),
    ([*GOOD[:4], *GOOD[7:]], "/4", "still open"),
    ([*GOOD[:8]], "", "ends without message_stop"),
    ([*GOOD, ("content_block_delta", 0)], "/9", "after the stream ended"),
    ([*GOOD[:7], ("message_stop", None)], "/7", "before any message_delta"),
])
def test_stream_order_violations(events: list[tuple[str, int | None]], pointer: str,
                                 words: str) -> None:
    strict = validate(_stream(*events), "sse_events", strict=True)
    assert [v.rule for v in strict][:1] == ["sse.order"]
    assert strict[0].pointer == pointer and words in strict[0].message
    lenient = validate(_stream(*events), "sse_events")
    assert lenient and all(v.severity == "info" for v in lenient)


# --- the compiled fast path and the detailed validator agree -----------------------------------

@st.composite
def _mutated_blocks(draw: st.DrawFn) -> dict[str, Any]:
    block = dict(draw(response_blocks()))
    how = draw(st.sampled_from(["keep", "drop", "add", "retype", "recode"]))
    if how == "drop":
        block.pop(draw(st.sampled_from(sorted(block))))
    elif how == "add":
        block[draw(st.sampled_from(["extra", "caller", "input", "content"]))] = draw(
            st.sampled_from([None, 1, "x", {}, {"type": "direct"}, []]))
    elif how == "retype":
        block["type"] = draw(st.sampled_from(["tool_search_tool_result", "text", "tool_use", 3]))
    elif how == "recode" and isinstance(block.get("content"), dict):
        block["content"] = {**block["content"], "error_code": draw(st.sampled_from(
            ["container_expired", "nope", "unavailable"]))}
    return block


@settings(max_examples=50, deadline=None)
@given(block=_mutated_blocks(), strict=st.booleans())
def test_fast_path_agrees_on_generated_blocks(block: dict[str, Any], strict: bool) -> None:
    mode = "strict" if strict else "lenient"
    fast = impl._fast_validator("block", mode, 256)
    if fast is None:
        pytest.skip("jsonschema-rs is not installed")
    slow = impl.validator_for("block", mode)
    assert fast.is_valid(block) == (list(slow.iter_errors(block)) == [])
    assert (validate(block, "block", strict=strict) == []) == fast.is_valid(block)


def test_strategies_module_exports_what_it_lists() -> None:
    from simulator import strategies

    assert sorted(strategies.__all__) == strategies.__all__
    for name in strategies.__all__:
        assert callable(getattr(strategies, name)), name
