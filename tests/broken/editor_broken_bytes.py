"""Deliberately broken editors: bytes outside the edited span change."""

from __future__ import annotations

import io
from pathlib import Path

from conformance.reference.editor import TextEditor


class ExpandsTabs(TextEditor):
    """The published quickstart's pitfall: expandtabs() on the file before str_replace."""

    TARGET = "editor.bytes.tabs_preserved"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        if b"\t" in data:
            path.write_bytes(data.decode("utf-8", "surrogateescape").expandtabs()
                             .encode("utf-8", "surrogateescape"))
        return super().str_replace(path, raw, old_str.expandtabs(), new_str.expandtabs())


class TextModeIO(TextEditor):
    """The seed sample's pitfall: open(path, 'r') / open(path, 'w') translate newlines."""

    TARGET = "editor.bytes.crlf_preserved"

    def _read(self, path: Path) -> bytes:
        data = super()._read(path)
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape",
                                newline=None).read()
        return text.encode("utf-8", "surrogateescape")


class EnsuresFinalNewline(TextEditor):
    """Adds a final newline on every edit."""

    TARGET = "editor.bytes.trailing_newline_preserved"

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        super()._write(path, data if data.endswith(b"\n") else data + b"\n", previous)


class ReplacementCharacters(TextEditor):
    """Decodes with errors='replace' and writes back UTF-8."""

    TARGET = "editor.bytes.non_utf8_preserved"

    def _read(self, path: Path) -> bytes:
        return super()._read(path).decode("utf-8", "replace").encode("utf-8")


class CapsLineLength(TextEditor):
    """Cuts lines longer than 100,000 bytes when writing."""

    TARGET = "editor.bytes.long_lines_preserved"

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        lines = data.split(b"\n")
        super()._write(path, b"\n".join(x[:100_000] for x in lines), previous)


class ReadsFirstMegabyte(TextEditor):
    """Reads only the first megabyte of a file."""

    TARGET = "editor.bytes.large_file_preserved"

    def _read(self, path: Path) -> bytes:
        return super()._read(path)[:1 << 20]


class CutsCrlfLineAtEnd(TextEditor):
    """At the end of a file without a final newline, drops the last two bytes of an inserted text
    ending in CRLF plus one more: ``INSERTED LINE\\r\\n`` comes out as ``INSERTED LIN``."""

    TARGET = "editor.bytes.crlf_preserved"

    def insert(self, path: Path, raw: str, insert_line: object, text: str) -> str:
        data = self._read(path) if path.exists() else b""
        if (text.endswith("\r\n") and data and not data.endswith(b"\n")
                and isinstance(insert_line, int) and insert_line == data.count(b"\n") + 1):
            text = text[:-1]  # the reference then cuts a "\n" more: the "E" is lost
            self._write(path, data + b"\r\n" + text[:-2].encode("utf-8"), data)
            return f"Text inserted after line {insert_line} of {raw}."
        return super().insert(path, raw, insert_line, text)
