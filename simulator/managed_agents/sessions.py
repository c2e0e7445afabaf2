"""Sessions and their events: the custom-tool flow of PROTOCOL.md §7 and seed 004.

1. The agent emits ``agent.custom_tool_use`` events (``agent.tool_use`` for a tool of the built-in
   toolset, answered by ``user.tool_result``), then ``session.status_idle`` with
   ``stop_reason: {"type": "requires_action", "event_ids": [...]}``.
2. Each ``user.custom_tool_result`` (``custom_tool_use_id`` = the event id) is processed on receipt
   and echoed with ``processed_at`` set.
3. Resolving fewer than all re-emits ``session.status_idle`` with the remainder; resolving all
   sends the session back to ``session.status_running`` and the agent's next turn.

The agent is a :class:`~.scenario.Scenario`. Functions here take the :class:`~.store.Store` with its
lock held and return the events they appended.
"""

from __future__ import annotations

from typing import Any

from simulator.registry import RESERVED_AGENT_TOOL_NAMES

from .scenario import Scenario
from .state import Agent, Session, WorkItem, ts
from .store import Store

#: Event types a client may send (``BetaManagedAgentsSendSessionEvents``).
SENDABLE = ("user.message", "user.interrupt", "user.tool_confirmation", "user.custom_tool_result",
            "user.define_outcome", "user.tool_result", "system.message")
#: Sent events processed on receipt (echoed with ``processed_at`` set) [D MA-EV].
PROCESSED_ON_RECEIPT = ("user.custom_tool_result", "user.tool_result", "user.define_outcome")
RESULT_BLOCK_TYPES = ("text", "image", "document", "search_result")
#: Result event type -> (its id field, the tool-use event it answers). Built-in tools of a
#: self-hosted environment (``agent.tool_use``) are answered like custom ones [S].
RESULTS = {"user.custom_tool_result": ("custom_tool_use_id", "agent.custom_tool_use"),
           "user.tool_result": ("tool_use_id", "agent.tool_use")}


def result_use_id(ev: dict[str, Any]) -> str | None:
    """The tool-use id a result event answers (None for other events)."""
    field = RESULTS.get(str(ev.get("type")))
    return str(ev[field[0]]) if field else None


def append(store: Store, session: Session, event: dict[str, Any]) -> dict[str, Any]:
    event.setdefault("id", store.ids.new("sevt"))
    event.setdefault("processed_at", ts(store.now()))
    session.events.append(event)
    session.updated_at = store.now()
    store.changed()
    return event


def create_session(store: Store, agent: Agent, environment_id: str, scenario: Scenario, *,
                   metadata: dict[str, str] | None = None, title: str | None = None) -> Session:
    now = store.now()
    session = Session(store.ids.new("sesn"), agent, environment_id, scenario, now, now,
                      dict(metadata or {}), title)
    store.sessions[session.id] = session
    queue_work(store, session)
    store.changed()
    return session


def queue_work(store: Store, session: Session) -> WorkItem | None:
    """Queue a work item for the session unless one is still live (self-hosted environments)."""
    env = store.environments.get(session.environment_id)
    if env is None or env.config.get("type") != "self_hosted":
        return None
    if any(w.state != "stopped" for w in store.work_for_session(session.id)):
        return None
    item = WorkItem(store.ids.new("work"), env.id, session.id, store.now(),
                    ttl_seconds=env.lease_ttl_seconds)
    store.work[item.id] = item
    store.changed()
    return item


def check_event(ev: Any) -> str | None:
    """Why a sent event is malformed, or None."""
    if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
        return "each event must be an object with a string `type`"
    kind = ev["type"]
    if kind not in SENDABLE:
        return f"`{kind}` is not an event type a client can send; send one of {', '.join(SENDABLE)}"
    if kind in RESULTS:
        id_field, use_type = RESULTS[kind]
        if not isinstance(ev.get(id_field), str):
            return f"`{kind}` requires `{id_field}` (the {use_type} event id)"
        if "is_error" in ev and ev["is_error"] is not None and not isinstance(ev["is_error"], bool):
            return "`is_error` must be a boolean"
        content = ev.get("content")
        if content is not None:
            if not isinstance(content, list):
                return "`content` must be a list of content blocks"
            for block in content:
                if not isinstance(block, dict) or block.get("type") not in RESULT_BLOCK_TYPES:
                    return f"`{kind}.content` blocks must be one of " + ", ".join(RESULT_BLOCK_TYPES)
    if kind == "user.message" and not isinstance(ev.get("content"), list):
        return "`user.message` requires `content`, a list of content blocks"
    return None


