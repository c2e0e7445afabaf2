"""The replay engine: matching, mismatch errors, cassette choice, recorded errors, routing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _simkit import (
    API_HEADERS,
    B1,
    B2,
    PTC_CE,
    R1,
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
    two_turns,
    user,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.engine import Simulator
from simulator.http import SimRequest
from simulator.matchers import matchers_by_name
from simulator.rules import ALL_RULES


def test_serves_exchanges_in_order_with_request_id_and_content_type() -> None:
    sim = Simulator(two_turns())
    r1, r2 = sim(post(B1)), sim.handle(post(B2))
    assert (r1.status, r1.body["id"], r2.body["id"]) == (200, "msg_1", "msg_2")
    for r in (r1, r2):
        assert r.headers["content-type"] == "application/json"
        assert r.headers["request-id"].startswith("req_011C")
    assert r1.headers["request-id"] != r2.headers["request-id"]
    assert sim.done and [e.exchange_index for e in sim.served] == [0, 1]
    assert [e.kind for e in sim.log] == ["request_received", "exchange_served"] * 2


def test_tool_result_content_is_not_compared() -> None:
    sim = Simulator(two_turns())
    sim(post(B1))
    other = json.loads(json.dumps(B2))
    other["messages"][2]["content"][0]["content"] = [text("cloudy, whatever the subject says")]
    other["messages"][2]["content"][0]["is_error"] = True
    assert sim(post(other)).status == 200


@pytest.mark.parametrize("mutate,matcher,line", [
    (lambda b: b.update(model="claude-sonnet-4-6"), "model",
     'model: recorded "claude-opus-4-6", received "claude-sonnet-4-6"'),
    (lambda b: b.update(tools=[]), "tools", "tools[get_weather]: recorded {"),
    (lambda b: b["messages"][2]["content"].append(text("thanks")), "messages.shape",
     'messages[2].content[1]: recorded absent, received {"type": "text"}'),
    (lambda b: b["messages"].__setitem__(2, user(tool_result("toolu_9"))),
     "tool_use_ids.answered",
     'messages[2].content[].tool_use_id: recorded ["toolu_1"], received ["toolu_9"]'),
])
def test_mismatch_names_matcher_the_first_difference_cassette_and_exchange(
        mutate: Any, matcher: str, line: str) -> None:
    """The 400 names the matcher and, in one line, the first differing path with both values
    (issue 37); the event carries the same difference, structured."""
    sim = Simulator(two_turns(), rules=())
    sim(post(B1))
    bad = json.loads(json.dumps(B2))
    mutate(bad)
    status, etype, msg = error_of(sim(post(bad)))
    assert (status, etype) == (400, "invalid_request_error")
    assert f"matcher `{matcher}`" in msg
    assert "exchange 1 of cassette `tests/weather` (<memory:tests/weather>)" in msg
    assert f"matcher `{matcher}`: {line}" in msg
    [mm] = sim.mismatches
    assert (mm.matcher, mm.cassette_id, mm.exchange_index, mm.refused) == (
        matcher, "tests/weather", 1, True)
    assert mm.expected != mm.received
    assert mm.difference is not None and mm.line == mm.difference.line and mm.line in msg
    assert "\n" not in mm.line and mm.line.startswith(line)
    # The exchange was not consumed: the right request still gets it.
    assert sim(post(B2)).status == 200 and sim.done


def test_answered_ids_mismatch_shows_both_id_lists() -> None:
    sim = Simulator(two_turns(), rules=())
    sim(post(B1))
    bad = json.loads(json.dumps(B2))
    bad["messages"][1] = assistant(text("Checking."), tool_use("toolu_9"))
    bad["messages"][2] = user(tool_result("toolu_9"))
    msg = error_of(sim(post(bad)))[2]
    assert 'recorded ["toolu_1"], received ["toolu_9"]' in msg


def test_lenient_matching_serves_and_records_the_mismatch() -> None:
    sim = Simulator(two_turns(), strict_matching=False)
    resp = sim(post({**B1, "model": "claude-sonnet-4-6"}))
    assert resp.status == 200 and resp.body["id"] == "msg_1"
    [mm] = sim.mismatches
    assert mm.matcher == "model" and not mm.refused


def test_custom_matchers_compare_more() -> None:
    strict = Simulator(two_turns(), matchers=matchers_by_name(["method", "path", "messages"]))
    strict(post(B1))
    other = json.loads(json.dumps(B2))
    other["messages"][2]["content"][0]["content"] = "rainy"
    assert "matcher `messages`" in error_of(strict(post(other)))[2]
    with pytest.raises(KeyError, match="unknown matcher"):
        matchers_by_name(["nope"])


def test_first_cassette_whose_next_exchange_matches_is_chosen() -> None:
    other_body = body([user("Hello")])
    a = cassette(exchange(other_body, message([text("A")], id="msg_a")), id="a")
    b = two_turns("b")
    sim = Simulator([a, b])
    assert sim(post(B1)).body["id"] == "msg_1"
    assert sim(post(other_body)).body["id"] == "msg_a"
    assert sim(post(B2)).body["id"] == "msg_2"
    assert [(e.cassette_id, e.exchange_index) for e in sim.served] == [("b", 0), ("a", 0), ("b", 1)]


def test_exhausted_cassette_answers_400_naming_it() -> None:
    sim = Simulator(cassette(exchange(B1, R1), id="one"))
    sim(post(B1))
    status, _, msg = error_of(sim(post(B1)))
    assert status == 400 and "`one`" in msg and "has been served" in msg


def test_recorded_error_is_replayed_verbatim() -> None:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
           "request_id": "req_recorded"}
    c = cassette(exchange(B1, err, 529, headers={"Request-Id": "req_recorded",
                                                 "Retry-After": "3", "Content-Length": "99"}),
                 exchange(B1, R1))
    sim = Simulator(c)
    r = sim(post(B1))
    assert (r.status, r.body) == (529, err)
    assert r.headers["request-id"] == "req_recorded" and r.headers["retry-after"] == "3"
    assert "content-length" not in r.headers
    assert sim(post(B1)).status == 200


def test_expect_rule_exchange_whose_request_passes_is_reported() -> None:
    c = cassette(exchange(B1, {"type": "error"}, 400, expect_rule="messages.roles.alternate"))
    sim = Simulator(c)
    status, _, msg = error_of(sim(post(B1)))
    assert status == 400 and "expects this request to break rule `messages.roles.alternate`" in msg
    [u] = sim.unmet
    assert (u.expect_rule, u.got_rule, u.exchange_index) == ("messages.roles.alternate", None, 0)
    assert not sim.done


def test_expect_rule_exchange_broken_by_another_rule_is_reported() -> None:
    bad = body([user("a"), user("b")], tools=[{"type": "bash_20250124", "name": "sh"}])
    c = cassette(exchange(bad, {"type": "error"}, 400, expect_rule="messages.roles.alternate"))
    sim = Simulator(c, rules=ALL_RULES)
    assert "Input should be 'bash'" in error_of(sim(post(bad)))[2]
    [u] = sim.unmet
    assert u.got_rule == "tools.fixed_type_name"
    answered = [v.rule_id for v in sim.violations if v.answered]
    assert answered == ["tools.fixed_type_name"]
    assert {v.rule_id for v in sim.violations} == {"tools.fixed_type_name", "messages.roles.alternate"}


def test_rule_violation_does_not_consume_a_plain_exchange() -> None:
    sim = Simulator(two_turns())
    sim(post(B1))
    bad = json.loads(json.dumps(B2))
    bad["messages"][2]["content"].insert(0, text("Result:"))
    assert sim(post(bad)).status == 400
    assert sim(post(B2)).status == 200 and sim.done


@pytest.mark.parametrize("req,status,etype,fragment", [
    (SimRequest("GET", "/v1/nothing", API_HEADERS), 404, "not_found_error", "could not be found"),
    (SimRequest("GET", "/v1/messages", API_HEADERS), 405, "invalid_request_error", "use POST"[4:]),
    (SimRequest("POST", "/v1/messages", API_HEADERS, body=b"{nope"), 400, "invalid_request_error",
     "The request body is not valid JSON: "),
    (SimRequest("POST", "/v1/messages", API_HEADERS, body=b"\xff\xfe"), 400, "invalid_request_error",
     "The request body is not valid JSON: invalid UTF-8"),
    (SimRequest("POST", "/v1/messages", API_HEADERS, body=b"[1]"), 400, "invalid_request_error",
     "valid dictionary or object"),
    (SimRequest("POST", "/v1/messages", API_HEADERS, body=b" " * (32 * 1024 * 1024 + 1)), 413,
     "request_too_large", "maximum allowed"),
])
def test_requests_the_engine_cannot_serve(req: SimRequest, status: int, etype: str,
                                          fragment: str) -> None:
    sim = Simulator(two_turns())
    r = sim(req)
    got = error_of(r)
    assert got[:2] == (status, etype) and fragment in got[2]
    assert r.headers["request-id"] == r.body["request_id"]
    assert r.headers["content-type"] == "application/json"
    assert sim.log[-1].kind == "rejected"


def test_path_with_query_and_trailing_slash_is_the_messages_path() -> None:
    sim = Simulator(two_turns())
    assert sim(post(B1, path="/v1/messages/?beta=true")).status == 200


def test_the_engine_answers_the_messages_api_only() -> None:
    """Other APIs are routed beside the engine (simulator.routes.Routes), not inside it."""
    sim = Simulator(two_turns())
    assert not hasattr(sim, "mount")
    r = sim(SimRequest("GET", "/v1/models/claude-opus-4-6", API_HEADERS))
    assert r.status == 404 and r.body["error"]["type"] == "not_found_error"
    assert r.headers["request-id"] == r.body["request_id"]


def test_request_ids_are_reproducible_by_seed() -> None:
    a, b = Simulator(two_turns(), seed=3), Simulator(two_turns(), seed=3)
    assert a(post(B1)).headers["request-id"] == b(post(B1)).headers["request-id"]


def test_container_param_from_a_cassette_is_known_at_start() -> None:
    b = body([user("again")], tools=[PTC_CE], container="container_prev")
    sim = Simulator(cassette(exchange(b, message([text("ok")]))))
    assert sim(post(b)).status == 200
    assert "container_prev" in sim.state.containers


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(
                               st.sampled_from(["model", "messages", "tools", "role", "content",
                                                "type", "id", "tool_use_id", "container",
                                                "tool_choice", "stream", "name", "input"]),
                               c, max_size=4), max_leaves=12)


@pytest.mark.parametrize("strict", [True, False])
@settings(max_examples=30, deadline=None)
@given(value=json_values)
def test_any_json_body_gets_an_api_shaped_4xx_never_a_crash(value: Any, strict: bool) -> None:
    sim = Simulator(two_turns(), strict_matching=strict, rules=ALL_RULES if strict else ())
    r = sim(post(value))
    assert r.headers["request-id"] and r.headers["content-type"]
    if r.status != 200:
        assert 400 <= r.status < 500
        assert r.body["type"] == "error" and r.body["error"]["message"]
    assert not [e for e in sim.notes if "could not judge" in e.text]


def test_log_events_serialise_for_reports() -> None:
    sim = Simulator(two_turns(), rules=ALL_RULES)
    sim(post(B1))
    sim(post(body([user("a"), user("b")])))
    rows = [e.to_json() for e in sim.log]
    assert [r["kind"] for r in rows] == ["request_received", "exchange_served", "request_received",
                                         "rule_violated"]
    assert rows[3]["rule_id"] == "messages.roles.alternate" and rows[3]["body"]["messages"]
    json.dumps(rows)
    assert [i for _, i in sim.remaining()] == [1] and not sim.done


def test_concurrent_requests_are_served_one_at_a_time() -> None:
    from concurrent.futures import ThreadPoolExecutor
    n = 40
    c = cassette(*[exchange(B1, message([text(str(i))], id=f"msg_{i}")) for i in range(n)])
    sim = Simulator(c)
    with ThreadPoolExecutor(8) as pool:
        ids = sorted(r.body["id"] for r in pool.map(lambda _: sim(post(B1)), range(n)))
    assert ids == sorted(f"msg_{i}" for i in range(n)) and sim.done
    assert len({e.request_id for e in sim.served}) == n


@pytest.mark.parametrize("depth", [150, 5000])
def test_deeply_nested_json_is_refused_not_crashed(depth: int) -> None:
    raw = b'{"model":"m","max_tokens":1,"messages":' + b"[" * depth + b"]" * depth + b"}"
    sim = Simulator(two_turns())
    status, etype, msg = error_of(sim(SimRequest("POST", "/v1/messages", API_HEADERS, body=raw)))
    assert (status, etype) == (400, "invalid_request_error") and "nested" in msg


def test_log_limit_keeps_the_latest_events_and_marks_survive_trimming() -> None:
    sim = Simulator(cassette(*[exchange(B1, R1) for _ in range(10)]), log_limit=5)
    sim(post(B1))
    mark = sim.mark()
    for _ in range(4):
        sim(post(B1))
    assert len(sim.log) == 5 and sim.log_dropped == 5
    assert [e.kind for e in sim.events_since(mark)] == [e.kind for e in sim.log]
    assert sim.events_since(sim.mark()) == []
    unbounded = Simulator(two_turns())
    unbounded(post(B1))
    assert unbounded.events_since(0) == unbounded.log and unbounded.log_dropped == 0
