"""Server-sent events: synthesize a faithful stream from a message, and assemble one back.

:func:`synthesize_events` turns a Messages API ``message`` into the event sequence the API streams
(PROTOCOL.md §6; seed 000 § Streaming)::

    message_start   {"message": {..., "content": [], "stop_reason": null}}
    ping
    per block:      content_block_start → content_block_delta* → content_block_stop
                    text: text_delta chunks; tool_use/server_tool_use: "input": {} then
                    input_json_delta chunks (the first is ""), except calls made from code
                    (``caller`` not direct), which arrive whole; thinking: thinking_delta chunks
                    then signature_delta; compaction: one compaction_delta; result blocks and
                    anything else: whole in the start event
    message_delta   {"delta": {"stop_reason", "stop_sequence", "container"?}, "usage": cumulative}
    message_stop

:func:`assemble_message` folds events (``SSEEvent``, ``{"event", "data"}`` or bare payloads) back
into the message, as the SDK's accumulator does; an ``error`` event raises :class:`StreamError`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .http import SSEEvent

TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
DEFAULT_CHUNK = 24


class StreamError(ValueError):
    """An ``error`` event in a stream (it can arrive after HTTP 200)."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error = dict(error)
        super().__init__(f"{error.get('type')}: {error.get('message')}")


def _chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or []


def _ev(data: dict[str, Any]) -> SSEEvent:
    return SSEEvent(str(data["type"]), data)


def _block_events(index: int, block: Mapping[str, Any], chunk: int) -> Iterator[SSEEvent]:
    t = block.get("type")
    if t == "text":
        start: dict[str, Any] = {k: v for k, v in block.items() if k != "citations"}
        start["text"] = ""
        if "citations" in block:
            start["citations"] = None if block["citations"] is None else []
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        for c in block.get("citations") or []:
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "citations_delta", "citation": c}})
        for part in _chunks(str(block.get("text", "")), chunk):
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": part}})
    elif t in TOOL_INPUT_BLOCKS and _called_by_code(block):
        # A call made from code arrives whole, input included, with no deltas (real traffic:
        # pydai__456, vercel__065, vercel__090).
        yield _ev({"type": "content_block_start", "index": index, "content_block": dict(block)})
    elif t in TOOL_INPUT_BLOCKS:
        start = dict(block)
        start["input"] = {}
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        raw = json.dumps(block.get("input", {}), separators=(",", ":"), ensure_ascii=False)
        for part in ["", *_chunks(raw if raw != "{}" else "", chunk)]:
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": part}})
    elif t == "compaction":
        start = {k: None if k in ("content", "encrypted_content") else v for k, v in block.items()}
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        delta = {"type": "compaction_delta", "content": block.get("content")}
        if "encrypted_content" in block:
            delta["encrypted_content"] = block["encrypted_content"]
        yield _ev({"type": "content_block_delta", "index": index, "delta": delta})
    elif t == "thinking":
        start = dict(block)
        start["thinking"], start["signature"] = "", ""
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        for part in _chunks(str(block.get("thinking", "")), chunk):
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "thinking_delta", "thinking": part}})
        yield _ev({"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": block.get("signature", "")}})
    else:
        # Server tool results, redacted_thinking, container_upload...: whole in the start event.
        yield _ev({"type": "content_block_start", "index": index, "content_block": dict(block)})
    yield _ev({"type": "content_block_stop", "index": index})


def _called_by_code(block: Mapping[str, Any]) -> bool:
    caller = block.get("caller")
    return isinstance(caller, dict) and caller.get("type") not in (None, "direct")


