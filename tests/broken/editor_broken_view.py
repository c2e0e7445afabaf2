"""Deliberately broken editors: view, view_range, directories, max_characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import EditorError, TextEditor, _check_range
from conformance.reference.editor_text import render_numbered, split_lines, truncate


class FirstTenLines(TextEditor):
    """Shows at most the first 10 lines when no view_range is given."""

    TARGET = "editor.view.returns_file_content"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if view_range is None and path.is_file():
            return render_numbered(split_lines(self._read(path))[:10], 1)
        return super().view(path, raw, view_range)


class NoLineNumbers(TextEditor):
    """Returns the raw text without line numbers."""

    TARGET = "editor.view.line_numbers"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_file():
            lines = split_lines(self._read(path))
            a, b = (1, len(lines)) if view_range is None else _check_range(view_range, len(lines))
            return truncate(b"".join(lines[a - 1:b]).decode("utf-8", "replace"),
                            self.max_characters)
        return super().view(path, raw, view_range)


class EndExclusive(TextEditor):
    """Treats the end of view_range as exclusive (a Python slice)."""

    TARGET = "editor.view.view_range_one_based_inclusive"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_file() and view_range is not None and view_range[1] != -1:
            super().view(path, raw, view_range)  # same validation
            lines = split_lines(self._read(path))
            return render_numbered(lines[view_range[0] - 1:view_range[1] - 1], view_range[0])
        return super().view(path, raw, view_range)


class MinusOneAsSlice(TextEditor):
    """Uses -1 as a Python slice end, so the last line goes missing."""

    TARGET = "editor.view.view_range_minus_one_reads_to_end"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_file() and view_range is not None and view_range[1] == -1:
            super().view(path, raw, view_range)
            lines = split_lines(self._read(path))
            return render_numbered(lines[view_range[0] - 1:-1], view_range[0])
        return super().view(path, raw, view_range)


class ClampsRange(TextEditor):
    """Clamps any view_range instead of refusing an impossible one."""

    TARGET = "editor.view.view_range_out_of_range_is_error"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_file() and view_range is not None:
            lines = split_lines(self._read(path))
            _check_range(view_range, 10**9)  # the shape only
            a = min(max(view_range[0], 1), len(lines) + 1)
            b = len(lines) if view_range[1] == -1 else min(view_range[1], len(lines))
            return render_numbered(lines[a - 1:b], a)
        return super().view(path, raw, view_range)


class NoDirectories(TextEditor):
    """Refuses to view directories."""

    TARGET = "editor.view.directory_lists_entries"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_dir():
            raise EditorError(f"Error: {raw} is a directory")
        return super().view(path, raw, view_range)


class IgnoresMaxCharacters(TextEditor):
    """Accepts max_characters and ignores it."""

    TARGET = "editor.view.max_characters_truncates"
    TOOL_TYPE = "text_editor_20250728"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        limit, self.max_characters = self.max_characters, None
        try:
            return super().view(path, raw, view_range)
        finally:
            self.max_characters = limit


def _binary(path: Path) -> bool:
    return path.is_file() and b"\x00" in path.read_bytes()


class BinaryViewExits(TextEditor):
    """Dies on a file holding NUL bytes (a decoder that aborts the process)."""

    TARGET = "editor.view.binary_file_answered"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if _binary(path):
            raise SystemExit(70)
        return super().view(path, raw, view_range)


class BinaryViewStripsNul(TextEditor):
    """"Cleans" a file it views: NUL bytes are removed and the file written back."""

    TARGET = "editor.view.binary_file_answered"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if _binary(path):
            path.write_bytes(path.read_bytes().replace(b"\x00", b""))
        return super().view(path, raw, view_range)


class BinaryViewPoisons(TextEditor):
    """Answers the view of a binary file, but its state is broken afterwards: every later view
    fails."""

    TARGET = "editor.view.binary_file_answered"
    poisoned = False

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if self.poisoned:
            raise EditorError("Error: internal error: decoder state invalid")
        if _binary(path):
            self.poisoned = True
        return super().view(path, raw, view_range)
