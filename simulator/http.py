"""The engine's plain request and response values: no sockets, no framework.

Every transport (respx router, httpx2 transport, ``tooluse serve``) turns its own request into a
:class:`SimRequest`, calls a handler ``(SimRequest) -> SimResponse``, and writes the response back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SimRequest:
    method: str
    path: str
    #: Header names are lower-cased.
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def __post_init__(self) -> None:
        self.headers = {k.lower(): v for k, v in self.headers.items()}
        self.method = self.method.upper()

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError on broken JSON)."""
        return json.loads(self.body.decode("utf-8"))


@dataclass
class SSEEvent:
    event: str
    data: Any

    def encode(self) -> bytes:
        return f"event: {self.event}\ndata: {json.dumps(self.data, separators=(',', ':'))}\n\n".encode()


@dataclass
class SimResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    #: A JSON body (dict/list) or raw bytes; None for an SSE response.
    body: Any = None
    #: SSE events, when the response is a stream. Lazily produced so faults can cut it short.
    events: Iterable[SSEEvent] | None = None
    #: Seconds to wait before the response starts (slow-response fault).
    delay: float = 0.0
    #: Drop the connection after this many SSE events (or before the body when 0).
    drop_after: int | None = None

    @property
    def is_stream(self) -> bool:
        return self.events is not None

    def body_bytes(self) -> bytes:
        if isinstance(self.body, bytes | bytearray):
            return bytes(self.body)
        if self.body is None:
            return b""
        return json.dumps(self.body, separators=(",", ":")).encode()

    def iter_bytes(self) -> Iterator[bytes]:
        if self.events is None:
            yield self.body_bytes()
            return
        for ev in self.events:
            yield ev.encode()


Handler = Callable[[SimRequest], SimResponse]


def json_headers(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    h = {"content-type": "application/json"}
    if extra:
        h.update(extra)
    return h
