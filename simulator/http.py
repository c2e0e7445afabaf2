"""The engine's plain request and response values: no sockets, no framework.

Every transport (respx router, httpx2 transport, ``tooluse serve``) turns its own request into a
:class:`SimRequest`, calls a handler ``(SimRequest) -> SimResponse``, and writes the response back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

_from_json: Callable[[bytes], Any] | None
try:  # the Rust JSON parser the anthropic SDK depends on: about 1.6x json.loads on request bodies
    from jiter import from_json as _from_json
except ImportError:  # pragma: no cover - json.loads alone gives the same values
    _from_json = None


@dataclass
class SimRequest:
    method: str
    path: str
    #: Header names are lower-cased.
    headers: dict[str, str] = field(default_factory=dict)
    #: The last value of each query parameter (what most endpoints read).
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    #: Every value, in order, of each query parameter sent more than once: the SDK sends a list
    #: parameter as ``types[]=a&types[]=b`` (:meth:`query_values` reads both).
    repeated: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.headers = {k.lower(): v for k, v in self.headers.items()}
        self.method = self.method.upper()

    @classmethod
    def lowered(cls, method: str, path: str, headers: dict[str, str], query: dict[str, str],
                body: bytes, repeated: dict[str, list[str]] | None = None) -> SimRequest:
        """A request whose header names are lower case and method upper case already (what a
        transport builds): no second pass over them."""
        self = cls.__new__(cls)
        self.method, self.path, self.headers, self.query, self.body = \
            method, path, headers, query, body
        self.repeated = repeated or {}
        return self

    def query_values(self, name: str) -> list[str]:
        """Every value of the query parameter ``name``, in the order sent ([] when absent)."""
        if name in self.repeated:
            return list(self.repeated[name])
        return [self.query[name]] if name in self.query else []

    def query_record(self) -> dict[str, str | list[str]]:
        """The query as a log or a reproducer shows it: a parameter sent more than once has all
        its values, in order."""
        return {**self.query, **{k: list(v) for k, v in self.repeated.items()}}

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError on broken JSON), as ``json.loads`` parses
        it: jiter's faster parser first, and ``json.loads`` for whatever jiter refuses (its
        error, or a value jiter does not take, such as a lone surrogate escape)."""
        if _from_json is not None:
            try:
                return _from_json(self.body)
            except ValueError:
                pass
        return json.loads(self.body.decode("utf-8"))