def synthesize_events(message: Mapping[str, Any], *, chunk: int = DEFAULT_CHUNK,
                      ping_every: int = 0) -> list[SSEEvent]:
    """The SSE events the API would stream for ``message`` (deterministic chunking).

    One ``ping`` follows ``message_start``; with ``ping_every`` > 0 another one is sent after
    every that many block events.
    """
    msg = copy.deepcopy(dict(message))
    content = msg.get("content") or []
    usage = dict(msg.get("usage") or {})
    start_msg = dict(msg)
    start_msg.update(content=[], stop_reason=None, stop_sequence=None)
    if "stop_details" in start_msg:
        start_msg["stop_details"] = None
    if "container" in start_msg:
        start_msg["container"] = None
    start_usage = dict(usage)
    start_usage["output_tokens"] = min(1, int(usage.get("output_tokens") or 0))
    start_msg["usage"] = start_usage
    events = [_ev({"type": "message_start", "message": start_msg}), SSEEvent("ping", {"type": "ping"})]
    n = 0
    for i, block in enumerate(content):
        for e in _block_events(i, block, chunk):
            events.append(e)
            n += 1
            if ping_every and n % ping_every == 0:
                events.append(SSEEvent("ping", {"type": "ping"}))
    delta: dict[str, Any] = {"stop_reason": msg.get("stop_reason"),
                             "stop_sequence": msg.get("stop_sequence")}
    if "stop_details" in msg:
        delta["stop_details"] = msg["stop_details"]
    if msg.get("container") is not None:
        delta["container"] = msg["container"]
    events.append(_ev({"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(_ev({"type": "message_stop"}))
    return events


def recorded_events(raw: Iterable[Any]) -> list[SSEEvent]:
    """Cassette ``events`` (``{"event", "data"}`` or bare payloads) as :class:`SSEEvent`."""
    out = []
    for e in raw:
        if isinstance(e, SSEEvent):
            out.append(e)
        elif isinstance(e, dict) and "data" in e and ("event" in e or len(e) <= 2):
            data = e["data"]
            name = e.get("event") or (data.get("type") if isinstance(data, dict) else "message")
            out.append(SSEEvent(str(name), data))
        elif isinstance(e, dict):
            out.append(SSEEvent(str(e.get("type", "message")), e))
    return out


def _payload(e: Any) -> tuple[str, Any]:
    if isinstance(e, SSEEvent):
        return e.event, e.data
    if isinstance(e, dict) and "data" in e and "event" in e:
        return str(e["event"]), e["data"]
    if isinstance(e, dict):
        return str(e.get("type")), e
    raise TypeError(f"not an SSE event: {e!r}")


def assemble_message(events: Iterable[Any]) -> dict[str, Any]:
    """The message a stream describes (as the SDK accumulates it).

    Raises :class:`StreamError` on an ``error`` event and ``ValueError`` when the stream has no
    ``message_start`` or a tool input's JSON does not parse.
    """
    msg: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    stopped: set[int] = set()
    for e in events:
        name, data = _payload(e)
        kind = data.get("type", name) if isinstance(data, dict) else name
        if kind == "error" or name == "error":
            raise StreamError(data.get("error", {}) if isinstance(data, dict) else {})
        if not isinstance(data, dict) or kind == "ping":
            continue
        if kind == "message_start":
            if msg is not None:
                continue  # a second message_start is ignored, as by the SDK's accumulator
            msg = copy.deepcopy(data["message"])
            msg["content"] = list(msg.get("content") or [])
            continue
        if msg is None:
            if kind in ("content_block_start", "content_block_delta", "message_delta"):
                raise ValueError(f"`{kind}` before `message_start`")
            continue
        if kind == "content_block_start":
            # Appended, as the SDK's accumulator does (deltas then address blocks by index).
            msg["content"].append(copy.deepcopy(data["content_block"]))
        elif kind == "content_block_delta":
            idx = int(data["index"])
            block = msg["content"][idx] if idx < len(msg["content"]) else None
            if block is None:
                raise ValueError(f"`content_block_delta` for index {idx} before its "
                                 "`content_block_start`")
            d = data["delta"]
            dt = d.get("type")
            if dt == "text_delta":
                block["text"] = block.get("text", "") + d.get("text", "")
            elif dt == "input_json_delta":
                partial[idx] = partial.get(idx, "") + d.get("partial_json", "")
            elif dt == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + d.get("thinking", "")
            elif dt == "signature_delta":
                block["signature"] = d.get("signature", "")
            elif dt == "compaction_delta":
                block["content"] = d.get("content")
                if "encrypted_content" in d:
                    block["encrypted_content"] = d["encrypted_content"]
            elif dt == "citations_delta":
                block["citations"] = [*(block.get("citations") or []), d.get("citation")]
        elif kind == "content_block_stop":
            idx = int(data["index"])
            if partial.get(idx) and idx < len(msg["content"]) and msg["content"][idx] is not None:
                stopped.add(idx)
                try:
                    msg["content"][idx]["input"] = json.loads(partial[idx])
                except json.JSONDecodeError as err:
                    raise ValueError(f"content block {idx}: tool input JSON does not parse: "
                                     f"{err.msg}") from None
        elif kind == "message_delta":
            d = data.get("delta") or {}
            for key in ("stop_reason", "stop_sequence", "stop_details", "container"):
                if key in d:
                    msg[key] = d[key]
            usage = data.get("usage")
            if isinstance(usage, dict):
                merged = dict(msg.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                msg["usage"] = merged
    if msg is None:
        raise ValueError("the stream has no `message_start` event")
    for idx, buf in partial.items():
        if buf and idx not in stopped and msg["content"][idx] is not None:
            # A stream cut short (max_tokens) leaves a block open: keep what parses, as the SDK.
            msg["content"][idx]["input"] = _partial_json(buf)
    msg["content"] = [b for b in msg["content"] if b is not None]
    return msg


def _partial_json(buf: str) -> Any:
    try:
        from jiter import from_json  # the SDK's own partial-JSON parser (an anthropic dependency)
    except ImportError:  # pragma: no cover
        return {}
    try:
        return from_json(buf.encode(), partial_mode=True)
    except ValueError:
        return {}


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> SSEEvent:
    """A mid-stream ``error`` event (PROTOCOL.md §6)."""
    return SSEEvent("error", {"type": "error", "error": {"type": error_type, "message": message}})


def stream_headers(request_id: str) -> dict[str, str]:
    return {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache",
            "request-id": request_id}
