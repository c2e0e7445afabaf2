"""A respx router that sends requests for one base URL to a handler, for ``httpx`` **and**
``httpx2`` clients at once.

respx patches ``httpx`` itself; ``httpx2`` (the ``anthropic`` SDK >= 2) is reached through its
``httpcore2`` connection pools, the way the ``pytest-httpx2`` package does it: a respx mocker whose
targets are the ``httpcore2`` classes. Requests to other hosts pass through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx
import respx
from respx.mocks import HTTPCoreMocker

from ..http import Handler, SimRequest, SimResponse
from .httpx_transport import _respond

DEFAULT_BASE_URL = "https://api.anthropic.com"


class _Httpcore2Body:
    """An httpx response stream seen from httpcore2: httpx errors become httpcore2 errors."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except httpx.RemoteProtocolError as e:
            raise httpcore2.RemoteProtocolError(str(e)) from None
        except httpx.ReadTimeout as e:
            raise httpcore2.ReadTimeout(str(e)) from None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except httpx.RemoteProtocolError as e:
            raise httpcore2.RemoteProtocolError(str(e)) from None
        except httpx.ReadTimeout as e:
            raise httpcore2.ReadTimeout(str(e)) from None


class Httpcore2Mocker(HTTPCoreMocker):
    """respx's httpcore mocker pointed at ``httpcore2`` (as ``pytest-httpx2`` does)."""

    name = "tooluse-httpcore2"
    targets = [
        "httpcore2._sync.connection.HTTPConnection",
        "httpcore2._sync.connection_pool.ConnectionPool",
        "httpcore2._sync.http_proxy.HTTPProxy",
        "httpcore2._async.connection.AsyncHTTPConnection",
        "httpcore2._async.connection_pool.AsyncConnectionPool",
        "httpcore2._async.http_proxy.AsyncHTTPProxy",
    ]

    @classmethod
    def from_sync_httpx_response(cls, httpx_response: Any, target: Any, **kwargs: Any) -> Any:
        return httpcore2.Response(status=httpx_response.status_code,
                                  headers=httpx_response.headers.raw,
                                  content=_Httpcore2Body(httpx_response.stream),
                                  extensions=httpx_response.extensions)


def side_effect(handler: Handler) -> Any:
    """A respx side effect (``httpx.Request -> httpx.Response``) answering with ``handler``."""

    def respond(request: httpx.Request) -> httpx.Response:
        return _respond(handler, request, request.read())

    return respond


def _under_prefix(handler: Handler, prefix: str) -> Handler:
    """``handler`` seeing paths relative to a base URL's path (``/anthropic/v1/x`` -> ``/v1/x``)."""
    if not prefix:
        return handler

    def relative(request: SimRequest) -> SimResponse:
        if request.path.startswith(prefix):
            request.path = request.path[len(prefix):] or "/"
        return handler(request)

    return relative


def add_routes(router: respx.Router, handler: Handler, base_url: str = DEFAULT_BASE_URL) -> respx.Route:
    """Route everything under ``base_url`` to ``handler`` (paths relative to it); let other
    requests pass through."""
    base_url = base_url.rstrip("/")
    handler = _under_prefix(handler, urlsplit(base_url).path)
    route = router.route(url__startswith=base_url).mock(side_effect=side_effect(handler))
    router.route().pass_through()
    return route


@contextmanager
def intercept(handler: Handler, base_url: str = DEFAULT_BASE_URL) -> Iterator[list[respx.MockRouter]]:
    """Patch ``httpx`` and ``httpx2`` so requests under ``base_url`` reach ``handler``.

    Yields the two started routers (``httpx``, ``httpx2``); their ``calls`` record the traffic
    (until the context ends: respx resets them on exit).
    """
    with ExitStack() as stack:
        routers = []
        for using in ("httpx", Httpcore2Mocker.name):
            router = respx.mock(using=using, assert_all_called=False, assert_all_mocked=False)
            add_routes(router, handler, base_url)
            routers.append(stack.enter_context(router))
        yield routers
