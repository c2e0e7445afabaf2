"""Byte-level helpers for the reference text editor.

Files are handled as ``bytes`` from disk to disk: nothing outside the edited span is decoded,
re-encoded or re-joined, so tabs, CRLF, a missing trailing newline, non-UTF-8 bytes and very long
lines survive every command. Only what is *shown* (``view``) is decoded, with replacement
characters for undecodable bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

#: How deep a directory ``view`` lists (the depth the published editors use).
LISTING_DEPTH = 2


def split_lines(data: bytes) -> list[bytes]:
    """Lines of ``data`` *with* their terminators; a final newline does not start a new line."""
    # Not bytes.splitlines: that also splits on a lone "\r"; a line here ends only at "\n".
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_count(data: bytes) -> int:
    return len(split_lines(data))


def line_ending(data: bytes) -> bytes:
    """The file's own line terminator (of its first line): ``\\r\\n`` or ``\\n``."""
    nl = data.find(b"\n")
    return b"\r\n" if nl > 0 and data[nl - 1:nl] == b"\r" else b"\n"


def count_occurrences(data: bytes, needle: bytes) -> int:
    """Occurrences of ``needle`` in ``data``, overlapping ones included (each is a location)."""
    count, start = 0, data.find(needle)
    while start != -1:
        count += 1
        start = data.find(needle, start + 1)
    return count


def insert_after_line(data: bytes, line: int, text: bytes) -> bytes:
    """``text`` as whole line(s) after line ``line`` (0 = start); the rest is kept byte for byte.

    The inserted text gets the file's line terminator when it lacks one and something follows it;
    at the end of a file without a final newline the terminator goes *before* the text, so the
    file still ends without one.
    """
    lines = split_lines(data)
    eol = line_ending(data)
    offset = sum(len(x) for x in lines[:line])
    before, after = data[:offset], data[offset:]
    if before and not before.endswith(b"\n"):
        before += eol
        if text.endswith(b"\n") and not after:
            text = text[:-2] if text.endswith(b"\r\n") else text[:-1]
    elif after and not text.endswith(b"\n"):
        text += eol
    return before + text + after


def render_numbered(lines: list[bytes], first: int) -> str:
    """``"N: text"`` per line, as in the documented view result (seed 001, "Nomor baris")."""
    out = []
    for i, raw in enumerate(lines, start=first):
        body = raw[:-1] if raw.endswith(b"\n") else raw
        out.append(f"{i}: {body.decode('utf-8', errors='replace')}")
    return "\n".join(out)


def list_directory(root: Path, shown_as: str) -> str:
    """Files and directories up to two levels deep, hidden items excluded; never via a shell."""
    entries: list[str] = []

    def walk(d: Path, depth: int) -> None:
        try:
            children = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        for e in children:
            if e.name.startswith("."):
                continue
            is_dir = e.is_dir(follow_symlinks=False)
            rel = Path(e.path).relative_to(root).as_posix()
            entries.append(f"{shown_as.rstrip('/')}/{rel}{'/' if is_dir else ''}")
            if is_dir and depth < LISTING_DEPTH:
                walk(Path(e.path), depth + 1)

    walk(root, 1)
    header = (f"Here are the files and directories up to {LISTING_DEPTH} levels deep in "
              f"{shown_as}, excluding hidden items:")
    return "\n".join([header, shown_as, *entries])


def truncate(text: str, max_characters: int | None) -> str:
    """Cut view output to ``max_characters`` (20250728), saying so and how to see the rest."""
    if max_characters is None or len(text) <= max_characters:
        return text
    note = (f"\n<response clipped: view output truncated to {max_characters} characters; "
            "use view_range to see the rest>")
    return text[:max_characters] + note
