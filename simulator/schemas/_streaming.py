"""Schemas of the server-sent events of a streamed Messages response."""

from __future__ import annotations

from ..sources import SEED_CODE_EXECUTION, protocol, seed
from ._core import (
    INT,
    MESSAGE,
    NONNEG,
    STR,
    Ctx,
    Schema,
    by_type,
    cite,
    const,
    document,
    nullable,
    obj,
    ref,
)

NAME = "streaming"
_SSE = protocol("6. Streaming (SSE): Grammar")
_DELTAS = protocol("6. Streaming (SSE): Delta types", "S")
_M = "messages"


def delta(ctx: Ctx) -> Schema:
    return by_type(ctx, {
        "text_delta": obj(ctx, {"type": const("text_delta"), "text": STR}, ["type", "text"]),
        "input_json_delta": obj(ctx, {"type": const("input_json_delta"), "partial_json": STR},
                                ["type", "partial_json"]),
        "thinking_delta": obj(ctx, {"type": const("thinking_delta"), "thinking": STR},
                              ["type", "thinking"]),
        "signature_delta": obj(ctx, {"type": const("signature_delta"), "signature": STR},
                               ["type", "signature"]),
        "citations_delta": obj(ctx, {"type": const("citations_delta"),
                                     "citation": ref("citation", "blocks")}, ["type", "citation"]),
    }, what="delta type", source=cite(_DELTAS))


def events(ctx: Ctx) -> dict[str, Schema]:
    index = NONNEG
    message_delta = obj(ctx, {"stop_reason": ref("stop_reason", _M), "stop_sequence": nullable(STR),
                              "stop_details": nullable(ref("stop_details", _M)),
                              "container": nullable(ref("container", _M))},
                        ["stop_reason", "stop_sequence"], lenient_required=[])
    return {
        "message_start": obj(ctx, {"type": const("message_start"), "message": ref("response", _M)},
                             ["type", "message"]),
        "content_block_start": obj(ctx, {"type": const("content_block_start"), "index": index,
                                         "content_block": ref("response_block", "blocks")},
                                   ["type", "index", "content_block"],
                                   comment=f"result blocks arrive whole ({seed(SEED_CODE_EXECUTION, 'Streaming').cite()})"),
        "content_block_delta": obj(ctx, {"type": const("content_block_delta"), "index": index,
                                         "delta": ref("delta")}, ["type", "index", "delta"]),
        "content_block_stop": obj(ctx, {"type": const("content_block_stop"), "index": index},
                                  ["type", "index"]),
        "message_delta": obj(ctx, {"type": const("message_delta"), "delta": message_delta,
                                   "usage": ref("delta_usage", _M), "context_management": {}},
                             ["type", "delta", "usage"], lenient_required=["type", "delta"]),
        "message_stop": obj(ctx, {"type": const("message_stop")}, ["type"]),
        "ping": obj(ctx, {"type": const("ping")}, ["type"]),
        "error": ref("error_body", "errors"),
    }


def sse_events(ctx: Ctx, names: list[str]) -> Schema:
    """A list of events: ``{"event": name, "data": payload}`` wrappers (the cassette format) or
    bare payloads. A wrapper's ``event`` must equal its payload's ``type``."""
    same = [{"if": {"properties": {"event": const(n)}, "required": ["event"]},
             "then": {"properties": {"data": {"properties": {"type": {
                 "const": n, MESSAGE: f"the data of an {n!r} event has type {n!r} ({_SSE.cite()})"}}}}}}
            for n in names]
    wrapper = obj(ctx, {"event": STR, "data": ref("sse_event"), "id": {}, "retry": INT},
                  ["event", "data"])
    wrapper["allOf"] = same
    return {"type": "array", "items": {"if": {"required": ["event", "data"]}, "then": wrapper,
                                        "else": ref("sse_event")}}


def build(ctx: Ctx) -> Schema:
    evs = events(ctx)
    defs: dict[str, Schema] = {f"event.{k}": v for k, v in evs.items()}
    defs["delta"] = delta(ctx)
    defs["sse_event"] = by_type(ctx, {k: ref(f"event.{k}") for k in evs}, what="SSE event type",
                                source=cite(_SSE))
    defs["sse_events"] = sse_events(ctx, list(evs))
    return document(ctx, NAME, defs, title="Streaming events")