def receive(store: Store, session: Session, ev: dict[str, Any], *,
            settle_now: bool = True) -> dict[str, Any]:
    """Persist one sent event and let the agent react. Returns the echo.

    Results sent together in one request are settled together (``settle_now=False`` for all but
    the last): the session re-emits one idle with the remainder, or runs its next turn.
    """
    kind = ev["type"]
    echo = dict(ev)
    echo["id"] = store.ids.new("sevt")
    echo["processed_at"] = ts(store.now()) if kind in PROCESSED_ON_RECEIPT else None
    session.events.append(dict(echo, processed_at=ts(store.now())))
    store.changed()
    if kind in RESULTS:
        use_id = str(result_use_id(ev))
        session.results.setdefault(use_id, []).append(echo)
        if use_id in session.pending:
            session.pending.remove(use_id)
            session.resolved = True
        if settle_now:
            settle(store, session)
    elif kind == "user.message":
        if session.status == "idle" and not session.pending:
            if session.finished:
                run_final(store, session)
            else:
                run_turn(store, session)
            queue_work(store, session)
    elif kind == "user.interrupt":
        session.pending.clear()
        session.finished = True
        idle(store, session, {"type": "end_turn"})
    return echo


def settle(store: Store, session: Session) -> None:
    """After results arrived: idle again with the remainder, or run the next turn."""
    if not session.resolved:
        return
    session.resolved = False
    if session.pending:
        idle(store, session, {"type": "requires_action", "event_ids": list(session.pending)})
    else:
        run_turn(store, session)


def idle(store: Store, session: Session, stop_reason: dict[str, Any]) -> None:
    session.status = "idle"
    append(store, session, {"type": "session.status_idle", "stop_reason": stop_reason,
                            "stop_details": None})


def running(store: Store, session: Session) -> None:
    if session.status != "running":
        session.status = "running"
        append(store, session, {"type": "session.status_running"})


def run_turn(store: Store, session: Session) -> None:
    """Run the scenario's next turn (or its ending)."""
    running(store, session)
    turns = session.scenario.turns
    if session.turn >= len(turns):
        run_final(store, session)
        return
    turn = turns[session.turn]
    session.turn += 1
    if turn.text:
        append(store, session, {"type": "agent.message",
                                "content": [{"type": "text", "text": turn.text}]})
    if not turn.tool_uses:
        run_turn(store, session)
        return
    for use in turn.tool_uses:
        if use.name in RESERVED_AGENT_TOOL_NAMES:  # the built-in toolset: agent.tool_use
            ev = append(store, session, {"type": "agent.tool_use", "name": use.name,
                                         "input": dict(use.input),
                                         "evaluated_permission": "allow"})
        else:
            ev = append(store, session, {"type": "agent.custom_tool_use", "name": use.name,
                                         "input": dict(use.input)})
        session.pending.append(ev["id"])
    idle(store, session, {"type": "requires_action", "event_ids": list(session.pending)})


def run_final(store: Store, session: Session) -> None:
    running(store, session)
    session.finished = True
    append(store, session, {"type": "agent.message",
                            "content": [{"type": "text", "text": session.scenario.final_text}]})
    idle(store, session, {"type": "end_turn"})


def terminate(store: Store, session: Session, *, archived: bool = False) -> None:
    """End the session: ``session.status_terminated``; its live work items are asked to stop."""
    if session.status == "terminated":
        return
    session.status = "terminated"
    if archived:
        session.archived_at = store.now()
    append(store, session, {"type": "session.status_terminated"})
    for item in store.work_for_session(session.id):
        if item.state not in ("stopping", "stopped"):
            item.state = "stopping" if item.acknowledged_at else "stopped"
            item.stop_requested_at = store.now()
            if item.state == "stopped":
                item.stopped_at = store.now()
    store.changed()
