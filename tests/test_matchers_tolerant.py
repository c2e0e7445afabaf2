"""Issue 23: the tolerant matcher set judges the protocol, not a client's formatting.

Each normalisation a framework's requests need is accepted (and reported), the exact set refuses
the same request, and a real protocol difference is still refused under the tolerant set.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.cassette import Cassette
from simulator.engine import NORMALISED_HEADER, Simulator
from simulator.http import SimRequest, SimResponse
from simulator.matchers import (
    DEFAULT_MATCHERS,
    MATCHER_SETS,
    TOLERANT_MATCHERS,
    MatchRequest,
    first_failure,
    matcher_set,
    resolve_matchers,
)
from simulator.routes import load_cassettes

PTC = "ptc/code_execution_20260120/pause_resume.json"
REUSE = "code_execution/code_execution_20260120/container_reuse.json"
ONE_COMMAND = "bash/bash_20250124/one_command.json"

Edit = Callable[[dict[str, Any]], None]


def cassette(name: str) -> Cassette:
    [c] = load_cassettes(name)
    return c


def recorded_body(name: str, index: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(cassette(name).exchanges[index].request["body"])
    return body


def send(sim: Simulator, body: dict[str, Any]) -> SimResponse:
    return sim(SimRequest("POST", "/v1/messages", {"x-api-key": "test-key",
                                                   "anthropic-version": "2023-06-01"}, {},
                          json.dumps(body).encode()))


def client_tool(body: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = next(t for t in body["tools"] if "input_schema" in t)
    return tool


def schema(body: dict[str, Any]) -> dict[str, Any]:
    s: dict[str, Any] = client_tool(body)["input_schema"]
    return s


def _reverse(b: dict[str, Any]) -> None:
    b["tools"].reverse()


def _nested_object(b: dict[str, Any]) -> None:
    """A recorded schema with a nested object, for the nested-noise cases below."""
    schema(b)["properties"]["options"] = {"type": "object", "properties": {
        "limit": {"type": "integer"}}}


# (id, edit to the recorded request, what the report says, whether the exact set refuses it);
# the order of a list that is a set (``required``, ``allowed_callers``) has tests of its own.
NORMALISATIONS: list[tuple[str, Edit, str, bool]] = [
    ("order", _reverse, "tools: order", True),
    ("additionalProperties_false",
     lambda b: schema(b).update(additionalProperties=False),
     "tools[query_database]: input_schema.additionalProperties: false (received only)", True),
    ("$schema", lambda b: schema(b).update({"$schema": "http://json-schema.org/draft-07/schema#"}),
     "tools[query_database]: input_schema.$schema (received only)", True),
    ("title", lambda b: schema(b).update(title="QueryDatabase"),
     "tools[query_database]: input_schema.title (received only)", True),
    ("property_title", lambda b: schema(b)["properties"]["sql"].update(title="Sql"),
     "tools[query_database]: input_schema.properties.sql.title (received only)", True),
    ("type_custom", lambda b: client_tool(b).update(type="custom"),
     'tools[query_database]: type: "custom" (received only)', True),
    ("cache_control", lambda b: client_tool(b).update(cache_control={"type": "ephemeral"}),
     "", False),  # the exact set ignores it already: nothing to report
    ("strict_false", lambda b: client_tool(b).update(strict=False),
     "tools[query_database]: strict: false (received only)", True),
    ("eager_input_streaming", lambda b: client_tool(b).update(eager_input_streaming=True),
     "tools[query_database]: eager_input_streaming (received only)", True),
]


@pytest.mark.parametrize(("edit", "report", "exact_refuses"),
                         [n[1:] for n in NORMALISATIONS], ids=[n[0] for n in NORMALISATIONS])
def test_each_tool_normalisation_is_accepted_and_reported(edit: Edit, report: str,
                                                           exact_refuses: bool) -> None:
    body = recorded_body(PTC)
    edit(body)
    exact = Simulator(cassette(PTC))
    resp = send(exact, body)
    assert (resp.status == 400) is exact_refuses
    if exact_refuses:
        assert exact.mismatches[0].matcher == "tools"
    tolerant = Simulator(cassette(PTC), matchers="tolerant")
    resp = send(tolerant, body)
    assert resp.status == 200, resp.body
    [served] = tolerant.served
    assert not tolerant.mismatches
    if report:
        assert any(line.startswith(report) for line in served.normalised), served.normalised
        assert report.split(" (")[0] in resp.headers[NORMALISED_HEADER]
    else:
        assert served.normalised == () and NORMALISED_HEADER not in resp.headers


def test_noise_on_both_sides_and_nested_is_normalised() -> None:
    """Noise at every level of the schema, on the recorded side as on the received one; a
    property *named* like a noise keyword (``title``) is a property, not noise."""
    recorded = recorded_body(PTC)
    _nested_object(recorded)
    schema(recorded)["properties"]["title"] = {"type": "string"}
    schema(recorded)["additionalProperties"] = False
    received = copy.deepcopy(recorded)
    del schema(received)["additionalProperties"]
    nested = schema(received)["properties"]["options"]
    nested.update(additionalProperties=False, title="Options")
    rec, inc = MatchRequest("POST", "/v1/messages", recorded), MatchRequest("POST", "/v1/messages",
                                                                            received)
    assert first_failure(TOLERANT_MATCHERS, rec, inc) is None
    notes = TOLERANT_MATCHERS[3].explain(rec, inc)  # type: ignore[misc]
    assert "tools[query_database]: input_schema.additionalProperties: false (recorded only)" in notes
    assert ("tools[query_database]: input_schema.properties.options.additionalProperties: false "
            "(received only)") in notes
    # a property called "title" still counts
    del schema(received)["properties"]["title"]
    failure = first_failure(TOLERANT_MATCHERS, rec, inc)
    assert failure is not None and failure.matcher == "tools.tolerant"


def test_required_order_is_a_set() -> None:
    recorded = recorded_body(PTC)
    schema(recorded)["properties"]["limit"] = {"type": "integer"}
    schema(recorded)["required"] = ["limit", "sql"]
    received = copy.deepcopy(recorded)
    schema(received)["required"] = ["sql", "limit"]
    rec, inc = (MatchRequest("POST", "/v1/messages", b) for b in (recorded, received))
    assert first_failure(DEFAULT_MATCHERS, rec, inc) is not None
    assert first_failure(TOLERANT_MATCHERS, rec, inc) is None


def test_allowed_callers_order_is_a_set() -> None:
    recorded = recorded_body(PTC)
    client_tool(recorded)["allowed_callers"] = ["direct", "code_execution_20260120"]
    received = copy.deepcopy(recorded)
    client_tool(received)["allowed_callers"] = ["code_execution_20260120", "direct"]
    rec, inc = (MatchRequest("POST", "/v1/messages", b) for b in (recorded, received))
    assert first_failure(DEFAULT_MATCHERS, rec, inc) is not None
    assert first_failure(TOLERANT_MATCHERS, rec, inc) is None


def test_every_framework_formatting_at_once() -> None:
    """pydantic-ai (client tools first, additionalProperties: false), zod ($schema), LiteLLM
    (type: custom) together: served, each difference reported once."""
    body = recorded_body(PTC)
    for _, edit, _, _ in NORMALISATIONS:
        edit(body)
    sim = Simulator(cassette(PTC), matchers="tolerant")
    assert send(sim, body).status == 200
    assert len(sim.served[0].normalised) == 8  # cache_control is not a difference to report


# --- a real protocol difference is still refused ------------------------------------------------

def _version(b: dict[str, Any]) -> None:
    b["tools"][0]["type"] = "code_execution_20250825"


def _no_allowed_callers(b: dict[str, Any]) -> None:
    del client_tool(b)["allowed_callers"]


def _direct_caller(b: dict[str, Any]) -> None:
    client_tool(b)["allowed_callers"] = ["direct"]


def _renamed_property(b: dict[str, Any]) -> None:
    schema(b)["properties"] = {"query": {"type": "string"}}
    schema(b)["required"] = ["query"]


def _property_type(b: dict[str, Any]) -> None:
    schema(b)["properties"]["sql"]["type"] = "integer"


def _added_property(b: dict[str, Any]) -> None:
    schema(b)["properties"]["limit"] = {"type": "integer"}


def _required(b: dict[str, Any]) -> None:
    schema(b)["required"] = []


def _schema_for_extra_properties(b: dict[str, Any]) -> None:
    schema(b)["additionalProperties"] = {"type": "string"}


def _tool_missing(b: dict[str, Any]) -> None:
    b["tools"] = [t for t in b["tools"] if "input_schema" not in t]


def _tool_added(b: dict[str, Any]) -> None:
    b["tools"].append({"name": "other", "input_schema": {"type": "object"}})


def _tool_renamed(b: dict[str, Any]) -> None:
    client_tool(b)["name"] = "run_sql"


def _description(b: dict[str, Any]) -> None:
    client_tool(b)["description"] = "Something else."


def _strict_true(b: dict[str, Any]) -> None:
    client_tool(b)["strict"] = True


def _enum_value(b: dict[str, Any]) -> None:
    schema(b)["properties"]["sql"]["enum"] = ["SELECT 1"]


REFUSED: list[tuple[str, Edit]] = [
    ("tool_type_version", _version), ("allowed_callers_missing", _no_allowed_callers),
    ("allowed_callers_changed", _direct_caller), ("input_property_renamed", _renamed_property),
    ("input_property_type", _property_type), ("input_property_added", _added_property),
    ("required_changed", _required), ("additionalProperties_schema", _schema_for_extra_properties),
    ("tool_missing", _tool_missing), ("tool_added", _tool_added), ("tool_renamed", _tool_renamed),
    ("description", _description), ("strict_true", _strict_true), ("enum_value", _enum_value),
]


@pytest.mark.parametrize("edit", [e for _, e in REFUSED], ids=[i for i, _ in REFUSED])
def test_a_real_tool_difference_is_still_refused(edit: Edit) -> None:
    recorded = recorded_body(PTC)
    received = copy.deepcopy(recorded)
    edit(received)
    rec, inc = (MatchRequest("POST", "/v1/messages", b) for b in (recorded, received))
    failure = first_failure(TOLERANT_MATCHERS, rec, inc)
    assert failure is not None and failure.matcher == "tools.tolerant"


def test_a_changed_tool_result_relationship_is_still_refused() -> None:
    """The PTC follow-up answers the pending call: answering another id, moving the result to
    another message, or sending the assistant turn without the call is refused."""
    recorded = recorded_body(PTC, 1)
    rec = MatchRequest("POST", "/v1/messages", recorded)
    assert first_failure(TOLERANT_MATCHERS, rec, MatchRequest("POST", "/v1/messages",
                                                              recorded)) is None
    other_id = copy.deepcopy(recorded)
    other_id["messages"][-1]["content"][0]["tool_use_id"] = "toolu_01Other"
    no_call = copy.deepcopy(recorded)
    no_call["messages"][1]["content"] = [b for b in no_call["messages"][1]["content"]
                                         if b["type"] != "tool_use"]
    moved = copy.deepcopy(recorded)
    moved["messages"][-1]["content"].insert(0, {"type": "text", "text": "here you go"})
    dropped_turn = copy.deepcopy(recorded)
    dropped_turn["messages"] = dropped_turn["messages"][-1:]  # only the results: not a restart
    for received, matcher in ((other_id, "tool_use_ids.answered"),
                              (no_call, "messages.shape.tolerant"),
                              (moved, "messages.shape.tolerant"),
                              (dropped_turn, "messages.shape.tolerant")):
        failure = first_failure(TOLERANT_MATCHERS, rec, MatchRequest("POST", "/v1/messages",
                                                                     received))
        assert failure is not None and failure.matcher == matcher, (matcher, failure)


# --- conversation management and content -------------------------------------------------------

def _second_turn_with_history() -> dict[str, Any]:
    """Conversation 2 of container_reuse sent as pydantic-ai's ``message_history`` does: the
    whole first conversation, then the new question (with the container)."""
    c = cassette(REUSE)
    first, second = c.exchanges[0], c.exchanges[1]
    body = copy.deepcopy(second.request["body"])
    body["messages"] = [*first.request["body"]["messages"],
                        {"role": "assistant", "content": first.response["body"]["content"]},
                        *body["messages"]]
    return body


def test_a_continued_history_matches_a_recorded_restart() -> None:
    c = cassette(REUSE)
    first = recorded_body(REUSE, 0)
    exact = Simulator(c)
    assert send(exact, first).status == 200
    assert send(exact, _second_turn_with_history()).status == 400
    assert exact.mismatches[0].matcher == "messages.shape"
    sim = Simulator(c, matchers="tolerant")
    assert send(sim, first).status == 200
    resp = send(sim, _second_turn_with_history())
    assert resp.status == 200, resp.body
    assert sim.done and not sim.violations
    [note] = sim.served[1].normalised
    assert "recording restarted the conversation with the new question" in note
    assert "2 earlier message(s)" in note


def test_a_restart_matches_a_recorded_whole_history() -> None:
    """The other way round: the recording continued the history, the client restarts."""
    restart = recorded_body(REUSE, 1)
    recorded = MatchRequest("POST", "/v1/messages", _second_turn_with_history())
    received = MatchRequest("POST", "/v1/messages", restart)
    assert first_failure(DEFAULT_MATCHERS, recorded, received) is not None
    assert first_failure(TOLERANT_MATCHERS, recorded, received) is None
    [note] = TOLERANT_MATCHERS[4].explain(recorded, received)  # type: ignore[misc]
    assert "request restarts the conversation with the new question" in note


def test_text_as_a_string_or_text_blocks() -> None:
    body = recorded_body(ONE_COMMAND)
    body["messages"][0]["content"] = [{"type": "text", "text": "Show me the Python files,"},
                                      {"type": "text", "text": " please."}]
    assert send(Simulator(cassette(ONE_COMMAND)), body).status == 400
    sim = Simulator(cassette(ONE_COMMAND), matchers="tolerant")
    assert send(sim, body).status == 200
    assert sim.served[0].normalised == ("messages: a run of text blocks counted as one text block",)
    body["messages"][0]["content"] = [{"type": "text", "text": "Show me the Python files."}]
    sim = Simulator(cassette(ONE_COMMAND))  # one text block is a string: exact already
    assert send(sim, body).status == 200


# --- the set itself --------------------------------------------------------------------------

def test_default_matching_stays_exact() -> None:
    assert Simulator(cassette(PTC)).matchers == DEFAULT_MATCHERS == matcher_set("exact")
    assert MATCHER_SETS["tolerant"] is TOLERANT_MATCHERS
    assert resolve_matchers("tolerant") == TOLERANT_MATCHERS
    with pytest.raises(KeyError, match="unknown matcher set 'loose'; known: exact, tolerant"):
        Simulator(cassette(PTC), matchers="loose")


def test_the_header_value_is_one_ascii_line() -> None:
    body = recorded_body(PTC)
    client_tool(body)["type"] = "custom"
    body["tools"].reverse()
    sim = Simulator(cassette(PTC), matchers="tolerant")
    resp = send(sim, body)
    value = resp.headers[NORMALISED_HEADER]
    assert value.isascii() and "\n" not in value and "query_database" in value


# --- hostile input ---------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["type", "name", "input_schema", "title",
                                                       "properties", "required", "items",
                                                       "additionalProperties", "anyOf", "role",
                                                       "content", "text", "$schema", "strict",
                                                       "allowed_callers", "tool_use_id"]),
                                      inner, max_size=5), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(tools=JSON, messages=JSON, other_tools=JSON, other_messages=JSON)
def test_the_tolerant_matchers_take_any_json(tools: Any, messages: Any, other_tools: Any,
                                             other_messages: Any) -> None:
    """A client may send anything that passes the rules: keys, relations and reports never raise."""
    a = MatchRequest("POST", "/v1/messages", {"tools": tools, "messages": messages})
    b = MatchRequest("POST", "/v1/messages", {"tools": other_tools, "messages": other_messages})
    for m in TOLERANT_MATCHERS:
        m.agrees(m.key(a), m.key(b))
        assert m.key(a) == m.key(a)
        if m.explain is not None:
            m.explain(a, b)
