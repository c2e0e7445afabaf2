"""The order of a streamed response's events (PROTOCOL.md §6 "Grammar").

``message_start``, then for each block ``content_block_start`` -> ``content_block_delta``* ->
``content_block_stop`` with indices 0, 1, 2..., then ``message_delta``(s), then ``message_stop``.
``ping`` may appear anywhere and unknown event types are skipped; an ``error`` event ends the
stream at any point. A ``message_start`` after ``message_stop`` begins the next response (a list
may hold the streams of several requests, as agent-loop recordings do).
"""

from __future__ import annotations

from typing import Any

from ..sources import protocol
from ._violation import Severity, Violation

RULE = "sse.order"
_SRC = protocol("6. Streaming (SSE): Grammar")
_KNOWN = {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
          "message_delta", "message_stop", "error"}


def _payload(item: Any) -> Any:
    return item.get("data") if isinstance(item, dict) and "event" in item and "data" in item else item


def stream_order(events: list[Any], severity: Severity = "error") -> list[Violation]:
    """Violations of the event order; the events' own shapes are the schema's business."""
    out: list[Violation] = []

    def bad(i: int, message: str) -> None:
        out.append(Violation(f"/{i}", f"{message} ({_SRC})", RULE, severity))

    state = "start"  # start -> blocks -> delta -> stopped | ended (error)
    started: dict[int, bool] = {}  # index -> still open
    for i, item in enumerate(events):
        data = _payload(item)
        t = data.get("type") if isinstance(data, dict) else None
        if t not in _KNOWN:
            continue
        if t == "message_start" and state in ("stopped", "ended"):
            state, started = "start", {}  # the next response of the list
        if state in ("stopped", "ended"):
            end = "message_stop" if state == "stopped" else "an error event"
            bad(i, f"{t!r} after the stream ended with {end}")
            continue
        if t == "error":
            state = "ended"
            continue
        if state == "start" and t != "message_start":
            bad(i, f"the stream starts with {t!r}; the first event is message_start")
            state = "blocks"
        if t == "message_start":
            if state != "start":
                bad(i, "a second message_start")
            state = "blocks"
        elif t in ("content_block_start", "content_block_delta", "content_block_stop"):
            index = data.get("index")
            if state == "delta":
                bad(i, f"{t} after message_delta")
            if t == "content_block_start":
                if index != len(started):
                    bad(i, f"content_block_start index {index!r}; the next block index is {len(started)}")
                if any(started.values()):
                    bad(i, "content_block_start while block "
                           f"{next(k for k, v in started.items() if v)} is still open")
                if isinstance(index, int):
                    started[index] = True
            elif not started.get(index, False):
                why = "was never started" if index not in started else "is already stopped"
                bad(i, f"{t} for block {index!r}, which {why}")
            elif t == "content_block_stop":
                started[index] = False
        elif t == "message_delta":
            open_blocks = [k for k, v in started.items() if v]
            if open_blocks:
                bad(i, f"message_delta while block {open_blocks[0]} is still open")
            state = "delta"
        elif t == "message_stop":
            if state != "delta":
                bad(i, "message_stop before any message_delta")
            state = "stopped"
    if state not in ("stopped", "ended") and events:
        out.append(Violation("", f"the stream ends without message_stop ({_SRC})", RULE, severity))
    return out
