"""Schemas of Managed Agents session events and self-hosted environment work (PROTOCOL.md §7)."""

from __future__ import annotations

from ..sources import SEED_MANAGED_AGENTS, protocol, seed
from ._core import (
    ANY_OBJ,
    BOOL,
    NONNEG,
    STR,
    Ctx,
    Schema,
    by_type,
    cite,
    const,
    document,
    enum,
    nullable,
    obj,
    ref,
    str_array,
)

NAME = "managed_agents"
_EVENTS = protocol("7. Managed Agents: Events", "S")
_FLOW = seed(SEED_MANAGED_AGENTS, "Melayani alat kustom")
_WORK = protocol("7. Managed Agents: Self-hosted work API", "S")
#: ``session.status_idle.stop_reason.type`` values (PROTOCOL.md §7).
SESSION_STOP_REASONS = ("end_turn", "requires_action", "retries_exhausted", "budget_reached",
                        "refusal")
WORK_STATES = ("queued", "starting", "active", "stopping", "stopped")
_TIME = {"type": "string"}


def _content(ctx: Ctx) -> Schema:
    return {"type": "array", "items": by_type(ctx, {
        "text": ref("text", "blocks"), "image": ref("image", "blocks"),
        "document": ref("document", "blocks"),
        "search_result": obj(ctx, {"type": const("search_result")}, ["type"]),
        "redacted": obj(ctx, {"type": const("redacted")}, ["type"]),
    }, what="Managed Agents content block type", source=cite(_EVENTS))}


def _persisted(ctx: Ctx, t: str, props: dict[str, Schema], required: list[str], *,
               sent: bool = False) -> Schema:
    """An event: persisted ones carry id and processed_at; events a client sends may omit them."""
    base = {"type": const(t), "id": STR, "processed_at": nullable(_TIME),
            "session_thread_id": nullable(STR)}
    base.update(props)
    req = ["type", *required] if sent else ["type", "id", "processed_at", *required]
    return obj(ctx, base, req, lenient_required=["type", *required])


def session_stop_reason(ctx: Ctx) -> Schema:
    variants = {t: obj(ctx, {"type": const(t)}, ["type"]) for t in SESSION_STOP_REASONS}
    variants["requires_action"] = obj(ctx, {"type": const("requires_action"),
                                            "event_ids": str_array()}, ["type", "event_ids"],
                                      comment=_FLOW.cite())
    return by_type(ctx, variants, what="session stop_reason type", source=cite(_EVENTS))


def events(ctx: Ctx) -> dict[str, Schema]:
    content = _content(ctx)
    status = {t: _persisted(ctx, t, {}, []) for t in
              ("session.status_running", "session.status_terminated", "session.status_rescheduled")}
    retry = obj(ctx, {"type": {"enum": ["retrying", "exhausted", "terminal"]}}, ["type"])
    return {
        "agent.custom_tool_use": _persisted(ctx, "agent.custom_tool_use",
                                            {"name": STR, "input": ANY_OBJ}, ["name", "input"]),
        "user.custom_tool_result": _persisted(ctx, "user.custom_tool_result", {
            "custom_tool_use_id": STR, "content": nullable(content), "is_error": nullable(BOOL)},
            ["custom_tool_use_id"], sent=True),
        "agent.tool_use": _persisted(ctx, "agent.tool_use", {
            "name": STR, "input": ANY_OBJ,
            "evaluated_permission": nullable({"enum": ["allow", "ask", "deny"]}),
            "evaluation": nullable(ANY_OBJ)}, ["name", "input"]),
        "user.tool_result": _persisted(ctx, "user.tool_result", {
            "tool_use_id": STR, "content": nullable(content), "is_error": nullable(BOOL)},
            ["tool_use_id"], sent=True),
        "user.tool_confirmation": _persisted(ctx, "user.tool_confirmation", {
            "tool_use_id": STR, "result": {"enum": ["allow", "deny"]},
            "deny_message": nullable(STR)}, ["tool_use_id", "result"], sent=True),
        "user.message": _persisted(ctx, "user.message", {"content": content}, ["content"], sent=True),
        "user.interrupt": _persisted(ctx, "user.interrupt", {}, [], sent=True),
        "agent.message": _persisted(ctx, "agent.message", {"content": content}, ["content"]),
        **status,
        "session.status_idle": _persisted(ctx, "session.status_idle", {
            "stop_reason": ref("session_stop_reason"), "stop_details": nullable(ANY_OBJ)},
            ["stop_reason"]),
        "session.error": _persisted(ctx, "session.error", {"error": obj(ctx, {
            "type": STR, "message": STR, "retry_status": retry}, ["type", "message"])}, ["error"]),
        "event_start": obj(ctx, {"type": const("event_start"), "event": obj(ctx, {
            "type": STR, "id": STR}, ["type", "id"])}, ["type", "event"]),
        "event_delta": obj(ctx, {"type": const("event_delta"), "event_id": STR, "delta": obj(ctx, {
            "type": const("content_delta"), "index": NONNEG,
            "content": ref("text", "blocks")}, ["type", "index", "content"])},
            ["type", "event_id", "delta"]),
    }


def work_item(ctx: Ctx) -> Schema:
    state = enum(ctx, WORK_STATES, cite(_WORK), what="work state")
    return obj(ctx, {
        "type": const("work"), "id": STR, "environment_id": STR, "state": state,
        "data": obj(ctx, {"type": const("session"), "id": STR}, ["type", "id"]),
        "metadata": {"type": "object", "additionalProperties": nullable(STR)},
        "secret": nullable(STR), "created_at": _TIME,
        **{k: nullable(_TIME) for k in ("acknowledged_at", "started_at", "latest_heartbeat_at",
                                        "stop_requested_at", "stopped_at")},
    }, ["type", "id", "environment_id", "state", "data", "created_at"],
        lenient_required=["type", "id", "state"], comment=_WORK.cite())


def work_heartbeat(ctx: Ctx) -> Schema:
    state = enum(ctx, WORK_STATES, cite(_WORK), what="work state")
    return obj(ctx, {"type": const("work_heartbeat"), "last_heartbeat": STR,
                     "lease_extended": BOOL, "state": state, "ttl_seconds": NONNEG},
               ["type", "last_heartbeat", "lease_extended", "state", "ttl_seconds"],
               comment=_WORK.cite())


def work_queue_stats(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": const("work_queue_stats"), "depth": NONNEG, "pending": NONNEG,
                     "oldest_queued_at": nullable(_TIME), "workers_polling": nullable(NONNEG)},
               ["type", "depth", "pending"], comment=_WORK.cite())


def build(ctx: Ctx) -> Schema:
    evs = events(ctx)
    defs: dict[str, Schema] = {f"event.{k}": v for k, v in evs.items()}
    defs["ma_event"] = by_type(ctx, {k: ref(f"event.{k}") for k in evs},
                               what="Managed Agents event type", source=cite(_EVENTS))
    defs["session_stop_reason"] = session_stop_reason(ctx)
    defs["work_item"] = work_item(ctx)
    defs["work_heartbeat"] = work_heartbeat(ctx)
    defs["work_queue_stats"] = work_queue_stats(ctx)
    defs["ma_agent"] = obj(ctx, {"name": STR, "model": {}, "description": nullable(STR),
                                 "system": nullable(STR),
                                 "tools": ref("ma_agent_tools", "tools")}, [],
                           comment="agent create/update body: the tools array and its rules")
    return document(ctx, NAME, defs, title="Managed Agents events and environment work")
