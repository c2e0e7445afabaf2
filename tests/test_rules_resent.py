"""Issue 37: ``messages.resent_turn.unchanged``, a served assistant turn comes back as served.

Each case replays a corpus cassette up to a continuation and sends the recorded continuation with
its copy of the served turn edited: an emptied input (what a streamed framework does when a
block arrived whole in ``content_block_start``) and a dropped pending ``server_tool_use`` are
refused, on a streamed and a non-streamed cassette, naming the block and the field; what the
docs and live captures allow to differ (``LATITUDE``) is served.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from simulator.cassette import Cassette
from simulator.engine import Simulator
from simulator.http import SimRequest, SimResponse
from simulator.routes import load_cassettes
from simulator.rules import RULES
from simulator.rules.resent import LATITUDE

RULE = "messages.resent_turn.unchanged"
ONE_COMMAND = "bash/bash_20250124/one_command{}.json"
DEFERRED = "mixed/code_execution_20250825/deferred_server_result{}.json"
PTC = "ptc/code_execution_20260120/pause_resume{}.json"
STREAMED = ("", "_streamed")

Edit = Callable[[dict[str, Any]], None]


def cassette(name: str) -> Cassette:
    [c] = load_cassettes(name)
    return c


def send(sim: Simulator, body: dict[str, Any]) -> SimResponse:
    return sim(SimRequest("POST", "/v1/messages", {"x-api-key": "test-key",
                                                   "anthropic-version": "2023-06-01"}, {},
                          json.dumps(body).encode()))


def continued(name: str, edit: Edit, **options: Any) -> tuple[Simulator, SimResponse]:
    """Serve exchange 0 of ``name`` as recorded, then send exchange 1's request edited."""
    c = cassette(name)
    sim = Simulator(c, **options)
    assert send(sim, c.exchanges[0].request["body"]).status == 200
    body = copy.deepcopy(c.exchanges[1].request["body"])
    edit(body)
    return sim, send(sim, body)


