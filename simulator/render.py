"""Render a recorded exchange as the response a request gets (no state change, no I/O).

``render_exchange(exchange, stream, request_id) -> (SimResponse, message | None, mode)``:

- a recorded error, or any non-message body: verbatim (``recorded``);
- a recorded message for ``stream: true``: SSE synthesized from it (``synthesized``);
- recorded events for ``stream: true``: the events verbatim (``recorded``); for a plain request:
  the message assembled from them (``assembled``), or the stream's ``error`` event as an error.

Recorded ``content-length``/``transfer-encoding``/``content-encoding``/``connection`` headers are
dropped (the body is re-encoded); ``request-id`` is kept when recorded, else the engine's.
"""

from __future__ import annotations

import json
from typing import Any

from .cassette import Exchange
from .errors import api_error
from .http import SimResponse, json_headers
from .sse import StreamError, assemble_message, recorded_events, stream_headers, synthesize_events

DROP_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})
ERROR_STATUS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429,
                "invalid_request_error": 400, "request_too_large": 413, "timeout_error": 504}


def render_exchange(ex: Exchange, stream: bool, rid: str, *, chunk: int = 24,
                    ping_every: int = 0) -> tuple[SimResponse, dict[str, Any] | None, str]:
    """The response for ``ex`` (fresh objects each call), the message it carries, the mode."""
    rec = ex.response
    status = int(rec["status"])
    raw = rec.get("headers")
    headers = {str(k).lower(): str(v) for k, v in (raw if isinstance(raw, dict) else {}).items()
               if str(k).lower() not in DROP_HEADERS}
    headers.setdefault("request-id", rid)
    if "events" in rec:
        events = recorded_events(rec["events"])
        if stream:
            h = {**headers, **stream_headers(headers["request-id"])}
            return SimResponse(status, h, events=events), _assembled_or_none(events), "recorded"
        try:
            message = assemble_message(events)
        except StreamError as e:
            etype = str(e.error.get("type", "api_error"))
            return (api_error(ERROR_STATUS.get(etype, 500), etype,
                              str(e.error.get("message", "")), request_id=rid), None, "assembled")
        except (ValueError, KeyError, TypeError, IndexError) as e:
            # A broken recording, not the client's fault: say so (a harness error, not the API's).
            return (api_error(500, "api_error", f"tooluse simulator: the recorded stream of "
                              f"exchange {ex.index} cannot be assembled into a message: {e}",
                              request_id=rid), None, "assembled")
        return (SimResponse(status, json_headers({"request-id": headers["request-id"]}),
                            body=message), message, "assembled")
    body = rec.get("body")
    headers.setdefault("content-type", "application/json")
    is_message = isinstance(body, dict) and body.get("type") == "message"
    if stream and status < 400 and isinstance(body, dict) and is_message:
        events = synthesize_events(body, chunk=chunk, ping_every=ping_every)
        return (SimResponse(status, stream_headers(headers["request-id"]), events=events),
                body, "synthesized")
    return SimResponse(status, headers, body=json.loads(json.dumps(body))), \
        (body if is_message else None), "recorded"


def _assembled_or_none(events: list[Any]) -> dict[str, Any] | None:
    try:
        return assemble_message(events)
    except (StreamError, ValueError, KeyError, TypeError, IndexError):
        return None
