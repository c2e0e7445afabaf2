"""Hypothesis strategies for the editor checks: file contents, file names, edit inputs.

Contents are ``bytes`` built from lines with tabs, trailing spaces and non-ASCII text, joined by
``\\n``, ``\\r\\n`` or a mix, with or without a final newline, and sometimes holding bytes that are
not UTF-8. File names carry spaces, quotes and shell metacharacters.
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["edit_texts", "file_contents", "file_names", "line_texts", "view_ranges"]

_ALPHABET = st.sampled_from(list("abcxyz XY\t_=:;()$`'\"é✓"))
_NON_UTF8 = st.sampled_from([b"\xff", b"\xfe\xff", b"\xe9", b"\x80abc", b"\xc3("])


def line_texts(max_size: int = 12) -> st.SearchStrategy[str]:
    """One line's text (no terminator): tabs, spaces, quotes, ``$``, backticks, non-ASCII."""
    return st.text(_ALPHABET, max_size=max_size)


@st.composite
def file_contents(draw: st.DrawFn, max_lines: int = 6, non_utf8: bool = True) -> bytes:
    """File bytes: ``\\n``/``\\r\\n``/mixed endings, optional final newline and non-UTF-8 bytes."""
    lines = draw(st.lists(line_texts(), max_size=max_lines))
    style = draw(st.sampled_from(["lf", "crlf", "mixed"]))
    encoded = [x.encode() for x in lines]
    if non_utf8 and encoded and draw(st.booleans()):
        i = draw(st.integers(0, len(encoded) - 1))
        encoded[i] += draw(_NON_UTF8)
    out = b""
    for i, line in enumerate(encoded):
        last = i == len(encoded) - 1
        eol = b"\r\n" if style == "crlf" or (style == "mixed" and draw(st.booleans())) else b"\n"
        out += line + (eol if not last or draw(st.booleans()) else b"")
    return out


def file_names() -> st.SearchStrategy[str]:
    """Plain file names that look like shell syntax: spaces, quotes, ``;``, ``$(...)``, backticks."""
    specials = st.sampled_from(["a b", "it's", '"q"', ";", "$(x)", "`x`", "&", "|", "*", "é"])
    return st.builds(lambda a, b: f"{a}{b}.txt".strip() or "f.txt",
                     st.text("abcXYZ-_", min_size=1, max_size=4), specials)


def edit_texts(max_size: int = 16) -> st.SearchStrategy[str]:
    """Texts for new_str / insert_text / file_text: may hold newlines and CRLF."""
    pieces = st.sampled_from(["a", "b", " ", "\t", "\n", "$", "é", "\r\n", "x\n"])
    return st.lists(pieces, max_size=max_size).map("".join)


def _as_lines(text: str) -> str:
    return text + "\n"


def insert_texts(max_size: int = 16) -> st.SearchStrategy[str]:
    """Texts for ``insert``: :func:`edit_texts`, and as often such a text ending in ``\n``, the
    way seed 001's own ``insert`` example writes its text (whole lines). Where the conventions
    differ (inserted as written, or split on ``\n`` with an extra empty line) the model check
    sees it in every run, not only when a draw happened to end in a newline."""
    return st.one_of(edit_texts(max_size), edit_texts(max_size - 1).map(_as_lines))


def view_ranges(line_count: int) -> st.SearchStrategy[list[int]]:
    """``[start, end]`` pairs, valid and not: 1-based, ``-1`` to the end, past the end, reversed."""
    n = max(line_count, 1)
    return st.lists(st.integers(-1, n + 2), min_size=2, max_size=2)
