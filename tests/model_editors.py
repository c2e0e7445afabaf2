"""Editors for the tests of the model-based check (``tests/test_stateful_editor.py``).

Each is the reference editor with one twist; none is a broken subject of ``tests/broken`` (they
test the check's machinery: several bugs, slowness, a crash, odd text, conventions). The module
imports nothing from the tests, so the runner can load them by path:
``tests/model_editors.py:TwoBugs.factory``.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

from conformance.reference.editor import EditorError, TextEditor


class TwoBugs(TextEditor):
    """Two distinct bugs no fixed check owns: views served from a stale cache, and ``create``
    over an existing file appending ``file_text`` instead of writing it."""

    TOOL_TYPE = "text_editor_20250429"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache: dict[tuple[Path, str], str] = {}

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        key = (path, repr(view_range))
        if key not in self.cache:
            self.cache[key] = super().view(path, raw, view_range)
        return self.cache[key]

    def create(self, path: Path, raw: str, file_text: str) -> str:
        if path.is_file():
            file_text = path.read_bytes().decode("utf-8", "surrogateescape") + file_text
            file_text = file_text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return super().create(path, raw, file_text)


class Slow(TextEditor):
    """Conformant, but every call takes 0.3 s (an editor that starts a process per call)."""

    TOOL_TYPE = "text_editor_20250429"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.3)
        return super().__call__(tool_input)


class CrashOnInsertAtStart(TextEditor):
    """Exits (``os._exit``) when asked to insert at the start of a file."""

    TOOL_TYPE = "text_editor_20250429"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        if insert_line == 0:
            os._exit(3)
        return super().insert(path, raw, insert_line, text)


class HangOnInsertAtStart(TextEditor):
    """Never answers an insert at the start of a file."""

    TOOL_TYPE = "text_editor_20250429"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        if insert_line == 0:
            time.sleep(3600)
        return super().insert(path, raw, insert_line, text)


class InsertTextOnly(TextEditor):
    """text_editor_20250728 reading the inserted text from ``insert_text`` only (its docs' name);
    an ``insert`` without it is refused."""

    TOOL_TYPE = "text_editor_20250728"

    def _insert_text(self, tool_input: dict[str, Any]) -> str:
        text = tool_input.get("insert_text")
        if not isinstance(text, str):
            raise EditorError("Error: insert needs `insert_text`.")
        return text


class NewStrOnly(TextEditor):
    """text_editor_20250728 reading the inserted text from ``new_str`` only (the older name)."""

    TOOL_TYPE = "text_editor_20250728"

    def _insert_text(self, tool_input: dict[str, Any]) -> str:
        text = tool_input.get("new_str")
        if not isinstance(text, str):
            raise EditorError("Error: insert needs `new_str`.")
        return text


class UndoKeepsCreated(TextEditor):
    """Conformant: records the created text as a file's first version (the vendor's reference and
    OpenHands do), so ``undo_edit`` right after ``create`` leaves the file as created."""

    TOOL_TYPE = "text_editor_20250124"

    def create(self, path: Path, raw: str, file_text: str) -> str:
        out = super().create(path, raw, file_text)
        self.history[path][-1] = file_text.encode("utf-8")
        return out


class OddText(TextEditor):
    """Conformant edits, but views end with a lone surrogate and ~2 MB of padding."""

    TOOL_TYPE = "text_editor_20250429"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        return super().view(path, raw, view_range) + "\n\udc80 odd \ud800\n" + "pad " * 500_000


class Unreliable(TextEditor):
    """Refuses one valid call in five, at random (a subject that answers differently each time)."""

    TOOL_TYPE = "text_editor_20250429"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        if tool_input.get("command") != "view" and random.random() < 0.2:
            return {"content": "Error: busy", "is_error": True}
        return super().__call__(tool_input)


class VendorInsert(TextEditor):
    """Conformant: ``insert`` as the vendor's reference does it, lines counted with
    ``text.split("\\n")`` (a phantom empty last line after a final newline, one empty line in an
    empty file) and ``new_str`` spliced in split on ``"\\n"``."""

    TOOL_TYPE = "text_editor_20250429"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        data = self._read(path)
        lines = data.split(b"\n")
        if not isinstance(insert_line, int) or not 0 <= insert_line <= len(lines):
            raise EditorError(f"Error: Invalid `insert_line` parameter: {insert_line}. It should "
                              f"be within the range of lines of the file: [0, {len(lines)}]")
        new = text.encode("utf-8").split(b"\n")
        self._write(path, b"\n".join(lines[:insert_line] + new + lines[insert_line:]), data)
        return f"The file {raw} has been edited."


class _TranslatesNewlines(TextEditor):
    """Reads files in text mode: CRLF and CR come back as LF (the defect
    ``editor.bytes.crlf_preserved`` reports)."""

    def _read(self, path: Path) -> bytes:
        return super()._read(path).replace(b"\r\n", b"\n").replace(b"\r", b"\n")


class TranslatesNewlines(_TranslatesNewlines):
    """Newline translation and nothing else: the model check sets its findings aside."""


class TranslatesNewlinesAndCachesViews(_TranslatesNewlines):
    """Newline translation and a second, CR-free bug no fixed check owns (views served from a
    stale cache): the model check still fails, on the second bug."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache: dict[tuple[Path, str], str] = {}

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        key = (path, repr(view_range))
        if key not in self.cache:
            self.cache[key] = super().view(path, raw, view_range)
        return self.cache[key]


class DropsCarriageReturnsOfNewText(TextEditor):
    """Keeps the file's CRLF on every edit, but drops every CR of the text it writes in: a bug
    that needs a CR, without the newline translation of a plain edit; the model check fails it."""

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        return super().str_replace(path, raw, old_str, new_str.replace("\r", ""))

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        return super().insert(path, raw, insert_line, text.replace("\r", ""))


class WornOut(TextEditor):
    """Conformant for its first 150 calls, then every str_replace is refused: a defect that no
    short reproducer replays on a fresh editor."""

    TOOL_TYPE = "text_editor_20250429"
    calls = 0

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.calls > 150 and tool_input.get("command") == "str_replace":
            return {"content": "Error: worn out", "is_error": True}
        return super().__call__(tool_input)


class JsonResults(TextEditor):
    """Conformant: answers every call with a JSON document (an MCP server's structured content
    passed on as text): ``{"output": "...", "is_error": false}``."""

    TOOL_TYPE = "text_editor_20250429"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        out = super().__call__(tool_input)
        return {"content": json.dumps({"output": out["content"], "is_error": out["is_error"]}),
                "is_error": out["is_error"]}


class JsonResultsStaleView(JsonResults):
    """JSON results and views served from a stale cache: the headline names the line the view
    did not show, decoded, not a JSON escape."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache: dict[tuple[Path, str], str] = {}

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        key = (path, repr(view_range))
        if key not in self.cache:
            self.cache[key] = super().view(path, raw, view_range)
        return self.cache[key]
