"""``httpx`` (0.28) transports around a handler, for clients still on ``httpx`` (the
``anthropic`` SDK before 2, and other libraries)::

    client = httpx.Client(transport=SimulatorTransport(handler), base_url="https://api.anthropic.com")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx

from ..http import Handler, SimResponse
from ._common import (
    Dropped,
    TimedOut,
    aiter_body,
    iter_body,
    read_timeout,
    response_headers,
    sim_request,
)


class _Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __init__(self, resp: SimResponse, timeout: float | None) -> None:
        self._resp, self._timeout = resp, timeout

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from iter_body(self._resp, self._timeout)
        except Dropped as e:
            raise httpx.RemoteProtocolError(str(e)) from None
        except TimedOut as e:
            raise httpx.ReadTimeout(str(e)) from None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in aiter_body(self._resp, self._timeout):
                yield chunk
        except Dropped as e:
            raise httpx.RemoteProtocolError(str(e)) from None
        except TimedOut as e:
            raise httpx.ReadTimeout(str(e)) from None


class SimulatorTransport(httpx.BaseTransport):
    """A sync ``httpx`` transport that answers every request with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        return _respond(self.handler, request, body)


class AsyncSimulatorTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`SimulatorTransport` (for ``httpx.AsyncClient``)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        return _respond(self.handler, request, body)


def _respond(handler: Handler, request: httpx.Request, body: bytes) -> httpx.Response:
    url = request.url
    sim = sim_request(request.method, url.raw_path.split(b"?", 1)[0], url.query,
                      request.headers.raw, body)
    resp = handler(sim)
    return httpx.Response(resp.status, headers=response_headers(resp),
                           stream=_Body(resp, read_timeout(request.extensions)), request=request)
