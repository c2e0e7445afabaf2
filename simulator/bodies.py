"""Request bodies parsed incrementally: an agent loop resends the whole conversation.

Each request of an agent loop carries the previous request's messages again, encoded the same way
(the SDKs serialize deterministically), plus the turns added since. :class:`BodyParser` keeps the
previous body's text and where each of its messages lies in it; when a new body begins with the
same text up to the end of the previous messages, those messages are taken as already parsed and
only the rest is parsed. Otherwise (another conversation, another encoding, a retry with different
content) the body is parsed whole. Every message also gets its exact text, which
:mod:`simulator.history` uses as its key (the same text is the same JSON value, types included).

The values are the ones ``json.loads`` gives (the parser is the ``json`` module's own scanner; a
body that is not a JSON object with a ``messages`` array, or not valid JSON, is parsed by
:meth:`simulator.http.SimRequest.json`, which raises the same errors as before). Parsed messages
are shared between the requests that resend them: treat request bodies as read-only values (the
engine and the rules never change one).
"""

from __future__ import annotations

import json.decoder
import json.scanner
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .http import SimRequest

#: ``(text, index) -> (value, end)``: the C scanner ``json.loads`` itself uses (same values).
_scan: Callable[[str, int], tuple[Any, int]] = \
    json.scanner.make_scanner(json.decoder.JSONDecoder())  # type: ignore[arg-type]
#: ``(text, index after the opening quote) -> (string, end)``.
_string: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = " \t\n\r"


class _NotIncremental(Exception):
    """The body is not shaped for incremental parsing (parse it whole instead)."""


@dataclass(slots=True)
class Parsed:
    """A request body, and each message's exact text (None when it was parsed whole)."""

    body: Any
    texts: list[str] | None = None
    #: How many leading messages were reused from the previous body.
    reused: int = 0


@dataclass(slots=True)
class _Last:
    head: str  # the text up to the end of the last message
    before: list[tuple[str, Any]]  # the members before "messages", in order
    messages: list[Any]
    texts: list[str]


def _ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _member_name(text: str, i: int) -> tuple[str, int]:
    """The member name at ``i`` (its opening quote), and where its value starts."""
    if text[i] != '"':
        raise _NotIncremental
    key, i = _string(text, i + 1)
    if text[i] in _WS:
        i = _ws(text, i)
    if text[i] != ":":
        raise _NotIncremental
    i += 1
    if text[i] in _WS:
        i = _ws(text, i)
    return key, i


class BodyParser:
    """Parses request bodies, reusing what the previous body of the same conversation parsed."""

    def __init__(self) -> None:
        self._last: _Last | None = None

    def parse(self, request: SimRequest) -> Parsed:
        """``request``'s body; raises what :meth:`SimRequest.json` raises for a broken one."""
        raw = request.body
        if not raw.startswith(b"{"):
            self._last = None
            return Parsed(request.json())
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self._last = None
            return Parsed(request.json())
        try:
            last = self._last
            if last is not None and text.startswith(last.head):
                return self._continue(text, last)
            return self._whole(text)
        except (_NotIncremental, StopIteration, ValueError, IndexError, RecursionError):
            # StopIteration: the scanner found no value where one must be
            self._last = None
            return Parsed(request.json())

    def _whole(self, text: str) -> Parsed:
        """Parse ``text`` member by member, each message on its own (its text remembered)."""
        before: list[tuple[str, Any]] = []
        i = _ws(text, 1)
        if text[i] == "}":
            raise _NotIncremental
        while True:
            key, i = _member_name(text, i)
            if key == "messages" and text[i] == "[":
                return self._messages(text, i + 1, before, [], [], 0)
            value, i = _scan(text, i)
            before.append((key, value))
            if text[i] in _WS:
                i = _ws(text, i)
            if text[i] != ",":
                raise _NotIncremental  # no messages array: nothing to reuse
            i += 1
            if text[i] in _WS:
                i = _ws(text, i)

    def _continue(self, text: str, last: _Last) -> Parsed:
        """``text`` begins with the previous body up to the end of its last message."""
        return self._messages(text, len(last.head), list(last.before), list(last.messages),
                              list(last.texts), len(last.messages), len(last.head))

    def _messages(self, text: str, i: int, before: list[tuple[str, Any]], messages: list[Any],
                  texts: list[str], reused: int, head_end: int = 0) -> Parsed:
        """Parse the messages array from ``i`` (just after ``[`` or after a message), then the
        members after it."""
        if text[i] in _WS:
            i = _ws(text, i)
        if text[i] == "]":
            i += 1
        else:
            if messages:  # after a message: a comma first
                if text[i] != ",":
                    raise _NotIncremental
                i += 1
                if text[i] in _WS:
                    i = _ws(text, i)
            while True:
                value, end = _scan(text, i)
                messages.append(value)
                texts.append(text[i:end])
                head_end = end
                i = end
                if text[i] in _WS:
                    i = _ws(text, i)
                if text[i] == "]":
                    i += 1
                    break
                if text[i] != ",":
                    raise _NotIncremental
                i += 1
                if text[i] in _WS:
                    i = _ws(text, i)
        body: dict[str, Any] = dict(before)
        if "messages" in body:
            raise _NotIncremental  # a duplicate member: let json.loads decide
        body["messages"] = messages
        if text[i] in _WS:
            i = _ws(text, i)
        while text[i] == ",":
            i += 1
            if text[i] in _WS:
                i = _ws(text, i)
            key, i = _member_name(text, i)
            value, i = _scan(text, i)
            if key == "messages":
                raise _NotIncremental
            body[key] = value
            if text[i] in _WS:
                i = _ws(text, i)
        if text[i] != "}" or _ws(text, i + 1) != len(text):
            raise _NotIncremental
        self._last = _Last(text[:head_end], before, messages, texts) if texts else None
        return Parsed(body, texts, reused)


def parse_messages_body(raw: bytes) -> Any:
    """``json.loads(raw)``, through :class:`BodyParser` (for tests and tools)."""
    return BodyParser().parse(SimRequest.lowered("POST", "/", {}, {}, raw)).body


__all__ = ["BodyParser", "Parsed", "parse_messages_body"]
