"""Rule details beyond the one-break-one-pass table: Haiku 4.5, duplicates, registry, $ref."""

from __future__ import annotations

from typing import Any

import pytest
from _simkit import PTC_CE, QUERY_DB, WEATHER, assistant, body, text, tool_result, tool_use, user

from simulator.rules import ALL_RULES, RuleContext, check_request, rule
from simulator.rules.base import run_rules
from simulator.rules.ptc import circular_ref
from simulator.state import SimState

HAIKU = "claude-haiku-4-5-20251001"


def ids(b: dict[str, Any], headers: dict[str, str] | None = None, on: str | None = None) -> list[str]:
    return [v.rule_id for v in check_request(b, headers or {}, _state(on))]


def messages_of(b: dict[str, Any], headers: dict[str, str] | None = None,
                on: str | None = None) -> list[str]:
    return [v.message for v in check_request(b, headers or {}, _state(on))]


def _state(on: str | None) -> SimState:
    """A state whose clock is on the day ``on`` (a retired model is judged as it was then)."""
    if on is None:
        return SimState()
    from datetime import datetime

    from simulator.clock import FakeClock
    return SimState(FakeClock(datetime.fromisoformat(on + "T10:00:00+00:00")))


#: A day Claude Sonnet 3.5 and 3.7 were still served (retired 2025-10-22 and 2026-02-19).
SERVED_THEN = "2025-06-02"


def test_registry_refuses_a_duplicate_rule_id() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        rule("messages.roles.alternate", source=PTC_SOURCE, statement="x", message="x")(
            lambda ctx: None)


def test_registry_refuses_a_positional_or_malformed_id() -> None:
    with pytest.raises(ValueError, match="lower_snake_case"):
        rule("Rule 1", source=PTC_SOURCE, statement="x", message="x")


PTC_SOURCE = __import__("simulator.sources", fromlist=["protocol"]).protocol("tests")


def test_haiku_45_silently_runs_code_callable_tools_without_programmatic_calling() -> None:
    # Seed 002 (Les chiffres): on Haiku 4.5 the newer versions behave as 20250825 "and no error
    # will tell you": a code-callable custom tool is accepted, not refused.
    assert ids(body([user("hi")], tools=[PTC_CE, QUERY_DB], model=HAIKU)) == []
    assert ids(body([user("hi")], tools=[PTC_CE, WEATHER], model=HAIKU)) == []


def test_haiku_45_web_tools_20260209_need_direct_callers() -> None:
    web = {"type": "web_search_20260209", "name": "web_search"}
    b = body([user("hi")], tools=[web], model=HAIKU)
    assert ids(b) == ["tools.model_compatibility"]
    ok = body([user("hi")], tools=[{**web, "allowed_callers": ["direct"]}], model=HAIKU)
    assert ids(ok) == []


def test_haiku_45_web_tools_with_code_callers_and_20260120_break_both_rules() -> None:
    web = {"type": "web_fetch_20260209", "name": "web_fetch"}
    b = body([user("hi")], tools=[PTC_CE, web], model=HAIKU)
    got = ids(b)
    assert got == ["tools.model_compatibility", "tools.web_tools_need_code_execution_20260120"]
    assert "which runs as `code_execution_20250825` on `claude-haiku-4-5-20251001`" in messages_of(b)[1]


def test_unknown_models_are_not_refused_on_compatibility() -> None:
    b = body([user("hi")], tools=[{"type": "text_editor_20250124", "name": "str_replace_editor"}],
             model="claude-future-9")
    assert "tools.model_compatibility" not in ids(b)


def test_legacy_bash_needs_computer_use_beta_and_old_model() -> None:
    b = body([user("hi")], tools=[{"type": "bash_20241022", "name": "bash"}],
             model="claude-3-5-sonnet-20241022")
    assert ids(b, on=SERVED_THEN) == ["beta.legacy_header_required"]
    assert ids(b, {"anthropic-beta": "computer-use-2024-10-22"}, on=SERVED_THEN) == []
    # Since its retirement, the model itself is answered 404 first.
    assert ids(b)[0] == "model.not_retired"


def test_several_beta_values_only_the_malformed_ones_are_named() -> None:
    assert ids(body([user("hi")]), {"anthropic-beta": "claude-code-20250219,oauth-2025-04-20"}) == []
    msgs = messages_of(body([user("hi")]), {"anthropic-beta": "files-api-2025-04-14, nope"})
    assert msgs[0].startswith("Unexpected value(s) `nope` for the `anthropic-beta` header.")


