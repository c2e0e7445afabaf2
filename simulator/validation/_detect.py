"""Guess what a JSON object holds, and unwrap real-traffic captures."""

from __future__ import annotations

from typing import Any

from .. import registry
from ..schemas import BLOCK_TYPES

SSE_EVENT_TYPES = frozenset({"message_start", "content_block_start", "content_block_delta",
                             "content_block_stop", "message_delta", "message_stop", "ping", "error"})
MA_STREAM_TYPES = frozenset({"event_start", "event_delta"})
WORK_KINDS = {"work": "work_item", "work_heartbeat": "work_heartbeat",
              "work_queue_stats": "work_queue_stats"}
#: ``kind`` of a ``../shared/real_traffic`` capture -> validation kind.
CAPTURE_KINDS = {"request": "request", "response": "response", "sse_events": "sse_events",
                 "error": "error"}


def _is_sse_item(x: Any) -> bool:
    if not isinstance(x, dict):
        return False
    if "event" in x and "data" in x:
        return True
    return x.get("type") in SSE_EVENT_TYPES


def detect_kind(obj: Any) -> str:
    """The kind of ``obj`` (a key of :data:`simulator.schemas.KINDS`), or ``"unknown"``."""
    if isinstance(obj, list):
        return "sse_events" if obj and all(_is_sse_item(x) for x in obj) else "unknown"
    if not isinstance(obj, dict):
        return "unknown"
    t = obj.get("type")
    if t == "error" and "error" in obj:
        return "error"
    if "messages" in obj and ("model" in obj or "max_tokens" in obj):
        return "request"
    if "role" in obj and "content" in obj:
        if t == "message" or (obj.get("role") == "assistant"
                              and any(k in obj for k in ("id", "stop_reason", "usage"))):
            return "response"
        return "message"
    if t == "message":
        return "response"
    if t in SSE_EVENT_TYPES:
        return "sse_event"
    if isinstance(t, str) and t in WORK_KINDS:
        return WORK_KINDS[t]
    if isinstance(t, str) and ("." in t or t in MA_STREAM_TYPES):
        return "ma_event"
    if t == "agent_toolset_20260401":
        return "ma_tool"
    if "tools" in obj and isinstance(obj.get("tools"), list) and "messages" not in obj:
        return "ma_agent"
    if (isinstance(t, str) and t in registry.TOOLS) or t == "mcp_toolset" or "input_schema" in obj:
        return "tool_definition"
    if t in registry.CALLER_TYPES and obj.keys() <= {"type", "tool_id"}:
        return "caller"
    if isinstance(t, str) and (t in BLOCK_TYPES or "tool_use_id" in obj):
        return "block"
    return "unknown"


def _messages_url(url: str) -> bool:
    return url.split("?")[0].rstrip("/").endswith("/v1/messages")


def unwrap_capture(obj: Any) -> tuple[str, Any, str] | None:
    """A ``{"source", "kind", "data"}`` real-traffic capture -> (kind, object, its pointer).

    A recorded request ``{"method", "url", "body"}`` yields its body (kind ``request`` for
    ``/v1/messages``); requests to other endpoints (count_tokens, Files API) and responses that are
    not a ``Message`` get the kind :func:`detect_kind` gives them, often ``"unknown"``.
    None when ``obj`` is not a capture.
    """
    if not (isinstance(obj, dict) and {"source", "kind", "data"} <= obj.keys()
            and obj["kind"] in CAPTURE_KINDS):
        return None
    kind, data = CAPTURE_KINDS[obj["kind"]], obj["data"]
    if kind == "sse_events" and isinstance(data, str):  # a capture keeping the raw SSE text
        from ..envelope import raw_sse_events
        return kind, raw_sse_events(data), "/data"
    if kind == "request" and isinstance(data, dict) and "body" in data and "url" in data:
        url = str(data["url"]).split("?")[0].rstrip("/")
        if _messages_url(url):
            return "request", data["body"], "/data/body"
        if url.endswith("/v1/messages/count_tokens"):
            return "count_tokens_request", data["body"], "/data/body"
        return detect_kind(data["body"]), data["body"], "/data/body"
    if kind == "response" and not (isinstance(data, dict)
                                   and (data.get("type") == "message" or "content" in data)):
        return detect_kind(data), data, "/data"
    return kind, data, "/data"
