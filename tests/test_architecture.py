"""docs/architecture.md "Where to add" names only files and folders that exist.

Each path in backticks (a word with a ``/`` or a file ending) must exist in the repository;
``<...>`` stands for a name of the newcomer's, so such a path must match at least one file.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
_PATH = re.compile(r"`([A-Za-z0-9_.<>/-]+(?:/|\.(?:py|toml|md|mjs|json)))`")


def where_to_add() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split("## Where to add", 1)[1].split("\n## ", 1)[0]


def named_paths(section: str) -> list[str]:
    return sorted({m.group(1) for m in _PATH.finditer(section)
                   if "/" in m.group(1) or m.group(1).endswith((".toml", ".md"))})


def exists(path: str) -> bool:
    if "<" in path:
        return any(ROOT.glob(re.sub(r"<[^>]+>", "*", path).rstrip("/")))
    return (ROOT / path).exists()


def test_the_where_to_add_section_names_only_paths_that_exist() -> None:
    paths = named_paths(where_to_add())
    assert len(paths) > 20, paths  # the section is there and its paths are found
    assert [p for p in paths if not exists(p)] == []


def test_a_missing_path_is_caught() -> None:
    assert named_paths("see `conformance/checks/no_such_module.py`") == [
        "conformance/checks/no_such_module.py"]
    assert not exists("conformance/checks/no_such_module.py")
    assert not exists("conformance/no_such_<name>.py")
    assert exists("conformance/checks/<family>_<topic>.py")