def served_turn(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The copy of the served turn: the request's assistant message."""
    content: list[dict[str, Any]] = next(m for m in body["messages"]
                                         if m["role"] == "assistant")["content"]
    return content


def block(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(b for b in served_turn(body) if b["type"] == kind)


def refused(resp: SimResponse, sim: Simulator) -> str:
    assert resp.status == 400, resp.body
    assert resp.body["error"]["type"] == "invalid_request_error"
    [v] = [v for v in sim.violations if v.answered]
    assert v.rule_id == RULE, v
    message: str = resp.body["error"]["message"]
    assert message == v.message and "\n" not in message
    return message


@pytest.mark.parametrize("variant", STREAMED)
def test_an_emptied_tool_use_input_is_refused(variant: str) -> None:
    sim, resp = continued(ONE_COMMAND.format(variant),
                          lambda b: block(b, "tool_use").update(input={}))
    said = refused(resp, sim)
    assert said.startswith("messages.1.content.1.input: `tool_use` block with id `toolu_")
    assert ': served {"command": "' in said and ", sent back {};" in said


@pytest.mark.parametrize("variant", STREAMED)
def test_an_emptied_server_tool_use_input_is_refused(variant: str) -> None:
    sim, resp = continued(DEFERRED.format(variant),
                          lambda b: block(b, "server_tool_use").update(input={}))
    said = refused(resp, sim)
    assert said.startswith("messages.1.content.1.input: `server_tool_use` block with id `srvtoolu_")


def _drop_server_tool_use(b: dict[str, Any]) -> None:
    content = served_turn(b)
    content[:] = [x for x in content if x["type"] != "server_tool_use"]


@pytest.mark.parametrize("variant", STREAMED)
def test_a_dropped_pending_server_tool_use_is_refused(variant: str) -> None:
    """Before this rule only the shape matcher noticed (and only under a recording)."""
    sim, resp = continued(DEFERRED.format(variant), _drop_server_tool_use)
    said = refused(resp, sim)
    assert said.startswith("messages.1: this copy of an assistant turn lacks its "
                           "`server_tool_use` block with id `srvtoolu_")
    assert "served waiting for its result" in said


@pytest.mark.parametrize("variant", STREAMED)
def test_ptc_a_dropped_code_execution_call_and_a_changed_caller_are_refused(variant: str) -> None:
    sim, resp = continued(PTC.format(variant), _drop_server_tool_use)
    assert "lacks its `server_tool_use`" in refused(resp, sim)

    def other_caller(b: dict[str, Any]) -> None:
        block(b, "tool_use")["caller"] = {"type": "direct"}

    sim, resp = continued(PTC.format(variant), other_caller)
    said = refused(resp, sim)
    assert ".caller: `tool_use` block with id `toolu_" in said
    assert 'sent back {"type": "direct"}' in said


def test_a_changed_result_and_a_moved_call_are_refused() -> None:
    c = cassette(DEFERRED.format(""))
    sim = Simulator(c)
    for ex in c.exchanges:
        assert send(sim, ex.request["body"]).status == 200
    # a third request continuing the whole conversation, its result block rewritten
    result = c.exchanges[1].response["body"]["content"]
    body = copy.deepcopy(c.exchanges[1].request["body"])
    body["messages"] += [{"role": "assistant", "content": copy.deepcopy(result)},
                         {"role": "user", "content": "thanks"}]
    body["messages"][3]["content"][0]["content"]["stdout"] = "rewritten"
    sim2 = Simulator(c)
    for ex in c.exchanges:
        send(sim2, ex.request["body"])
    said = refused(send(sim2, body), sim2)
    assert said.startswith("messages.3.content.0.content: `bash_code_execution_tool_result` block "
                           "with tool_use_id `srvtoolu_")
    assert "rewritten" in said
    moved = copy.deepcopy(c.exchanges[1].request["body"])
    turn = served_turn(moved)
    turn[1], turn[2] = turn[2], turn[1]
    sim3 = Simulator(c)
    send(sim3, c.exchanges[0].request["body"])
    said = refused(send(sim3, moved), sim3)
    assert "comes back before the `server_tool_use` block" in said


# --- what may differ ----------------------------------------------------------------------------

def _reorder_keys(b: dict[str, Any]) -> None:
    for m in b["messages"]:
        if isinstance(m["content"], list):
            m["content"] = [dict(reversed(list(x.items()))) for x in m["content"]]
            for x in m["content"]:
                if isinstance(x.get("input"), dict):
                    x["input"] = dict(reversed(list(x["input"].items())))


def _direct_caller_added(b: dict[str, Any]) -> None:
    for x in served_turn(b):
        if x["type"] in ("tool_use", "server_tool_use") and "caller" not in x:
            x["caller"] = {"type": "direct"}


def _cache_control(b: dict[str, Any]) -> None:
    for x in served_turn(b):
        x["cache_control"] = {"type": "ephemeral"}


def _text_rewritten(b: dict[str, Any]) -> None:
    content = served_turn(b)
    content[:] = [{"type": "text", "text": "Let me check."} if x["type"] == "text" else x
                  for x in content]


def _text_dropped(b: dict[str, Any]) -> None:
    content = served_turn(b)
    content[:] = [x for x in content if x["type"] != "text"]


CONFORMANT: list[tuple[str, Edit]] = [
    ("key_order", _reorder_keys), ("direct_caller_added", _direct_caller_added),
    ("cache_control", _cache_control), ("text_rewritten", _text_rewritten),
    ("text_dropped", _text_dropped),
]


@pytest.mark.parametrize("name", [ONE_COMMAND, DEFERRED])
@pytest.mark.parametrize("variant", STREAMED)
@pytest.mark.parametrize("edit", [e for _, e in CONFORMANT], ids=[i for i, _ in CONFORMANT])
def test_what_the_docs_allow_to_differ_is_served(name: str, variant: str, edit: Edit) -> None:
    sim, resp = continued(name.format(variant), edit, matchers="tolerant")
    assert not sim.violations, sim.violations
    # a dropped text block changes the turn's shape: matching (not a rule) decides on it
    assert resp.status == 200 or edit is _text_dropped and sim.mismatches, resp.body


def test_a_finished_server_call_dropped_with_its_result_is_served() -> None:
    """Live capture pydai__492: a turn resent without a finished tool search pair, answered 200.
    Here the call's result was deferred to the next turn: both left out, the copy is served;
    the result kept without its call, it is not."""
    c = cassette(DEFERRED.format(""))
    later = c.exchanges[1].response["body"]["content"]
    assert later[0]["type"] == "bash_code_execution_tool_result"

    def third(keep_result: bool) -> dict[str, Any]:
        body = copy.deepcopy(c.exchanges[1].request["body"])
        _drop_server_tool_use(body)
        reply = copy.deepcopy(later) if keep_result else [x for x in later if x["type"] == "text"]
        body["messages"] += [{"role": "assistant", "content": reply},
                             {"role": "user", "content": "and now?"}]
        return body

    for keep_result in (False, True):
        sim = Simulator(c, matchers="tolerant")
        for ex in c.exchanges:
            assert send(sim, ex.request["body"]).status == 200
        resp = send(sim, third(keep_result))
        mine = [v for v in sim.violations if v.rule_id == RULE]
        if keep_result:
            assert mine and "lacks its `server_tool_use`" in mine[0].message
            assert "its `bash_code_execution_tool_result` block is sent back" in mine[0].message
        else:
            assert not mine, mine
            assert resp.status == 400 and not sim.violations  # after the end of the recording


def test_a_paused_turn_may_be_modified() -> None:
    """Seed 000: a pause_turn response is resent as-is, or modified to interrupt."""
    name = "code_execution/code_execution_20250825/pause_turn.json"
    sim, resp = continued(name, _text_rewritten)
    assert resp.status == 200, resp.body


def test_the_rule_is_registered_with_its_latitude() -> None:
    r = RULES[RULE]
    assert r.default and r.level == "MUST" and r.source.document == "PROTOCOL.md"
    assert len(LATITUDE) >= 6 and all(x.what and x.sentence and x.source for x in LATITUDE)


def test_disabled_it_judges_nothing() -> None:
    sim, resp = continued(ONE_COMMAND.format(""), lambda b: block(b, "tool_use").update(input={}),
                          disabled_rules=[RULE])
    assert resp.status == 200 and not sim.violations
