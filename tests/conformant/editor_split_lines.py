"""A conformant editor whose ``insert`` splits ``new_str`` on ``"\\n"`` and joins lines.

This is what the vendor's reference implementation does (``file_text.split("\\n")``, the new
lines spliced in, ``"\\n".join``): a ``new_str`` ending in ``"\\n"`` leaves an extra empty line
after the inserted text. Seed 001's own ``insert`` example ends its ``new_str`` with ``"\\n"``
and the docs do not say which result is right, so the suite must accept it (issue 13, point 1).
Everything else is the reference editor; the split is done on bytes so that CRLF, tabs and
non-UTF-8 bytes around the insertion survive, as in editors that keep them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import EditorError, TextEditor
from conformance.reference.editor_text import line_count


class SplitLinesInsert(TextEditor):
    """``insert``: ``"\\n".join(lines[:k] + new_str.split("\\n") + lines[k:])``."""

    CONVENTION = "split-lines insert: new_str ending in \\n leaves an extra empty line"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        data = self._read(path)
        n = line_count(data)
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise EditorError("Error: insert_line must be an integer")
        if not 0 <= insert_line <= n:
            raise EditorError(f"Error: Invalid `insert_line` parameter: {insert_line}. It should "
                              f"be within the range of lines of the file: [0, {n}]")
        lines = data.split(b"\n")
        new = text.encode("utf-8").split(b"\n")
        self._write(path, b"\n".join(lines[:insert_line] + new + lines[insert_line:]), data)
        return f"The file {raw} has been edited."


class VendorInsert(TextEditor):
    """The vendor's reference ``insert`` as a whole: lines counted and spliced with
    ``split("\\n")``, so a file ending in ``"\\n"`` has an empty last line after which one may
    insert too (a split-lines insert and a phantom last line at once)."""

    CONVENTION = "vendor insert: split-lines insert and split line count"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        data = self._read(path)
        lines = data.split(b"\n")
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise EditorError("Error: insert_line must be an integer")
        if not 0 <= insert_line <= len(lines):
            raise EditorError(f"Error: Invalid `insert_line` parameter: {insert_line}. It should "
                              f"be within the range of lines of the file: [0, {len(lines)}]")
        new = text.encode("utf-8").split(b"\n")
        self._write(path, b"\n".join(lines[:insert_line] + new + lines[insert_line:]), data)
        return f"The file {raw} has been edited."
