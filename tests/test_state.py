"""State: containers (expiry by the clock, rolling expires_at, idle checkpoints, files, REPL
state), pending programmatic calls, paused turns, pending server tools, judged from what was
served."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from _simkit import (
    PTC_CE,
    QUERY_DB,
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

from simulator.clock import FakeClock, isoformat_z
from simulator.engine import Simulator
from simulator.state import IDLE_CHECKPOINT, MAX_AGE, SimState

CONTAINER = {"id": "container_1", "expires_at": "2026-01-20T13:00:00Z"}
HAIKU = "claude-haiku-4-5-20251001"
OUTPUT = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_b",
          "content": {"type": "bash_code_execution_result", "stdout": "", "stderr": "",
                      "return_code": 0, "content": [{"type": "bash_code_execution_output",
                                                     "file_id": "file_abc"}]}}
SRV_B = {"type": "server_tool_use", "id": "srvtoolu_b", "name": "bash_code_execution",
         "input": {"command": "make chart"}}


def reuse_sim(clock: FakeClock, model: str = "claude-opus-4-6", tools: Any = None) -> tuple[Simulator, dict[str, Any]]:
    tools = tools or [PTC_CE]
    b0 = body([user("chart")], tools=tools, model=model)
    r0 = message([SRV_B, OUTPUT, text("done")], container=CONTAINER, model=model)
    b1 = body([user("chart"), assistant(SRV_B, OUTPUT, text("done")), user("again")], tools=tools,
              container="container_1", model=model)
    sim = Simulator(cassette(exchange(b0, r0), exchange(b1, message([text("ok")], id="msg_2"))),
                    clock=clock)
    assert sim(post(b0)).status == 200
    return sim, b1


def test_served_container_is_created_with_files_and_repl_state() -> None:
    clock = FakeClock()
    sim, _ = reuse_sim(clock)
    c = sim.state.containers["container_1"]
    assert c.created_at == clock.now() and c.files == {"file_abc"} and c.repl_state
    assert c.expires_at == clock.now() + timedelta(hours=1)
    assert c.to_json() == {"id": "container_1", "expires_at": isoformat_z(c.expires_at)}


def test_haiku_45_and_20250825_containers_keep_no_repl_state() -> None:
    sim, _ = reuse_sim(FakeClock(), model=HAIKU)
    assert not sim.state.containers["container_1"].repl_state
    sim, _ = reuse_sim(FakeClock(), tools=[{"type": "code_execution_20250825",
                                            "name": "code_execution"}])
    assert not sim.state.containers["container_1"].repl_state


def test_container_reused_within_30_days_even_after_idle_checkpoint() -> None:
    clock = FakeClock()
    sim, b1 = reuse_sim(clock)
    clock.advance(days=29, hours=23)
    sim.state.refresh_checkpoints()
    c = sim.state.containers["container_1"]
    assert c.checkpointed
    assert sim(post(b1)).status == 200
    assert c.restores == 1 and not c.checkpointed and c.last_used_at == clock.now()


def test_container_expires_30_days_after_creation_by_the_clock() -> None:
    clock = FakeClock()
    sim, b1 = reuse_sim(clock)
    clock.advance(days=30)
    status, etype, msg = error_of(sim(post(b1)))
    assert (status, etype) == (400, "invalid_request_error")
    assert msg == ("container: container `container_1` has expired (containers expire 30 days "
                   "after creation) and cannot be reused. Send the request again without the "
                   "`container` parameter to get a new container.")
    assert sim.violations[-1].rule_id == "container.unknown_or_expired"


def test_use_does_not_extend_the_30_day_limit_but_rolls_expires_at() -> None:
    clock = FakeClock()
    state = SimState(clock)
    c = state.touch_container("container_x")
    clock.advance(days=29, hours=23, minutes=30)
    state.touch_container("container_x")
    assert c.expires_at == c.created_at + MAX_AGE  # the rolling value is capped
    clock.advance(minutes=29)
    assert not c.expired(clock.now())
    clock.advance(minutes=1)
    assert c.expired(clock.now())
    assert c.idle(clock.now()) and clock.now() - c.last_used_at >= IDLE_CHECKPOINT


CALLER = {"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}
SRV = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
       "input": {"code": "rows = await query_database({'sql': 'x'})"}}
CALL = tool_use("toolu_p", "query_database", {"sql": "x"}, caller=CALLER)
PAUSE = message([text("Querying."), SRV, CALL], "tool_use", container=CONTAINER)


def ptc_sim() -> tuple[Simulator, dict[str, Any]]:
    tools = [PTC_CE, QUERY_DB]
    b0 = body([user("Top customers?")], tools=tools)
    b1 = body([user("Top customers?"), assistant(text("Querying."), SRV, CALL),
               user(tool_result("toolu_p", "[]"))], tools=tools, container="container_1")
    done = message([{"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_1",
                     "content": {"type": "code_execution_result", "stdout": "[]", "stderr": "",
                                 "return_code": 0, "content": []}}, text("None.")])
    sim = Simulator(cassette(exchange(b0, PAUSE), exchange(b1, done)))
    assert sim(post(b0)).status == 200
    return sim, b1


def test_programmatic_calls_become_pending_and_are_cleared_when_answered() -> None:
    sim, b1 = ptc_sim()
    [pending] = sim.state.pending_calls.values()
    assert (pending.tool_use_id, pending.caller_type, pending.tool_id, pending.container_id) == (
        "toolu_p", "code_execution_20260120", "srvtoolu_1", "container_1")
    assert sim(post(b1)).status == 200
    assert not sim.state.pending_calls


def test_client_that_strips_caller_is_judged_against_what_it_was_told() -> None:
    sim, b1 = ptc_sim()
    stripped = copy.deepcopy(b1)
    del stripped["messages"][1]["content"][2]["caller"]
    del stripped["container"]
    status, _, msg = error_of(sim(post(stripped)))
    assert status == 400 and msg.startswith("container_id is required when there are pending")
    assert sim(post(b1)).status == 200


def test_pause_turn_is_remembered_until_the_next_served_exchange() -> None:
    paused = [text("Working."), SRV_B]
    b0 = body([user("go")], tools=[PTC_CE])
    b1 = body([user("go"), assistant(*paused)], tools=[PTC_CE])
    sim = Simulator(cassette(exchange(b0, message(paused, "pause_turn")),
                             exchange(b1, message([OUTPUT, text("done")]))))
    sim(post(b0))
    assert sim.state.paused is not None and sim.state.paused.server_tool_use_ids == {"srvtoolu_b"}
    assert sim.state.pending_server_tools == {"srvtoolu_b": "bash_code_execution"}
    assert sim(post(b1)).status == 200
    assert sim.state.paused is None and not sim.state.pending_server_tools


def test_seeded_container_can_expire_too() -> None:
    clock = FakeClock()
    b = body([user("again")], tools=[PTC_CE], container="container_old")
    sim = Simulator(cassette(exchange(b, message([text("ok")]))), clock=clock)
    clock.advance(days=31)
    assert error_of(sim(post(b)))[2].startswith("container: container `container_old` has expired")


def test_files_uploaded_into_the_container_are_remembered() -> None:
    upload = {"type": "container_upload", "file_id": "file_up"}
    b0 = body([user(text("Analyse this"), upload)], tools=[PTC_CE])
    sim = Simulator(cassette(exchange(b0, message([text("ok")], container=CONTAINER))))
    assert sim(post(b0)).status == 200
    assert sim.state.containers["container_1"].files == {"file_up"}


def test_a_paused_turn_binds_only_its_own_conversation() -> None:
    paused = [text("Working."), SRV_B]
    a0 = body([user("go")], tools=[PTC_CE])
    other = body([user("something else")], tools=[PTC_CE])
    a1 = body([user("go"), assistant(*paused)], tools=[PTC_CE])
    sim = Simulator([cassette(exchange(a0, message(paused, "pause_turn")),
                              exchange(a1, message([OUTPUT, text("done")])), id="a"),
                     cassette(exchange(other, message([text("hi")])), id="b")])
    sim(post(a0))
    assert sim(post(other)).status == 200  # another conversation is not bound by A's pause
    assert sim.state.paused_for(a1) is not None
    assert sim(post(a0)).status == 400  # A itself must resend the paused content
    assert sim(post(a1)).status == 200 and sim.state.paused is None and sim.done
