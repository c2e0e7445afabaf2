"""A request body the API cannot read, answered in the API's words.

- **Not JSON**: 400 ``invalid_request_error`` ``The request body is not valid JSON: <reason>:
  line L column C (char P)``. Live bodies quoted in public reports, 2025-08 to 2026-07:
  anthropics/claude-code#6464 and #8272 (``no low surrogate in string: line 1 column 134323
  (char 134322)``), #77525 (``unexpected control character in string: line 1 column 2379 (char
  2378)``). The position is written as Python's ``json`` module writes it (the same form); the
  reason is the live parser's where live answers name it (a raw control character in a string,
  a surrogate escape without its pair), Python's otherwise [I].
- **A lone surrogate escape** (``"\\ud83d"`` with no ``\\udcxx`` after it: a client that cut an
  emoji in two) is valid to Python's ``json`` module but not to the API's parser: the same 400,
  ``no low surrogate in string`` (the reports above: clients whose truncation split a pair);
  a low surrogate escape with no high one before it ``no high surrogate in string`` [I: the
  sibling case of the same parser].
- **JSON that is not an object** (a list, a string, ``null``): 400 ``Input should be a valid
  dictionary or object to extract fields from`` [I: the API's validator phrase for a value that
  should be an object, :mod:`simulator.rules.wording`, with no location: the body itself].
"""

from __future__ import annotations

import json
import re

PREFIX = "The request body is not valid JSON"
NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"
#: Python's reason -> the live parser's, where a live answer shows it (see the module docstring).
_LIVE_REASONS = {"Invalid control character at": "unexpected control character in string"}
#: An escaped backslash (skipped: ``\\\\ud800`` is text), a high surrogate escape with or without
#: its low one, or a low surrogate escape.
_ESCAPES = re.compile(rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
                      rb"|\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_ANY_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _position(raw: bytes, at: int) -> str:
    """``line L column C (char P)`` for byte offset ``at``, counted in characters as the API's
    (and Python's) parser counts them."""
    text = raw[:at].decode("utf-8", "replace")
    line = text.count("\n") + 1
    col = len(text) - (text.rfind("\n") + 1) + 1
    return f"line {line} column {col} (char {len(text)})"


def lone_surrogate(raw: bytes) -> str | None:
    """The API parser's reason and position for the first surrogate escape without its pair in
    ``raw``, or None (most bodies have no surrogate escape at all: one search)."""
    if _ANY_SURROGATE.search(raw) is None:
        return None
    for m in _ESCAPES.finditer(raw):
        token = m.group()
        if len(token) != 6:
            continue  # an escaped backslash, or a whole pair
        high = token[3:4].lower() in b"89ab"
        return f"no {'low' if high else 'high'} surrogate in string: {_position(raw, m.start())}"
    return None


def not_valid_json(error: ValueError) -> str:
    """The API's message for a body its JSON parser refuses (``error``: what Python's ``json``
    raised, a ``JSONDecodeError`` or a ``UnicodeDecodeError``)."""
    if isinstance(error, json.JSONDecodeError):
        reason = _LIVE_REASONS.get(error.msg, error.msg)
        return f"{PREFIX}: {reason}: line {error.lineno} column {error.colno} (char {error.pos})"
    if isinstance(error, UnicodeDecodeError):
        where = _position(error.object, error.start)
        return f"{PREFIX}: invalid UTF-8 ({error.reason}): {where}"  # [I]
    return f"{PREFIX}: {error}"


__all__ = ["NOT_AN_OBJECT", "PREFIX", "lone_surrogate", "not_valid_json"]
