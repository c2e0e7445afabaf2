"""A deliberately broken editor only the model-based check catches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor


class StaleViewCache(TextEditor):
    """Caches each file's view and serves it again after the file was edited."""

    TARGET = "editor.model.agrees_with_reference_model"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache: dict[tuple[Path, str], str] = {}

    def view(self, path: Path, raw: str, view_range: Any) -> str:
        key = (path, repr(view_range))
        if key not in self.cache:
            self.cache[key] = super().view(path, raw, view_range)
        return self.cache[key]
