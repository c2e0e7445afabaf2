"""Render a recorded exchange as the response a request gets (no state change, no I/O).

``render_exchange(exchange, stream, request_id) -> (SimResponse, message | None, mode)``:

- a recorded error, or any non-message body: verbatim (``recorded``);
- a recorded message for ``stream: true``: SSE synthesized from it (``synthesized``; chunk
  lengths seeded by ``seed``, the engine's ``<cassette id>#<exchange index>``);
- recorded events for ``stream: true``: the events verbatim, their payloads padded as the API
  pads them (``recorded``; the ``adversarial`` envelope cuts them again and adds pings, values
  unchanged: :func:`simulator.sse.dress_recorded`); for a plain request:
  the message assembled from them (``assembled``), or the stream's ``error`` event as an error.

Recorded ``content-length``/``transfer-encoding``/``content-encoding``/``connection`` headers are
dropped (the body is re-encoded); ``request-id`` is kept when recorded, else the engine's.
"""

from __future__ import annotations

from typing import Any

from .cassette import Exchange
from .envelope import LIVE, EnvelopeProfile
from .errors import api_error
from .http import EncodedEvent, EncodedResponse, SimResponse, json_bytes, json_headers
from .sse import (
    StreamError,
    assemble_message,
    dress_recorded,
    recorded_events,
    stream_headers,
    synthesize_events,
)

DROP_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})
ERROR_STATUS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429,
                "invalid_request_error": 400, "request_too_large": 413, "timeout_error": 504}


def render_exchange(ex: Exchange, stream: bool, rid: str, *, chunk: int | None = None,
                    ping_every: int = 0, seed: str | None = None,
                    envelope: EnvelopeProfile = LIVE,
                    ) -> tuple[SimResponse, dict[str, Any] | None, str]:
    """The response for ``ex`` (fresh objects each call), the message it carries, the mode.

    What does not depend on the request id (the encoded body or events, the headers) is computed
    once per exchange and kept in ``ex.memo``; the response body and events are immutable
    encodings (:class:`EncodedResponse`, :class:`EncodedEvent`) each reader parses its own copy of.
    The message returned is shared: read it, do not change it. A stream's envelope (pings,
    chunks, padding, line endings) is drawn from the profile ``envelope``
    (:mod:`simulator.envelope`)."""
    key = ("render", stream, chunk, ping_every, envelope.name)
    prepared = ex.memo.get(key)
    if prepared is None:
        prepared = _prepare(ex, stream, chunk, ping_every, seed, envelope)
        if prepared is not None:
            ex.memo[key] = prepared
    if prepared is None:
        return _render_error(ex, stream, rid)
    status, headers, wire, events, message, mode = prepared
    h = dict(headers)
    if "request-id" not in h:
        h["request-id"] = rid
    if mode == "recorded" and events is None and "content-type" not in h:
        h["content-type"] = "application/json"
    if events is not None:
        if mode == "synthesized":
            h = stream_headers(h["request-id"])
        else:
            h.update(stream_headers(h["request-id"]))
        return SimResponse(status, h, events=list(events)), message, mode
    return EncodedResponse(status, h, wire), message, mode


_Prepared = tuple[int, dict[str, str], bytes, "tuple[EncodedEvent, ...] | None",
                  "dict[str, Any] | None", str]


def _prepare(ex: Exchange, stream: bool, chunk: int | None, ping_every: int,
             seed: str | None, profile: EnvelopeProfile = LIVE) -> _Prepared | None:
    """What :func:`render_exchange` serves for ``ex``, but the request id; None when the answer
    is an error that carries the request id in its body (rendered each time)."""
    rec = ex.response
    status = int(rec["status"])
    headers = _recorded_headers(rec)
    if "events" in rec:
        events = recorded_events(rec["events"])
        if stream:
            dressed = dress_recorded(events, seed if seed is not None else f"exchange {ex.index}",
                                     profile)
            return (status, headers, b"", _encoded(dressed), _assembled_or_none(events),
                    "recorded")
        try:
            message = assemble_message(events)
        except (StreamError, ValueError, KeyError, TypeError, IndexError):
            return None
        h = json_headers({"request-id": headers["request-id"]} if "request-id" in headers else {})
        return status, h, json_bytes(message), None, message, "assembled"
    body = rec.get("body")
    is_message = isinstance(body, dict) and body.get("type") == "message"
    if stream and status < 400 and isinstance(body, dict) and is_message:
        events = synthesize_events(body, chunk=chunk, ping_every=ping_every,
                                   seed=seed if seed is not None else f"exchange {ex.index}",
                                   envelope=profile)
        return status, headers, b"", _encoded(events), body, "synthesized"
    if body is None:
        return None
    return status, headers, json_bytes(body), None, \
        (body if is_message else None), "recorded"


def _recorded_headers(rec: dict[str, Any]) -> dict[str, str]:
    """The recorded response headers, names lower-cased, without those re-encoding changes."""
    raw = rec.get("headers")
    return {str(k).lower(): str(v) for k, v in (raw if isinstance(raw, dict) else {}).items()
            if str(k).lower() not in DROP_HEADERS}


def _encoded(events: list[Any]) -> tuple[EncodedEvent, ...]:
    """Events encoded once (their padding and line endings drawn already)."""
    return tuple(e if isinstance(e, EncodedEvent) else EncodedEvent(e.event, e.data, e.pad, e.eol)
                 for e in events)


def _render_error(ex: Exchange, stream: bool, rid: str) -> tuple[SimResponse, None, str]:
    """A recorded stream that assembles into an error (its ``error`` event, or a broken
    recording), for a plain request; or a recorded ``null`` body."""
    rec = ex.response
    status = int(rec["status"])
    if "events" not in rec:
        headers = _recorded_headers(rec)
        headers.setdefault("request-id", rid)
        headers.setdefault("content-type", "application/json")
        return SimResponse(status, headers, body=None), None, "recorded"
    try:
        assemble_message(recorded_events(rec["events"]))
    except StreamError as e:
        etype = str(e.error.get("type", "api_error"))
        return (api_error(ERROR_STATUS.get(etype, 500), etype,
                          str(e.error.get("message", "")), request_id=rid), None, "assembled")
    except (ValueError, KeyError, TypeError, IndexError) as e:
        # A broken recording, not the client's fault: say so (a harness error, not the API's).
        return (api_error(500, "api_error", f"tooluse simulator: the recorded stream of "
                          f"exchange {ex.index} cannot be assembled into a message: {e}",
                          request_id=rid), None, "assembled")
    raise AssertionError("unreachable: the stream assembled on the second try")


def _assembled_or_none(events: list[Any]) -> dict[str, Any] | None:
    try:
        return assemble_message(events)
    except (StreamError, ValueError, KeyError, TypeError, IndexError):
        return None
