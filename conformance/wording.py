"""How the suite words counts and values in what a user reads: ``1 step`` / ``2 steps``
(:func:`plural`), a file's bytes as readable text instead of a Python repr (:func:`shown_bytes`:
``empty``, ``"a\\tb"``), and a list of alternatives (:func:`one_of`). Every report format and
every check message use these, so a word is spelled one way everywhere."""

from __future__ import annotations

from collections.abc import Sequence

_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1: ``1 step``, ``2 steps``,
    ``0 directories`` (``many`` for a plural that is not ``word + "s"``)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def quoted(text: str) -> str:
    """``text`` in double quotes, escaped only where it would not read as itself: a quote, a
    backslash and the characters that do not print (``\\n``, ``\\t``, ``\\x1b``, ``\\u200b``).
    Undecodable bytes kept by ``surrogateescape`` show as ``\\xNN`` (and only they do above
    ``\\x7f``, so the text reads back to the same bytes)."""
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 0xDC80 <= ord(c) <= 0xDCFF:  # a byte that was not UTF-8
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c.isprintable():
            out.append(c)
        elif ord(c) < 0x80:  # above 0x7f, \xNN is a byte that was not UTF-8
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def shown_bytes(data: bytes | None, limit: int = 300) -> str:
    """A file's content as a person reads it: ``absent`` (no file), ``empty``, or its text
    quoted (:func:`quoted`), cut after ``limit`` characters with how much was left out."""
    if data is None:
        return "absent"
    if not data:
        return "empty"
    text = data.decode("utf-8", "surrogateescape")
    if len(text) > limit:
        return f"{quoted(text[:limit])}… ({len(text) - limit} more characters)"
    return quoted(text)


def shown_text(text: str, limit: int = 300) -> str:
    """A text (a tool result's) quoted the same way, cut after ``limit`` characters."""
    if len(text) > limit:
        return f"{quoted(text[:limit])}… ({len(text) - limit} more characters)"
    return quoted(text)


def one_of(alternatives: Sequence[str]) -> str:
    """``a``, or ``one of: a; b; c`` (each alternative once, in order)."""
    unique = list(dict.fromkeys(alternatives))
    if len(unique) == 1:
        return unique[0]
    return "one of: " + "; ".join(unique)
