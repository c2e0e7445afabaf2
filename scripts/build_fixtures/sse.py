"""A faithful SSE stream for a finished message (PROTOCOL.md §6, seed 000 §Streaming).

The events are :func:`simulator.sse.synthesize_events`'s, so a streamed cassette holds the stream
the engine would synthesize from its plain sibling, with the envelope of live streams (ping after
the first block starts, ``message_start`` without ``container`` or ``server_tool_use``,
``message_delta.usage`` without ``cache_creation``/``service_tier``/``inference_geo``, tool input
spaced as ``json.dumps`` does, chunk lengths varying as live ones: see that module). Calls made
from code (``caller`` not direct) arrive whole, as live traffic delivers them (vercel__065,
pydai__456). Chunk lengths are seeded by ``seed`` (the builder passes ``<cassette id>#<exchange
index>``), so regeneration writes the same bytes.
"""

from __future__ import annotations

from typing import Any

from simulator.sse import synthesize_events

Event = dict[str, Any]


def message_events(message: dict[str, Any], *, seed: str, error_after_blocks: int | None = None,
                   error: dict[str, Any] | None = None) -> list[Event]:
    """Events for ``message``; with ``error_after_blocks`` the stream breaks off with an ``error``
    event after that many blocks (HTTP 200 already sent: PROTOCOL.md §6 "Error event")."""
    events = [{"event": e.event, "data": e.data} for e in synthesize_events(message, seed=seed)]
    if error_after_blocks is None:
        return events
    cut = next((i for i, e in enumerate(events)
                if (e["data"].get("type") == "content_block_start"
                    and e["data"]["index"] == error_after_blocks)
                or e["data"].get("type") == "message_delta"), len(events))
    return [*events[:cut], {"event": "error", "data": {"type": "error", "error": error}}]
