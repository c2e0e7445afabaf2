"""Registry of the deliberately broken editors: each names the one check it must fail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from conformance.catalog import CATALOG
from conformance.reference.editor import TextEditor
from simulator import registry


@dataclass(frozen=True)
class Broken:
    name: str
    cls: type[TextEditor]
    tool_type: str
    target: str

    def factory(self, workdir: Path, timeout: float | None = None,
                max_characters: int | None = None) -> TextEditor:
        fields = registry.TOOLS[self.tool_type].definition_fields
        return self.cls(workdir, tool_type=self.tool_type, timeout=timeout,
                        max_characters=max_characters if "max_characters" in fields else None)


BROKEN: list[Broken] = []
T = TypeVar("T", bound=type[TextEditor])


def broken(target: str, *, tool_type: str = "text_editor_20250728") -> Callable[[T], T]:
    def deco(cls: T) -> T:
        BROKEN.append(Broken(cls.__name__, cls, tool_type, target))
        return cls
    return deco


def check_applies(b: Broken) -> bool:
    c = CATALOG.get(b.target)
    return c is not None and c.applies(b.tool_type)


def as_factory(b: Broken) -> Callable[..., Any]:
    return b.factory
