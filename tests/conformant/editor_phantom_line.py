"""A conformant editor that counts a phantom empty last line in a file ending with ``"\\n"``.

Editors that count lines with ``text.split("\\n")`` (the vendor's reference among them) see
``"a\\nb\\nc\\n"`` as four lines, the last one empty, so ``insert_line`` 4 is valid there and
appends. Seed 001 "insert" says only "the line number after which to insert (0 for the start of
the file)"; nothing is lost or corrupted, so the suite must accept it (issue 13, point 1). Lines
clearly past the end (and negative ones) are still refused, and everything else is the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor
from conformance.reference.editor_text import line_count


class PhantomLastLine(TextEditor):
    """``insert_line`` = line count + 1 on a file ending with ``"\\n"`` appends."""

    CONVENTION = "phantom empty last line: insert_line = line count + 1 appends"

    def insert(self, path: Path, raw: str, insert_line: Any, text: str) -> str:
        if isinstance(insert_line, int) and not isinstance(insert_line, bool):
            data = self._read(path)
            n = line_count(data)
            if data.endswith(b"\n") and insert_line == n + 1:
                return super().insert(path, raw, n, text)
        return super().insert(path, raw, insert_line, text)

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        # The same count for view_range: [n + 1, -1] shows the (empty) phantom line.
        if (path.is_file() and isinstance(view_range, list) and len(view_range) == 2
                and view_range[0] == line_count(self._read(path)) + 1
                and self._read(path).endswith(b"\n") and view_range[1] in (-1, view_range[0])):
            return f"{view_range[0]}: "
        return super().view(path, raw, view_range)
