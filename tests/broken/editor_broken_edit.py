"""Deliberately broken editors: str_replace, create, insert, undo_edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import REPLACED, EditorError, TextEditor
from conformance.reference.editor_text import line_count


class RefusesEmptyNewStr(TextEditor):
    """Treats an empty new_str (a deletion) as missing."""

    TARGET = "editor.str_replace.replaces_exactly_one_match"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        if not new_str:
            raise EditorError("Error: new_str is required")
        return super().str_replace(path, raw, old_str, new_str)


class SilentNoMatch(TextEditor):
    """Reports success when old_str is not in the file."""

    TARGET = "editor.str_replace.rejects_no_match"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        if old_str.encode() not in self._read(path):
            return REPLACED
        return super().str_replace(path, raw, old_str, new_str)


class ReplacesAll(TextEditor):
    """The seed sample's pitfall: content.replace(old, new) on every match."""

    TARGET = "editor.str_replace.rejects_multiple_matches"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        if data.count(old_str.encode()) > 1:
            self._write(path, data.replace(old_str.encode(), new_str.encode()), data)
            return REPLACED
        return super().str_replace(path, raw, old_str, new_str)


class FuzzyWhitespace(TextEditor):
    """Retries with old_str stripped of surrounding whitespace when nothing matches."""

    TARGET = "editor.str_replace.whitespace_exact"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        if old_str.encode() not in self._read(path) and old_str.strip():
            old_str = old_str.strip()
        return super().str_replace(path, raw, old_str, new_str)


class CreateAddsNewline(TextEditor):
    """Appends a final newline to file_text."""

    TARGET = "editor.create.writes_file_text"

    def create(self, path: Path, raw: str, file_text: str) -> str:
        return super().create(path, raw, file_text if file_text.endswith("\n") else file_text + "\n")


class InsertZeroAfterFirst(TextEditor):
    """Treats insert_line 0 like 1."""

    TARGET = "editor.insert.at_start"

    def insert(self, path: Path, raw: str, insert_line: object, text: str) -> str:
        return super().insert(path, raw, 1 if insert_line == 0 else insert_line, text)


class InsertBeforeLine(TextEditor):
    """Inserts before line N instead of after it, for lines inside the file."""

    TARGET = "editor.insert.in_middle"

    def insert(self, path: Path, raw: str, insert_line: object, text: str) -> str:
        n = line_count(self._read(path))
        if isinstance(insert_line, int) and 1 < insert_line < n:
            insert_line -= 1
        return super().insert(path, raw, insert_line, text)


class InsertEndBeforeLast(TextEditor):
    """Inserting after the last line lands before it."""

    TARGET = "editor.insert.at_end"

    def insert(self, path: Path, raw: str, insert_line: object, text: str) -> str:
        n = line_count(self._read(path))
        return super().insert(path, raw, n - 1 if insert_line == n and n > 0 else insert_line,
                              text)


class InsertPastEndAppends(TextEditor):
    """Silently appends when insert_line is past the end (or negative)."""

    TARGET = "editor.insert.rejects_past_end"

    def insert(self, path: Path, raw: str, insert_line: object, text: str) -> str:
        n = line_count(self._read(path))
        if isinstance(insert_line, int) and not 0 <= insert_line <= n:
            insert_line = n
        return super().insert(path, raw, insert_line, text)


class OnlyNewStr(TextEditor):
    """Knows only the older field name new_str."""

    TARGET = "editor.insert.accepts_insert_text"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.insert_fields = ("new_str",)


class UndoSucceedsWithoutRestoring(TextEditor):
    """A second undo_edit says it undid the edit before and leaves the file as it is (it keeps
    one level and reports success for the rest: success for a failure)."""

    TARGET = "editor.undo_edit.restores_previous_content"
    TOOL_TYPE = "text_editor_20250124"

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        super()._write(path, data, previous)
        self.history[path] = self.history[path][-1:]

    def undo_edit(self, path: Path, raw: str) -> str:
        if not self.history.get(path):
            return f"Last edit to {raw} undone successfully."
        return super().undo_edit(path, raw)


class UndoRestoresOriginal(TextEditor):
    """undo_edit goes back to the file as it was before its first edit, whatever came since
    (one defect in undo_edit: only the undo check may fail, not the editor.bytes checks)."""

    TARGET = "editor.undo_edit.restores_previous_content"
    TOOL_TYPE = "text_editor_20250124"

    def undo_edit(self, path: Path, raw: str) -> str:
        stack = self.history.get(path)
        if stack:
            del stack[1:]
        return super().undo_edit(path, raw)


class UndoEverywhere(TextEditor):
    """Accepts undo_edit on every version."""

    TARGET = "editor.undo_edit.refused_without_undo"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands = (*self.commands, "undo_edit")


class SeedSampleUndo(TextEditor):
    """Seed 001's sample: undo_edit on Claude 4 returns {"error": ...} as the result, unflagged."""

    TARGET = "editor.undo_edit.refused_without_undo"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        if tool_input.get("command") == "undo_edit":
            return {"content": str({"error": "perintah undo_edit tidak didukung di Claude 4"}),
                    "is_error": False}
        return super().__call__(tool_input)


class ReplacesFirstOfTwo(TextEditor):
    """Refuses str_replace only past two matches: of exactly two it replaces the first."""

    TARGET = "editor.str_replace.rejects_multiple_matches"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        old = old_str.encode("utf-8")
        if old and data.count(old) == 2:
            at = data.find(old)
            self._write(path, data[:at] + new_str.encode("utf-8") + data[at + len(old):], data)
            return REPLACED
        return super().str_replace(path, raw, old_str, new_str)