def parse_query(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A query string as :class:`SimRequest` holds it: the last value of each parameter, and
    every value of each parameter sent more than once (blank values kept)."""
    pairs = parse_qsl(text, keep_blank_values=True)
    query = dict(pairs)
    if len(query) == len(pairs):
        return query, {}
    repeated: dict[str, list[str]] = {}
    for k, v in pairs:
        repeated.setdefault(k, []).append(v)
    return query, {k: v for k, v in repeated.items() if len(v) > 1}


#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` without building an encoder
#: per call: non-ASCII characters stay themselves, as the API writes them (live bodies and
#: stream payloads carry raw UTF-8, no ``\\uXXXX`` escapes: 165 payloads and 10 bodies of four
#: recorders, issue 40). :func:`json_bytes` gives the bytes on the wire.
compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_ascii_json = json.JSONEncoder(separators=(",", ":")).encode
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(value: Any) -> bytes:
    """``value`` as compact JSON in UTF-8, non-ASCII characters raw. A lone surrogate (which a
    JSON string may carry as an escape, but UTF-8 cannot encode) stays a ``\\uXXXX`` escape."""
    text = compact_json(value)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode()


#: The line ending of each of an event's three lines (``event:``, ``data:``, the blank line).
LineEndings = tuple[bytes, bytes, bytes]
LF: LineEndings = (b"\n", b"\n", b"\n")


def _sse_bytes(event: str, data_json: bytes, eol: LineEndings = LF) -> bytes:
    if eol is LF:
        return b"event: " + event.encode() + b"\ndata: " + data_json + b"\n\n"
    return b"event: " + event.encode() + eol[0] + b"data: " + data_json + eol[1] + eol[2]


#: How the API writes a ping's payload (a space after the colon; simulator.envelope).
PING_WIRE = b'{"type": "ping"}'


def payload_json(data: Any, pad: int = 0) -> bytes:
    """A ``data:`` payload as the API writes it: compact JSON, ``pad`` spaces before the closing
    brace, and a ping as ``{"type": "ping"}`` (:mod:`simulator.envelope` has the evidence)."""
    if data == {"type": "ping"}:
        return PING_WIRE
    raw = json_bytes(data)
    if pad > 0 and raw.endswith(b"}"):
        return raw[:-1] + b" " * pad + b"}"
    return raw


@dataclass
class SSEEvent:
    event: str
    data: Any
    #: Spaces before the payload's closing brace on the wire (not part of the event's value).
    pad: int = field(default=0, compare=False)
    #: The line endings on the wire (SSE allows ``\\n``, ``\\r\\n`` and ``\\r``; not part of the
    #: event's value).
    eol: LineEndings = field(default=LF, compare=False)

    def encode(self) -> bytes:
        return _sse_bytes(self.event, payload_json(self.data, self.pad), self.eol)


class EncodedEvent(SSEEvent):
    """An SSE event whose wire bytes were computed once (a recorded or synthesized stream the
    engine serves again). Immutable: ``data`` is parsed from the bytes at each access, so every
    reader gets its own copy; it equals an :class:`SSEEvent` with the same name and data."""

    __slots__ = ("_json", "wire")
    _json: bytes
    #: The event as it goes on the wire.
    wire: bytes

    def __init__(self, event: str, data: Any, pad: int = 0,  # noqa: D107 - as SSEEvent
                 eol: LineEndings = LF) -> None:
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "pad", pad)
        object.__setattr__(self, "eol", eol)
        object.__setattr__(self, "_json", json_bytes(data))
        object.__setattr__(self, "wire", _sse_bytes(event, payload_json(data, pad), eol))

    @property
    def data(self) -> Any:
        return json.loads(self._json)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"EncodedEvent is immutable (cannot set {name!r}); build an "
                             "SSEEvent to change an event")

    def encode(self) -> bytes:
        return self.wire

    def __reduce__(self) -> tuple[Any, ...]:
        return EncodedEvent, (self.event, self.data, self.pad, self.eol)

    def __copy__(self) -> EncodedEvent:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, Any]) -> EncodedEvent:
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SSEEvent):
            return NotImplemented
        return (self.event, self.data) == (other.event, other.data)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedEvent(event={self.event!r}, data={self.data!r})"


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
        return json_bytes(self.body)

    def iter_bytes(self) -> Iterator[bytes]:
        if self.events is None:
            yield self.body_bytes()
            return
        for ev in self.events:
            yield ev.encode()


class _Unread:
    """``EncodedResponse.body`` not parsed yet (one instance: copies and pickles keep it)."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "_UNREAD"

    def __copy__(self) -> _Unread:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Unread:
        return self


_UNREAD: Any = _Unread()


class EncodedResponse(SimResponse):
    """A JSON response whose bytes were computed once (a recorded body the engine serves again).
    They go on the wire as they are; ``body`` is parsed from them at first access (each response
    its own copy), after which the body is encoded again when sent, so a change to it is sent."""

    def __init__(self, status: int, headers: dict[str, str], wire: bytes) -> None:
        super().__init__(status, headers)
        self._wire: bytes | None = wire
        self._body: Any = _UNREAD

    @property
    def body(self) -> Any:
        if self._body is _UNREAD:
            self._body = json.loads(self._wire) if self._wire is not None else None
            self._wire = None
        return self._body

    @body.setter
    def body(self, value: Any) -> None:
        self._body, self._wire = value, None

    @property
    def wire(self) -> bytes | None:
        """The bytes to send, while ``body`` is unread (else None: encode ``body``)."""
        return self._wire

    def body_bytes(self) -> bytes:
        return self._wire if self._wire is not None else super().body_bytes()


Handler = Callable[[SimRequest], SimResponse]


def json_headers(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    h = {"content-type": "application/json"}
    if extra:
        h.update(extra)
    return h
