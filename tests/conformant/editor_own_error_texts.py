"""A conformant editor whose error texts are its own, not the documented example texts.

PROTOCOL.md §3 lists "Documented example texts" and seed 001 "Tangani kesalahan" (Handle errors)
asks for "an appropriate error message" (``pesan kesalahan yang sesuai``) in a tool_result with
``is_error: true``; the quoted texts are examples (the seed's own are Indonesian). This editor flags
every error with ``is_error`` and explains the problem in its own words, some not starting with
``Error``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import EditorError, TextEditor
from conformance.reference.editor_text import count_occurrences


class OwnErrorTexts(TextEditor):
    """Errors: ``is_error: true``, wording of its own."""

    CONVENTION = "error texts in its own words (is_error: true)"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        out = super().__call__(tool_input)
        if out["is_error"] and out["content"] == "Error: File not found":
            out = {"content": f"The path {tool_input.get('path')} does not exist. Check the "
                              "path, or create the file first.", "is_error": True}
        return out

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        n = count_occurrences(data, old_str.encode("utf-8")) if old_str else 1
        if n == 0:
            raise EditorError(f"old_str was not found verbatim in {raw}; nothing was changed. "
                              "View the file and copy the text exactly.")
        if n > 1:
            raise EditorError(f"old_str occurs {n} times in {raw} (it must be unique); nothing "
                              "was changed. Include more surrounding lines.")
        return super().str_replace(path, raw, old_str, new_str)
