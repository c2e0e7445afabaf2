"""A conformant editor whose ``undo_edit`` keeps one level: a second undo is refused.

Seed 001 "undo_edit": "Perintah undo_edit memungkinkan Claude untuk mengembalikan pengeditan
terakhir yang dibuat pada file" (revert the *last* edit made to the file), and its own design keeps
one backup per file (``backup_path = f"{file_path}.backup"``, "Buat backup sebelum mengedit").
Nothing asks for a deeper history; a deeper undo refused with ``is_error`` loses nothing.
"""

from __future__ import annotations

from pathlib import Path

from conformance.reference.editor import TextEditor


class OneLevelUndo(TextEditor):
    """Remembers only the last edit of each file; a second undo_edit is refused."""

    CONVENTION = "undo_edit: one level (a second undo refused)"
    TOOL_TYPES = ("text_editor_20250124",)

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        super()._write(path, data, previous)
        self.history[path] = self.history[path][-1:]

    def create(self, path: Path, raw: str, file_text: str) -> str:
        out = super().create(path, raw, file_text)
        self.history[path] = self.history[path][-1:]
        return out
