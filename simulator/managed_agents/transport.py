"""An async ``httpx2`` transport that calls a handler, and reads its body, in worker threads.

The Managed Agents handler blocks by design: a long ``work/poll`` waits up to ``block_ms`` and the
session event stream waits for new events. Calling it on the event loop would stall every other
task of the client (the worker's heartbeat, its tool calls), so this transport moves each call,
and each body chunk, to a thread::

    client = AsyncAnthropic(auth_token=env.key, base_url="http://simulator",
                            http_client=httpx2.AsyncClient(transport=ThreadedAsyncTransport(sim),
                                                           base_url="http://simulator"))
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.to_thread
import httpx2

from simulator.http import Handler, SimResponse
from simulator.wire import response_headers, sim_request

_END = object()


class _ThreadedBody(httpx2.AsyncByteStream):
    def __init__(self, resp: SimResponse) -> None:
        self._resp = resp
        self._chunks: Iterator[bytes] | None = None

    def _next(self) -> object:
        if self._chunks is None:
            self._chunks = iter(self._resp.iter_bytes())
        return next(self._chunks, _END)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._resp.delay > 0:
            await anyio.sleep(self._resp.delay)
        while True:
            chunk = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
            if chunk is _END:
                return
            assert isinstance(chunk, bytes)
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._resp.events, "close", None)
        if callable(close):
            close()


class ThreadedAsyncTransport(httpx2.AsyncBaseTransport):
    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        url = request.url
        sim = sim_request(request.method, url.raw_path.split(b"?", 1)[0], url.query,
                          request.headers.raw, body)
        resp = await anyio.to_thread.run_sync(self.handler, sim, abandon_on_cancel=True)
        return httpx2.Response(resp.status, headers=response_headers(resp),
                               stream=_ThreadedBody(resp), request=request)
