"""Conformant editors whose ``view`` shows each tab as spaces; the file's bytes stay exact.

Seed 001 "view" asks only that the command read and return the file's content ("Baca dan
kembalikan konten file"), and "Nomor baris" (Line numbers) shows one numbered form and says line
numbers "are not required" ("Nomor baris tidak diperlukan"). Nothing fixes how a tab is shown nor
how a number is written: each editor here makes one such choice, and edits stay byte-exact
(``editor.bytes.tabs_preserved``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor
from conformance.reference.editor_text import truncate


class _Shown(TextEditor):
    """The reference's view, each line of it re-presented by :meth:`line`, then truncated to
    ``max_characters`` (a re-presentation never pushes a view past the limit)."""

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        limit, self.max_characters = self.max_characters, None
        try:
            out = super().view(path, raw, view_range)
        finally:
            self.max_characters = limit
        if not path.is_dir():
            out = "\n".join(self.line(*x.partition(": ")) for x in out.split("\n"))
        return truncate(out, limit)

    def line(self, number: str, sep: str, body: str) -> str:
        raise NotImplementedError


class TabStopsOfFour(_Shown):
    """``view`` shows the numbered lines ``cat -n`` style, each whole line (its number included)
    expanded to tab stops of 4."""

    CONVENTION = "view: tabs expanded to tab stops of 4 (cat -n numbers)"

    def line(self, number: str, sep: str, body: str) -> str:
        if sep and number.isdigit():
            return f"{number:>6}\t{body}".expandtabs(4)
        return (number + sep + body).expandtabs(4)


class TabsAsTwoSpaces(_Shown):
    """``view`` shows each tab as two spaces, line numbers as ``L12 | ``."""

    CONVENTION = "view: each tab as 2 spaces (L12 | numbers)"

    def line(self, number: str, sep: str, body: str) -> str:
        if sep and number.isdigit():
            return f"L{number} | {body}".replace("\t", "  ")
        return (number + sep + body).replace("\t", "  ")
