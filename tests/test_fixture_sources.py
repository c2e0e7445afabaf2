"""Every source a cassette cites names a section that exists: a heading or phrase of the seed file,
or a ``PROTOCOL.md`` section (``"<n>. <heading>: <entry>"``) whose entry appears under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.cassette import iter_corpus
from simulator.sources import PROTOCOL, REAL_TRAFFIC

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _cited() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for c in iter_corpus(FIXTURES):
        for s in c.source:
            out.setdefault((s["document"], s["section"]), c.id)
    return out


CITED = _cited()


def _normal(text: str) -> str:
    return " ".join(text.replace("\\", "").replace("`", "").split()).lower()


def _protocol_has(text: str, section: str) -> bool:
    heading, _, entry = section.partition(": ")
    chapters = text.split("\n## ")
    chapter = next((ch for ch in chapters if _normal(ch.splitlines()[0]).startswith(_normal(heading))),
                   None)
    if chapter is None:
        return False
    return not entry or all(_normal(part) in _normal(chapter) for part in entry.split(" / "))


@pytest.mark.parametrize(("document", "section"), sorted(CITED), ids=[f"{d}:{s}" for d, s in sorted(CITED)])
def test_cited_section_exists(shared_dir: Path, document: str, section: str) -> None:
    if document == PROTOCOL:
        text = (shared_dir / "PROTOCOL.md").read_text(encoding="utf-8")
        assert _protocol_has(text, section), f"{CITED[(document, section)]}: no {section!r} in PROTOCOL.md"
    elif document == REAL_TRAFFIC:  # live captures, by id (``pydai__481``)
        for capture_id in section.split(" / "):
            assert list((shared_dir / "real_traffic").glob(f"{capture_id}__*.json")), \
                f"{CITED[(document, section)]}: no capture {capture_id} in real_traffic"
    else:
        text = _normal((shared_dir / "seeds" / document).read_text(encoding="utf-8"))
        for part in section.split(" / "):
            # a dotted front-matter path (featureMetadata.supportedModels) names YAML keys
            keys = part.split(".") if " " not in part and "." in part else [part]
            for key in keys:
                assert _normal(key) in text, f"{CITED[(document, section)]}: no {key!r} in {document}"


def test_a_made_up_section_is_not_found(shared_dir: Path) -> None:
    text = (shared_dir / "PROTOCOL.md").read_text(encoding="utf-8")
    assert _protocol_has(text, "2. Code execution tool: pause_turn")
    assert not _protocol_has(text, "2. Code execution tool: teleportation")
    assert not _protocol_has(text, "9. No such chapter")
