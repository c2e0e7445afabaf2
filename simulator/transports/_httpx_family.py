"""What the ``httpx`` and ``httpx2`` transports share: ``httpx2`` is a fork of ``httpx`` with the
same API, so the behaviour is written once here against a library module, and each transport
module binds it to its own library (the classes must subclass that library's base classes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any, ClassVar

from ..http import Handler, SimResponse
from ..wire import (
    Dropped,
    TimedOut,
    aiter_body,
    iter_body,
    read_timeout,
    response_headers,
    sim_request,
    whole_body,
)


class BodyMixin:
    """The response body: the handler's lazy chunks, with drops and timeouts raised as the
    library's own ``RemoteProtocolError`` / ``ReadTimeout``."""

    lib: ClassVar[ModuleType]

    def __init__(self, resp: SimResponse, timeout: float | None) -> None:
        self._resp, self._timeout = resp, timeout

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from iter_body(self._resp, self._timeout)
        except Dropped as e:
            raise self.lib.RemoteProtocolError(str(e)) from None
        except TimedOut as e:
            raise self.lib.ReadTimeout(str(e)) from None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in aiter_body(self._resp, self._timeout):
                yield chunk
        except Dropped as e:
            raise self.lib.RemoteProtocolError(str(e)) from None
        except TimedOut as e:
            raise self.lib.ReadTimeout(str(e)) from None


def respond(lib: ModuleType, body_type: type[BodyMixin], handler: Handler, request: Any,
            body: bytes) -> Any:
    """Answer one ``lib.Request`` with ``handler``: a ``lib.Response`` streaming its body."""
    url = request.url
    sim = sim_request(request.method, url.raw_path.split(b"?", 1)[0], url.query,
                      request.headers.raw, body)
    resp = handler(sim)
    whole = whole_body(resp)
    if whole is not None:
        # Nothing to play out over time: hand over the bytes (no lazy stream needed).
        return lib.Response(resp.status, headers=response_headers(resp), content=whole,
                            request=request)
    return lib.Response(resp.status, headers=response_headers(resp),
                        stream=body_type(resp, read_timeout(request.extensions)), request=request)
