"""Deliberately broken editors: error handling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor


class EmptyForMissing(TextEditor):
    """Shows a missing file as empty."""

    TARGET = "editor.errors.missing_file"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if not path.exists():
            return ""
        return super().view(path, raw, view_range)


class ErrorsAsSuccess(TextEditor):
    """Returns error texts with is_error false."""

    TARGET = "editor.errors.flagged_is_error"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {**super().__call__(tool_input), "is_error": False}


class SilentErrors(TextEditor):
    """Flags its errors but says nothing: ``{"content": "", "is_error": true}``.

    (Errors worded in the editor's own way are conformant: tests/conformant/
    editor_own_error_texts.py.)
    """

    TARGET = "editor.errors.documented_texts"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        out = super().__call__(tool_input)
        return {"content": "", "is_error": True} if out["is_error"] else out


class CreateDefaultsEmpty(TextEditor):
    """create without file_text writes an empty file (``file_text or ""``)."""

    TARGET = "editor.errors.invalid_input_answered"

    def _dispatch(self, tool_input: dict[str, Any]) -> str:
        if tool_input.get("command") == "create" and "file_text" not in tool_input:
            tool_input = {**tool_input, "file_text": ""}
        return super()._dispatch(tool_input)


class RaisesOnBadInput(TextEditor):
    """Lets KeyError escape on a missing field."""

    TARGET = "editor.errors.returned_not_raised"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        if tool_input.get("command") == "str_replace" and "old_str" not in tool_input:
            raise KeyError("old_str")
        return super().__call__(tool_input)


class InsertWithoutTextInsertsNothing(TextEditor):
    """insert without the text to insert inserts an empty line (``text or ""``)."""

    TARGET = "editor.errors.invalid_input_answered"

    def _insert_text(self, tool_input: dict[str, Any]) -> str:
        if not any(name in tool_input for name in self.insert_fields):
            return ""
        return super()._insert_text(tool_input)


class RaisesOnRelativePath(TextEditor):
    """Joins a relative path to its root with ``*`` (a TypeError escapes): absolute paths work."""

    TARGET = "editor.errors.returned_not_raised"

    def _resolve(self, raw: Any) -> Path:
        if isinstance(raw, str) and raw and not raw.startswith("/"):
            raise TypeError(f"unsupported operand type(s) for *: 'PosixPath' and 'str' ({raw})")
        return super()._resolve(raw)


class OSErrorAsSuccess(TextEditor):
    """Answers what the file system refuses (an OSError) with its error text and is_error false."""

    TARGET = "editor.errors.flagged_is_error"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"content": self._dispatch(tool_input), "is_error": False}
        except OSError as e:
            if isinstance(e, PermissionError):
                return super().__call__(tool_input)
            return {"content": f"Error: {e.strerror}: {tool_input.get('path')}",
                    "is_error": False}
        except Exception:
            return super().__call__(tool_input)