def test_duplicate_tool_result_for_one_tool_use() -> None:
    b = body([user("w?"), assistant(tool_use("toolu_1")),
              user(tool_result("toolu_1"), tool_result("toolu_1"))], tools=[WEATHER])
    assert ids(b) == ["messages.tool_use.answered_once_in_next_message"]
    assert messages_of(b)[0].startswith("messages.2.content.1: found more than one `tool_result`")


def test_tool_use_answered_two_messages_later_breaks_both_pairing_rules() -> None:
    b = body([user("w?"), assistant(tool_use("toolu_1")), user("hold on"), assistant(text("ok")),
              user(tool_result("toolu_1"))], tools=[WEATHER])
    got = ids(b)
    assert "messages.tool_result.answers_previous_tool_use" in got
    assert "messages.tool_use.answered_once_in_next_message" in got


def test_a_trailing_assistant_tool_use_is_a_prefill_not_a_violation() -> None:
    b = body([user("w?"), assistant(tool_use("toolu_1"))], tools=[WEATHER])
    assert ids(b) == []


def test_deferred_server_tool_forbids_text_in_the_reply() -> None:
    srv = {"type": "server_tool_use", "id": "srvtoolu_w", "name": "web_fetch",
           "input": {"url": "https://example.com"}}
    fetch = {"type": "web_fetch_20250910", "name": "web_fetch"}
    b = body([user("go"), assistant(srv, tool_use("toolu_1")),
              user(tool_result("toolu_1"), text("and?"))], tools=[WEATHER, fetch])
    got = check_request(b, {}, SimState())
    assert got[0].rule_id == "ptc.pending.only_tool_results"
    assert got[0].message == ("`web_fetch` tool use with id `srvtoolu_w` was found without a "
                              "corresponding `web_fetch_tool_result` block")


def test_tool_choice_on_a_web_tool_20260209_with_default_callers() -> None:
    web = {"type": "web_search_20260209", "name": "web_search"}
    b = body([user("hi")], tools=[PTC_CE, web], tool_choice={"type": "tool", "name": "web_search"})
    assert ids(b) == ["tool_choice.requires_direct_caller"]


