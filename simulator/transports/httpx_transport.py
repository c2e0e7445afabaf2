"""``httpx`` (0.28) transports around a handler, for clients still on ``httpx`` (the
``anthropic`` SDK before 2, and other libraries)::

    client = httpx.Client(transport=SimulatorTransport(handler), base_url="https://api.anthropic.com")
"""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar

import httpx

from ..http import Handler
from ._httpx_family import BodyMixin, respond


class _Body(BodyMixin, httpx.SyncByteStream, httpx.AsyncByteStream):
    lib: ClassVar[ModuleType] = httpx


def _respond(handler: Handler, request: httpx.Request, body: bytes) -> httpx.Response:
    response: httpx.Response = respond(httpx, _Body, handler, request, body)
    return response


class SimulatorTransport(httpx.BaseTransport):
    """A sync ``httpx`` transport that answers every request with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return _respond(self.handler, request, request.read())


class AsyncSimulatorTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`SimulatorTransport` (for ``httpx.AsyncClient``)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return _respond(self.handler, request, await request.aread())
