"""Deliberately broken editors: bytes outside the edited span change."""

from __future__ import annotations

import io
from pathlib import Path

from conformance.reference.editor import TextEditor

from .editor_kit import broken


@broken("editor.bytes.tabs_preserved")
class ExpandsTabs(TextEditor):
    """The published quickstart's pitfall: expandtabs() on the file before str_replace."""

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        if b"\t" in data:
            path.write_bytes(data.decode("utf-8", "surrogateescape").expandtabs()
                             .encode("utf-8", "surrogateescape"))
        return super().str_replace(path, raw, old_str.expandtabs(), new_str.expandtabs())


@broken("editor.bytes.crlf_preserved")
class TextModeIO(TextEditor):
    """The seed sample's pitfall: open(path, 'r') / open(path, 'w') translate newlines."""

    def _read(self, path: Path) -> bytes:
        data = super()._read(path)
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape",
                                newline=None).read()
        return text.encode("utf-8", "surrogateescape")


@broken("editor.bytes.trailing_newline_preserved")
class EnsuresFinalNewline(TextEditor):
    """Adds a final newline on every edit."""

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        super()._write(path, data if data.endswith(b"\n") else data + b"\n", previous)


@broken("editor.bytes.non_utf8_preserved")
class ReplacementCharacters(TextEditor):
    """Decodes with errors='replace' and writes back UTF-8."""

    def _read(self, path: Path) -> bytes:
        return super()._read(path).decode("utf-8", "replace").encode("utf-8")


@broken("editor.bytes.long_lines_preserved")
class CapsLineLength(TextEditor):
    """Cuts lines longer than 100,000 bytes when writing."""

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        lines = data.split(b"\n")
        super()._write(path, b"\n".join(x[:100_000] for x in lines), previous)


@broken("editor.bytes.large_file_preserved")
class ReadsFirstMegabyte(TextEditor):
    """Reads only the first megabyte of a file."""

    def _read(self, path: Path) -> bytes:
        return super()._read(path)[:1 << 20]