@pytest.mark.parametrize("schema,expected", [
    ({"$ref": "#"}, "#"),
    ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
     "#/$defs/a"),
    ({"$defs": {"leaf": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/leaf"}}}, None),
    ({"properties": {"x": {"$ref": "https://example.com/s.json"}}}, None),
    ({"$defs": {"a": {"$ref": "#/$defs/missing"}}, "$ref": "#/$defs/a"}, None),
])
def test_circular_ref_detection(schema: dict[str, Any], expected: str | None) -> None:
    assert circular_ref(schema) == expected


def test_rules_never_crash_on_odd_bodies() -> None:
    odd: list[dict[str, Any]] = [
        {"messages": "x"}, {"messages": [1, None, {"role": "user", "content": 5}]},
        {"tools": "x", "tool_choice": 3}, {"tools": [{"type": 7, "allowed_callers": "x"}]},
        {"container": {"skills": []}},
        {"messages": [{"role": "assistant", "content": [{"type": "server_tool_use"}]}]},
    ]
    for b in odd:
        ctx = RuleContext(b, {"anthropic-beta": ""}, SimState())
        run_rules(ctx, ALL_RULES)
        assert not [n for n in ctx.notes if "could not judge" in n], ctx.notes


def test_opus_41_supports_only_code_execution_20250825() -> None:
    opus41 = "claude-opus-4-1-20250805"
    b = body([user("hi")], tools=[PTC_CE], model=opus41)
    assert ids(b) == ["tools.model_compatibility"]
    assert messages_of(b)[0] == (
        "tools.0.code_execution_20260120: `code_execution_20260120` is not supported on model "
        "`claude-opus-4-1-20250805`. Use `code_execution_20250825`.")
    ok = body([user("hi")], tools=[{"type": "code_execution_20250825", "name": "code_execution"}],
              model=opus41)
    assert ids(ok) == []


def test_sonnet_37_has_no_code_execution_and_claude_4_gets_the_newer_editor() -> None:
    sonnet37 = "claude-3-7-sonnet-20250219"
    b = body([user("hi")], tools=[{"type": "code_execution_20250825", "name": "code_execution"}],
             model=sonnet37)
    assert messages_of(b, on=SERVED_THEN)[0] == ("tools.0.code_execution_20250825: `code_execution_20250825` is "
                                 "not supported on model `claude-3-7-sonnet-20250219`.")
    sonnet4 = "claude-sonnet-4-20250514"
    # Live captures (2025) show code execution 20250825 accepted on claude-sonnet-4-0 [3P];
    # without PTC, 20260120 is refused there.
    ok = body([user("hi")], tools=[{"type": "code_execution_20250825", "name": "code_execution"}],
              model=sonnet4)
    assert ids(ok) == []
    b = body([user("hi")], tools=[{"type": "code_execution_20260120", "name": "code_execution"}],
             model=sonnet4)
    assert ids(b) == ["tools.model_compatibility"]
    b = body([user("hi")], tools=[{"type": "text_editor_20250124", "name": "str_replace_editor"}],
             model=sonnet4)
    assert messages_of(b)[0].endswith("Use `text_editor_20250728`.")


def test_rules_export_as_data() -> None:
    import json

    rows = [r.to_json() for r in ALL_RULES]
    json.dumps(rows)
    by_id = {r["id"]: r for r in rows}
    assert by_id["ptc.container.required"]["inferred"] is False
    assert by_id["ptc.strict_unsupported"]["inferred"] is True
    assert by_id["ptc.strict_unsupported"]["source"]["tag"] == "?"
    assert by_id["messages.roles.alternate"]["default"] is False


def test_a_pending_server_tool_of_a_version_the_registry_does_not_list() -> None:
    # real_traffic pydai__247: web_search_20250305 in tools, an in-flight server_tool_use: HTTP 200
    srv = {"type": "server_tool_use", "id": "srvtoolu_x", "name": "web_search", "input": {"query": "q"}}
    tools = [WEATHER, {"type": "web_search_20250305", "name": "web_search"}]
    b = body([user("go"), assistant(srv, tool_use("toolu_1")), user(tool_result("toolu_1"))],
             tools=tools)
    assert ids(b) == []
    assert ids({**b, "tools": [WEATHER]}) == ["server_tool_use.pending.same_tools"]


def test_simulator_disables_rules_by_id() -> None:
    from _simkit import cassette, exchange, message, post

    from simulator.engine import Simulator
    bad = body([user("a"), user("b")])
    assert Simulator(cassette(exchange(bad, message([text("ok")]))), rules=ALL_RULES)(
        post(bad)).status == 400
    sim = Simulator(cassette(exchange(bad, message([text("ok")]))), rules=ALL_RULES,
                    disabled_rules=["messages.roles.alternate"])
    assert sim(post(bad)).status == 200
    with pytest.raises(KeyError, match="unknown rule"):
        Simulator(cassette(exchange(bad, message([text("ok")]))), disabled_rules=["nope.nope"])


def test_request_schema_answers_in_the_apis_path_style() -> None:
    msgs = messages_of({"model": "claude-opus-4-6", "max_tokens": 5,
                        "messages": [{"role": "user", "content": [{"type": "text"}]}]})
    assert msgs and msgs[0].startswith("messages.0.content.0")


def test_dynamic_filtering_container_is_required_while_a_web_tool_is_deferred() -> None:
    srv = {"type": "server_tool_use", "id": "srvtoolu_w", "name": "web_search", "input": {"query": "q"}}
    tools = [WEATHER, {"type": "web_search_20260209", "name": "web_search"}]
    b = body([user("go"), assistant(srv, tool_use("toolu_1")), user(tool_result("toolu_1"))],
             tools=tools)
    assert ids(b) == ["ptc.container.required"]
    assert ids({**b, "container": "container_1"}) == ["container.unknown_or_expired"]


def test_computer_use_versions_need_their_beta_headers() -> None:
    b = body([user("hi")], tools=[{"type": "computer_20251124", "name": "computer",
                                   "display_width_px": 1024, "display_height_px": 768}])
    assert ids(b) == ["beta.legacy_header_required"]
    assert "`anthropic-beta: computer-use-2025-11-24`" in messages_of(b)[0]
    assert ids(b, {"anthropic-beta": "computer-use-2025-11-24"}) == []
