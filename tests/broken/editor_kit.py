"""The deliberately broken editors (``tests/broken/editor_broken_*.py``), found by scanning.

Each is a subclass of the reference :class:`~conformance.reference.editor.TextEditor` with one
bug, naming the one check it must fail in ``TARGET`` (and its version in ``TOOL_TYPE``). The modules
import nothing from the tests, so the real runner can load them by path:
``tests/broken/editor_broken_edit.py:ReplacesAll.factory``.
"""

from __future__ import annotations

import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from conformance.catalog import CATALOG
from conformance.reference.editor import TextEditor

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Broken:
    name: str
    cls: type[TextEditor]
    module: Path

    @property
    def target(self) -> str:
        return str(self.cls.TARGET)

    @property
    def tool_type(self) -> str:
        return self.cls.TOOL_TYPE

    @property
    def spec(self) -> str:
        """The ``path.py:Class.factory`` spec the runner loads."""
        return f"{self.module}:{self.name}.factory"

    def factory(self, workdir: Path, timeout: float | None = None,
                max_characters: int | None = None) -> TextEditor:
        return self.cls.factory(workdir, timeout=timeout, max_characters=max_characters)


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"broken_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scan() -> list[Broken]:
    found = []
    for path in sorted(HERE.glob("editor_broken_*.py")):
        for name, obj in inspect.getmembers(_load(path), inspect.isclass):
            if issubclass(obj, TextEditor) and "TARGET" in vars(obj):
                found.append(Broken(name, obj, path))
    return found


BROKEN: list[Broken] = _scan()


def by_name(name: str) -> Broken:
    return next(b for b in BROKEN if b.name == name)


def check_applies(b: Broken) -> bool:
    c = CATALOG.get(b.target)
    return c is not None and c.applies(b.tool_type)
