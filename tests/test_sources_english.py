"""Every seed section cited anywhere (code and fixtures) reads in English to users: the seeds are
Indonesian, French and Korean, and users never see them (issue 13, point 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simulator import sources
from simulator.cassette import iter_corpus
from simulator.sources import SEED_BASH, SEED_TEXT_EDITOR, english, seed

ROOT = Path(__file__).resolve().parent.parent
NAMES = {n: getattr(sources, n) for n in dir(sources) if n.startswith("SEED_") and n != "SEEDS"}
#: Headings that are English already (command names, keys, "Streaming").
ENGLISH_ALREADY = {"view", "str_replace", "create", "insert", "undo_edit", "Streaming",
                   "featureMetadata.supportedModels", "Error"}


def _cited() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for folder in ("simulator", "conformance"):
        for path in (ROOT / folder).rglob("*.py"):
            for m in re.finditer(r"seed\((SEED_[A-Z_]+),\s*([\"'])(.*?)\2", path.read_text()):
                out.add((NAMES[m.group(1)], m.group(3)))
    for c in iter_corpus(ROOT / "fixtures"):
        for s in c.source:
            if s["document"] in sources.SEEDS:
                out.add((s["document"], s["section"]))
    return out


def _needs_english(section: str) -> bool:
    parts = section.split(" / ")
    return not all(p in ENGLISH_ALREADY or re.search(r"\([A-Za-z][^()]*\)$", p) for p in parts)


@pytest.mark.parametrize(("document", "section"), sorted(_cited()))
def test_cited_seed_section_has_an_english_name(document: str, section: str) -> None:
    if _needs_english(section):
        assert english(document, section), f"add {section!r} to simulator.sources.ENGLISH_SECTIONS"


def test_citations_read_in_english() -> None:
    src = seed(SEED_TEXT_EDITOR, "Tangani kesalahan")
    assert str(src) == "001_30efa6f7a5b3609f.txt § Tangani kesalahan (Handle errors)"
    assert src.to_json() == {"document": "001_30efa6f7a5b3609f.txt",
                             "section": "Tangani kesalahan",
                             "title": "Tangani kesalahan (Handle errors)", "tag": "D"}
    assert seed(SEED_BASH, "파라미터 (Parameters)").title == "파라미터 (Parameters)"
    assert seed(SEED_TEXT_EDITOR, "view").title == "view"


def test_every_editor_check_cites_in_english() -> None:
    import conformance.checks.editor  # noqa: F401
    from conformance.catalog import CATALOG

    for c in CATALOG.values():
        if c.family == "editor" and c.source.document == SEED_TEXT_EDITOR:
            assert not _needs_english(c.source.section) or "(" in c.source.title, c.id
