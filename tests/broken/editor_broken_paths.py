"""Deliberately broken editors: paths."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

from conformance.reference.editor import EditorError, TextEditor


class StrictPathCharacters(TextEditor):
    """Refuses any path with characters outside [A-Za-z0-9._/-]."""

    TARGET = "editor.paths.special_characters_are_plain"

    def _resolve(self, raw: Any) -> Path:
        if isinstance(raw, str) and not re.fullmatch(r"[A-Za-z0-9._/-]+", raw):
            raise EditorError(f"Error: invalid path {raw}")
        return super()._resolve(raw)


class ShellDirectoryView(TextEditor):
    """The published bug: find {path} in a shell, path interpolated."""

    TARGET = "editor.paths.never_executed_by_directory_view"

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        if path.is_dir():
            out = subprocess.run(f"find {raw} -maxdepth 2 -not -path '*/.*'", shell=True,
                                 capture_output=True, text=True, timeout=10)
            return out.stdout
        return super().view(path, raw, view_range)


class ShellMkdir(TextEditor):
    """create makes parent directories with mkdir -p "{parent}" in a shell."""

    TARGET = "editor.paths.never_executed_by_file_commands"

    def create(self, path: Path, raw: str, file_text: str) -> str:
        subprocess.run(f'mkdir -p "{os.path.dirname(raw)}"', shell=True, capture_output=True,
                       timeout=10)
        return super().create(path, raw, file_text)


class Unconfined(TextEditor):
    """Accepts any path on the machine."""

    TARGET = "editor.paths.outside_workdir_refused"

    def _resolve(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw:
            raise EditorError("Error: path required")
        return Path(os.path.realpath(raw if os.path.isabs(raw) else self.root / raw))


class ComparesPathsAsStrings(TextEditor):
    """Refuses a path outside the working directory only when it sorts after it: the working
    directory's parent (and /etc, /home, ...) get through."""

    TARGET = "editor.paths.outside_workdir_refused"

    def _resolve(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            return super()._resolve(raw)
        p = Path(raw)
        real = Path(os.path.realpath(p if p.is_absolute() else self.root / p))
        if real > self.root and self.root not in real.parents:
            raise EditorError(f"Error: The path {raw} is outside the working directory.")
        return real
