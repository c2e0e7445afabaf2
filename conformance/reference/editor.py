"""The reference text editor: a conformant handler for every ``text_editor_*`` version.

A subject factory per version (DESIGN.md "Subjects"): ``text_editor_20250728(workdir,
timeout=..., max_characters=...)`` returns a handler taking the tool_use ``input`` and returning
``{"content": str, "is_error": bool}``. Semantics follow seed 001 ("Perintah tool editor teks",
"Tangani kesalahan") and PROTOCOL.md §3, and avoid the pitfalls of the seed's own sample code:
files are read and written as bytes (no newline translation, no re-joining of lines, no
``expandtabs``), ``str_replace`` refuses anything but exactly one match, errors carry
``is_error: true`` (the sample returns ``{"error": ...}`` for ``undo_edit``), paths are never
handed to a shell, and paths outside the working directory are refused.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from simulator import registry

from .editor_text import (
    count_occurrences,
    insert_after_line,
    line_count,
    list_directory,
    render_numbered,
    split_lines,
    truncate,
)

#: Documented texts (PROTOCOL.md §3 "Documented example texts"; seed 001 "Tangani kesalahan").
FILE_NOT_FOUND = "Error: File not found"
NO_MATCH = "Error: No match found for replacement. Please check your text and try again."
MULTIPLE_MATCHES = ("Error: Found {n} matches for replacement text. Please provide more context "
                    "to make a unique match.")
PERMISSION_DENIED = "Error: Permission denied. Cannot write to file."
REPLACED = "Successfully replaced text at exactly one location."

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class EditorError(Exception):
    """A refusal, answered as a tool_result with ``is_error: true``."""


class TextEditor:
    """One editor session over ``workdir``; keeps the undo history of the versions that have it.

    A subclass (a variant of the reference) names its version in ``TOOL_TYPE`` and is a subject
    as ``path/to/module.py:MyEditor.factory``.
    """

    #: The version :meth:`factory` builds.
    TOOL_TYPE: ClassVar[str] = "text_editor_20250728"

    @classmethod
    def factory(cls, workdir: Path, timeout: float | None = None,
                max_characters: int | None = None) -> TextEditor:
        """A subject factory (DESIGN.md "Subjects") for ``cls`` at ``TOOL_TYPE``."""
        fields = registry.TOOLS[cls.TOOL_TYPE].definition_fields
        return cls(workdir, tool_type=cls.TOOL_TYPE, timeout=timeout,
                   max_characters=max_characters if "max_characters" in fields else None)

    def __init__(self, workdir: str | os.PathLike[str], *, tool_type: str,
                 max_characters: int | None = None, timeout: float | None = None) -> None:
        version = registry.get(tool_type)
        if version is None or version.family != "text_editor":
            known = sorted(t.type for t in registry.of_family("text_editor"))
            raise ValueError(f"{tool_type!r} is not a text editor tool type; use one of {known}")
        if max_characters is not None and "max_characters" not in version.definition_fields:
            raise ValueError(f"max_characters exists only on text_editor_20250728, not {tool_type}")
        self.root = Path(os.path.realpath(workdir))
        self.tool_type = tool_type
        self.commands = version.command_names
        self.insert_fields = version.insert_text_fields
        self.max_characters = max_characters
        self.history: dict[Path, list[bytes | None]] = {}

    # -- dispatch ---------------------------------------------------------------------------

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"content": self._dispatch(tool_input), "is_error": False}
        except EditorError as e:
            return {"content": str(e), "is_error": True}
        except PermissionError:
            return {"content": PERMISSION_DENIED, "is_error": True}
        except OSError as e:
            return {"content": f"Error: {os.strerror(e.errno or errno.EIO)}: "
                               f"{tool_input.get('path')}", "is_error": True}

    def _dispatch(self, tool_input: dict[str, Any]) -> str:
        if not isinstance(tool_input, dict):
            raise EditorError("Error: The tool input must be a JSON object with a `command`.")
        command = tool_input.get("command")
        if command == "undo_edit" and "undo_edit" not in self.commands:
            raise EditorError(
                f"Error: The undo_edit command is not supported by {self.tool_type} (removed in "
                "text_editor_20250429). Allowed commands: " + ", ".join(self.commands) + ".")
        if command not in self.commands:
            raise EditorError(f"Error: Unknown command {command!r}. Allowed commands: "
                              + ", ".join(self.commands) + ".")
        raw = tool_input.get("path")
        path = self._resolve(raw)
        assert isinstance(raw, str)
        if command == "view":
            return self.view(path, raw, tool_input.get("view_range"))
        if command == "create":
            return self.create(path, raw, _text(tool_input, "file_text", required=True))
        if command == "str_replace":
            return self.str_replace(path, raw, _text(tool_input, "old_str", required=True),
                                    _text(tool_input, "new_str", required=False))
        if command == "insert":
            return self.insert(path, raw, tool_input.get("insert_line"),
                               self._insert_text(tool_input))
        return self.undo_edit(path, raw)

    def _resolve(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw:
            raise EditorError("Error: The `path` parameter is required: the file or directory "
                              "to work on, inside the working directory.")
        if "\x00" in raw:
            raise EditorError("Error: The `path` parameter contains a NUL character.")
        p = Path(raw)
        real = Path(os.path.realpath(p if p.is_absolute() else self.root / p))
        if real != self.root and self.root not in real.parents:
            raise EditorError(f"Error: The path {raw} is outside the working directory "
                              f"{self.root}. Use a path inside it.")
        return real

    def _insert_text(self, tool_input: dict[str, Any]) -> str:
        for name in self.insert_fields:
            if name in tool_input:
                return _text(tool_input, name, required=True)
        raise EditorError("Error: insert needs the text to insert in "
                          + " or ".join(f"`{f}`" for f in self.insert_fields) + ".")

    # -- commands ---------------------------------------------------------------------------

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_dir():
            if view_range is not None:
                raise EditorError("Error: The `view_range` parameter is not allowed when `path` "
                                  "points to a directory.")
            return truncate(list_directory(path, raw), self.max_characters)
        lines = split_lines(self._read(path))
        first, last = 1, len(lines)
        if view_range is not None:
            first, last = _check_range(view_range, len(lines))
        return truncate(render_numbered(lines[first - 1:last], first), self.max_characters)

    def create(self, path: Path, raw: str, file_text: str) -> str:
        if path.is_dir():
            raise EditorError(f"Error: {raw} is a directory; create needs a file path.")
        previous = path.read_bytes() if path.is_file() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file_text.encode("utf-8"))
        self.history.setdefault(path, []).append(previous)
        return f"File created successfully at: {raw}"

    def str_replace(self, path: Path, raw: str, old_str: str, new_str: str) -> str:
        data = self._read(path)
        old = old_str.encode("utf-8")
        if not old:
            raise EditorError("Error: `old_str` is empty; give the exact text to replace.")
        n = count_occurrences(data, old)
        if n == 0:
            raise EditorError(NO_MATCH)
        if n > 1:
            raise EditorError(MULTIPLE_MATCHES.format(n=n))
        at = data.find(old)
        self._write(path, data[:at] + new_str.encode("utf-8") + data[at + len(old):], data)
        return REPLACED

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        data = self._read(path)
        n = line_count(data)
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise EditorError("Error: `insert_line` must be an integer: the line after which to "
                              "insert (0 for the start of the file).")
        if not 0 <= insert_line <= n:
            raise EditorError(f"Error: Invalid `insert_line` {insert_line}: the file has {n} "
                              f"lines, so it must be between 0 and {n}.")
        self._write(path, insert_after_line(data, insert_line, text.encode("utf-8")), data)
        return f"Text inserted after line {insert_line} of {raw}."

    def undo_edit(self, path: Path, raw: str) -> str:
        stack = self.history.get(path)
        if not stack:
            raise EditorError(f"Error: No edit history found for {raw}.")
        previous = stack.pop()
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(previous)
        return f"Last edit to {raw} undone successfully."

    # -- files ------------------------------------------------------------------------------

    def _read(self, path: Path) -> bytes:
        if not path.exists():
            raise EditorError(FILE_NOT_FOUND)
        if path.is_dir():
            raise EditorError(f"Error: {path} is a directory; this command needs a file.")
        if not path.is_file():
            raise EditorError(f"Error: {path} is not a regular file.")
        return path.read_bytes()

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        path.write_bytes(data)
        self.history.setdefault(path, []).append(previous)


def _text(tool_input: dict[str, Any], name: str, *, required: bool) -> str:
    value = tool_input.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise EditorError(f"Error: The `{name}` parameter is required and must be a string.")
    return value


def _check_range(view_range: Any, n: int) -> tuple[int, int]:
    if (not isinstance(view_range, list | tuple) or len(view_range) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in view_range)):
        raise EditorError("Error: `view_range` must be two integers [start, end]: 1-based line "
                          "numbers, end -1 for the end of the file.")
    start, end = view_range
    if not 1 <= start <= max(n, 1):
        raise EditorError(f"Error: Invalid `view_range` {list(view_range)}: the first line must "
                          f"be between 1 and {n}.")
    if end == -1:
        return start, n
    if not start <= end <= n:
        raise EditorError(f"Error: Invalid `view_range` {list(view_range)}: the last line must "
                          f"be between {start} and {n}, or -1 for the end of the file.")
    return start, end


# -- subject factories (DESIGN.md "Subjects") -----------------------------------------------------

def text_editor_20241022(workdir: Path, timeout: float | None = None) -> TextEditor:
    return TextEditor(workdir, tool_type="text_editor_20241022", timeout=timeout)


def text_editor_20250124(workdir: Path, timeout: float | None = None) -> TextEditor:
    return TextEditor(workdir, tool_type="text_editor_20250124", timeout=timeout)


def text_editor_20250429(workdir: Path, timeout: float | None = None) -> TextEditor:
    return TextEditor(workdir, tool_type="text_editor_20250429", timeout=timeout)


def text_editor_20250728(workdir: Path, timeout: float | None = None,
                         max_characters: int | None = None) -> TextEditor:
    return TextEditor(workdir, tool_type="text_editor_20250728", timeout=timeout,
                      max_characters=max_characters)


#: tool type → factory, for the reference-subject registry.
EDITOR_FACTORIES: dict[str, Callable[..., TextEditor]] = {
    "text_editor_20241022": text_editor_20241022,
    "text_editor_20250124": text_editor_20250124,
    "text_editor_20250429": text_editor_20250429,
    "text_editor_20250728": text_editor_20250728,
}
