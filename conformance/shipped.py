"""Where the files the suite ships beside its code are: the docs pages the CLI, the reports and
the citations name (``docs/loops.md``, ``docs/protocol-notes.md § 3``).

A wheel carries ``docs/`` as ``conformance/docs`` (pyproject's force-include); a checkout or an
editable install reads the repository's ``docs/``. ``tests/test_doc_paths.py`` holds every page
named anywhere to exist, and the wheel to carry it."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def docs_dir() -> Path:
    """The directory holding the docs pages (``docs/loops.md`` is ``docs_dir() / "loops.md"``)."""
    installed = _PACKAGE / "docs"
    return installed if installed.is_dir() else _PACKAGE.parent / "docs"


def doc_path(name: str) -> Path:
    """A page by the name users read (``docs/loops.md`` or ``loops.md``)."""
    return docs_dir() / name.removeprefix("docs/")
