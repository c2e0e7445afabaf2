"""What every transport (and the Managed Agents transport) shares: building a :class:`SimRequest`, and a response body produced
lazily with the engine's ``delay`` and ``drop_after`` faults applied.

The body generators raise :class:`Dropped` (the connection closes mid-body) and :class:`TimedOut`
(the delay outlasts the client's read timeout); each transport turns them into its own library's
``RemoteProtocolError`` / ``ReadTimeout``, so a client sees what a real socket would give it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

import anyio
import anyio.to_thread

from .http import SimRequest, SimResponse, parse_query

DROPPED_MESSAGE = "peer closed connection without sending complete message body (simulated drop)"
TIMED_OUT_MESSAGE = "The read operation timed out (simulated slow response)"


class Dropped(Exception):
    """The simulated connection closed before the body was complete."""


class TimedOut(Exception):
    """The simulated response took longer than the client's read timeout."""


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def sim_request(method: str | bytes, path: str | bytes, query: str | bytes,
                headers: Iterable[tuple[str | bytes, str | bytes]], body: bytes) -> SimRequest:
    """A :class:`SimRequest` from the raw parts every HTTP library exposes."""
    if not isinstance(headers, list | tuple):
        headers = list(headers)  # read twice below when not all bytes
    try:  # httpx and httpcore give bytes
        names = {k.decode("latin-1").lower(): v.decode("latin-1")  # type: ignore[union-attr]
                 for k, v in headers}
    except AttributeError:
        names = {}
        for k, v in headers:
            names[(k.decode("latin-1") if isinstance(k, bytes) else k).lower()] = \
                v.decode("latin-1") if isinstance(v, bytes) else v
    params, repeated = parse_query(_text(query)) if query else ({}, {})
    return SimRequest.lowered(_text(method).upper(), _text(path), names, params, body, repeated)


def response_headers(resp: SimResponse) -> list[tuple[str, str]]:
    """The response's headers, with a content type when the handler left it out."""
    headers = {k.lower(): v if type(v) is str else str(v) for k, v in resp.headers.items()}
    if "content-type" not in headers:
        if resp.is_stream:
            headers["content-type"] = "text/event-stream; charset=utf-8"
        elif not isinstance(resp.body, bytes | bytearray) and resp.body is not None:
            headers["content-type"] = "application/json"
    headers.pop("content-length", None)
    headers.pop("transfer-encoding", None)
    return list(headers.items())


def read_timeout(extensions: Mapping[str, Any]) -> float | None:
    """The client's read timeout, from an httpx/httpcore request's ``extensions``."""
    timeout = extensions.get("timeout")
    if isinstance(timeout, Mapping):
        value = timeout.get("read")
        return float(value) if value is not None else None
    return None


def is_lazy(resp: SimResponse) -> bool:
    """Whether producing the next event may block (a generator, e.g. a stalled stream)."""
    return resp.events is not None and not isinstance(resp.events, list | tuple)


def whole_body(resp: SimResponse) -> bytes | None:
    """The whole body at once, when nothing is to be played out over time (no delay, no drop,
    every event already produced): what an in-process transport can hand over in one piece, as
    a socket would deliver it to a fast reader. None otherwise."""
    if resp.delay > 0 or resp.drop_after is not None:
        return None
    if resp.events is None:
        return resp.body_bytes()
    if is_lazy(resp):
        return None
    return b"".join([e.encode() for e in resp.events])


def body_chunks(resp: SimResponse) -> Iterator[bytes]:
    """The body as it goes on the wire: the JSON/bytes body, or one chunk per SSE event; raises
    :class:`Dropped` where ``drop_after`` cuts it (after that many events, even at the end)."""
    if resp.events is None:
        if resp.drop_after == 0:
            raise Dropped(DROPPED_MESSAGE)
        yield resp.body_bytes()
        return
    sent = 0
    for event in resp.events:
        if resp.drop_after is not None and sent >= resp.drop_after:
            raise Dropped(DROPPED_MESSAGE)
        yield event.encode()
        sent += 1
    if resp.drop_after is not None and sent >= resp.drop_after:
        raise Dropped(DROPPED_MESSAGE)


def next_chunk(chunks: Iterator[bytes]) -> bytes | None:
    """The next chunk, or None at the end (for calling from a worker thread)."""
    return next(chunks, None)


def iter_body(resp: SimResponse, timeout: float | None = None) -> Iterator[bytes]:
    """The body, event by event, after ``resp.delay`` (capped by the read timeout)."""
    if resp.delay > 0:
        if timeout is not None and resp.delay > timeout:
            time.sleep(timeout)
            raise TimedOut(TIMED_OUT_MESSAGE)
        time.sleep(resp.delay)
    yield from body_chunks(resp)


async def aiter_body(resp: SimResponse, timeout: float | None = None) -> AsyncIterator[bytes]:
    """:func:`iter_body` for async clients: the delay does not block the event loop."""
    if resp.delay > 0:
        if timeout is not None and resp.delay > timeout:
            await anyio.sleep(timeout)
            raise TimedOut(TIMED_OUT_MESSAGE)
        await anyio.sleep(resp.delay)
    chunks = body_chunks(resp)
    if not is_lazy(resp):
        for ready in chunks:
            yield ready
        return
    # a lazy stream may block between events (a stall): wait for it off the event loop
    while True:
        chunk: bytes | None = await anyio.to_thread.run_sync(next_chunk, chunks)
        if chunk is None:
            return
        yield chunk
