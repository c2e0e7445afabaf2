"""A faithful SSE stream for a finished message (PROTOCOL.md §6, seed 000 §Streaming).

``message_start`` (content empty, ``stop_reason`` null), then per block ``content_block_start`` →
deltas → ``content_block_stop``: text as ``text_delta`` chunks, tool inputs as ``input_json_delta``
chunks (the first one empty, the block starting with ``"input": {}``), server tool results whole in
``content_block_start`` with no deltas; a ``ping`` after the first block starts (as recorded
traffic shows); ``message_delta`` with the stop reason, the container and cumulative usage;
``message_stop``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

Event = dict[str, Any]

_CHUNK = 24


def _ev(name: str, **data: Any) -> Event:
    return {"event": name, "data": {"type": name, **data}}


def _chunks(s: str, size: int = _CHUNK) -> list[str]:
    return [s[i:i + size] for i in range(0, len(s), size)] or [""]


def block_events(index: int, block: dict[str, Any]) -> list[Event]:
    btype = block["type"]
    out: list[Event] = []
    if btype == "text":
        out.append(_ev("content_block_start", index=index, content_block={"type": "text", "text": ""}))
        for part in _chunks(block["text"]):
            out.append(_ev("content_block_delta", index=index,
                           delta={"type": "text_delta", "text": part}))
    elif btype in ("tool_use", "server_tool_use"):
        start = {k: v for k, v in block.items() if k != "input"}
        start["input"] = {}
        out.append(_ev("content_block_start", index=index, content_block=start))
        out.append(_ev("content_block_delta", index=index,
                       delta={"type": "input_json_delta", "partial_json": ""}))
        for part in _chunks(json.dumps(block["input"], ensure_ascii=False)):
            out.append(_ev("content_block_delta", index=index,
                           delta={"type": "input_json_delta", "partial_json": part}))
    else:  # result blocks arrive whole
        out.append(_ev("content_block_start", index=index, content_block=copy.deepcopy(block)))
    out.append(_ev("content_block_stop", index=index))
    return out


def message_events(message: dict[str, Any], *, error_after_blocks: int | None = None,
                   error: dict[str, Any] | None = None) -> list[Event]:
    """Events for ``message``; with ``error_after_blocks`` the stream breaks off with an ``error``
    event after that many blocks (HTTP 200 already sent: PROTOCOL.md §6 "Error event")."""
    usage = message["usage"]
    start_msg = {k: copy.deepcopy(v) for k, v in message.items() if k != "container"}
    start_msg["content"] = []
    start_msg["stop_reason"] = None
    start_msg["stop_sequence"] = None
    if "stop_details" in message:
        start_msg["stop_details"] = None
    start_usage = {k: v for k, v in usage.items() if k != "server_tool_use"}
    start_usage["output_tokens"] = min(1, usage["output_tokens"])
    start_msg["usage"] = start_usage
    events: list[Event] = [_ev("message_start", message=start_msg)]
    for i, block in enumerate(message["content"]):
        if error_after_blocks is not None and i == error_after_blocks:
            events.append({"event": "error", "data": {"type": "error", "error": error}})
            return events
        evs = block_events(i, block)
        events.extend(evs[:1])
        if i == 0:
            events.append({"event": "ping", "data": {"type": "ping"}})
        events.extend(evs[1:])
    if error_after_blocks is not None:
        events.append({"event": "error", "data": {"type": "error", "error": error}})
        return events
    delta: dict[str, Any] = {"stop_reason": message["stop_reason"],
                             "stop_sequence": message.get("stop_sequence")}
    if "stop_details" in message:
        delta["stop_details"] = message["stop_details"]
    if message.get("container") is not None:
        delta["container"] = copy.deepcopy(message["container"])
    end_usage = {k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                       "cache_read_input_tokens", "output_tokens",
                                       "server_tool_use") if k in usage}
    events.append(_ev("message_delta", delta=delta, usage=end_usage))
    events.append(_ev("message_stop"))
    return events
