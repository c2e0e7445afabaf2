"""Deliberately broken editors: ``undo_edit`` gives back bytes its history or backup lost."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.editor import TextEditor


class UndoExpandsTabs(TextEditor):
    """Keeps its undo history as text with tabs expanded (a backup written through an
    ``expandtabs()`` pretty-printer): every edit is exact, every undo expands the file's tabs."""

    TARGET = "editor.undo_edit.restores_tabs"
    TOOL_TYPE = "text_editor_20250124"

    def undo_edit(self, path: Path, raw: str) -> str:
        stack = self.history.get(path)
        if stack and stack[-1] is not None:
            stack[-1] = stack[-1].decode("utf-8", "surrogateescape").expandtabs().encode(
                "utf-8", "surrogateescape")
        return super().undo_edit(path, raw)


class UndoBackupTextMode(TextEditor):
    """Seed 001's ``backup_file`` pitfall: the backup is copied with ``open(path, 'r')`` /
    ``open(backup, 'w')``, so CRLF and lone CR come back as LF on undo; edits stay exact."""

    TARGET = "editor.undo_edit.restores_crlf"
    TOOL_TYPE = "text_editor_20250124"

    def undo_edit(self, path: Path, raw: str) -> str:
        stack = self.history.get(path)
        if stack and stack[-1] is not None:
            stack[-1] = stack[-1].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return super().undo_edit(path, raw)
