"""``httpx2`` transports around a handler: what the ``anthropic`` SDK (>= 2) talks through.

    client = anthropic.Anthropic(api_key="x", http_client=httpx2.Client(
        transport=SimulatorTransport(handler), base_url="https://api.anthropic.com"))
"""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar

import httpx2

from ..http import Handler
from ._httpx_family import BodyMixin, respond


class _Body(BodyMixin, httpx2.SyncByteStream, httpx2.AsyncByteStream):
    lib: ClassVar[ModuleType] = httpx2


def _respond(handler: Handler, request: httpx2.Request, body: bytes) -> httpx2.Response:
    response: httpx2.Response = respond(httpx2, _Body, handler, request, body)
    return response


class SimulatorTransport(httpx2.BaseTransport):
    """A sync ``httpx2`` transport that answers every request with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return _respond(self.handler, request, request.read())


class AsyncSimulatorTransport(httpx2.AsyncBaseTransport):
    """The async twin of :class:`SimulatorTransport` (for ``httpx2.AsyncClient``)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return _respond(self.handler, request, await request.aread())
