"""The sentence each check rests on (conformance/basis.py): one for every check, quoted exactly
from the document its source cites (so a quote cannot drift from the seed), translated where the
seed is a translation, and shown wherever the source is shown."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_reports_sample import SUBJECTS, _r, sample_doc

import conformance.checks  # noqa: F401  (registers every check)
from conformance.basis import BASES, Basis, basis_lines, language
from conformance.catalog import CATALOG
from conformance.reports import render_junit, render_markdown
from conformance.reports.html import render_html
from conformance.reports.summary import print_summary
from conformance.results import Outcome, RunInfo
from conformance.run import Run
from simulator.sources import PROTOCOL, SEEDS

QUOTED = sorted(cid for cid, b in BASES.items() if b.original)


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


ROOT = Path(__file__).resolve().parent.parent


def _document(shared: Path, document: str) -> str:
    """The cited document's text: a seed, or for a PROTOCOL.md fact the shipped notes that
    carry its words (docs/protocol-notes.md, what a user reads)."""
    path = ROOT / "docs" / "protocol-notes.md" if document == PROTOCOL else shared / "seeds" / document
    return _normal(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("check_id", sorted(c for c, b in BASES.items()
                                            if b.original and CATALOG[c].source.document == PROTOCOL))
def test_a_protocol_quote_is_in_the_shipped_notes(check_id: str) -> None:
    notes = _normal((ROOT / "docs" / "protocol-notes.md").read_text(encoding="utf-8"))
    assert _normal(BASES[check_id].original) in notes, f"{check_id}: not in docs/protocol-notes.md"


def test_every_check_has_a_basis() -> None:
    assert set(BASES) == set(CATALOG), (
        f"without a basis: {sorted(set(CATALOG) - set(BASES))}; "
        f"not a check: {sorted(set(BASES) - set(CATALOG))}")
    assert len(QUOTED) >= 40  # the rest say which rule they rest on instead of inventing a quote


@pytest.mark.parametrize("check_id", QUOTED)
def test_quote_occurs_in_the_cited_document(shared_dir: Path, check_id: str) -> None:
    document = CATALOG[check_id].source.document
    assert _normal(BASES[check_id].original) in _document(shared_dir, document), (
        f"{check_id}: the quote is not in {document} (drifted or mistyped)")


def test_a_drifted_quote_is_not_found(shared_dir: Path) -> None:
    b = BASES["bash.restart.confirms"]
    text = _document(shared_dir, CATALOG["bash.restart.confirms"].source.document)
    assert _normal(b.original) in text
    assert _normal(b.original.replace("새로", "다시")) not in text
    # whitespace alone is not drift: the seeds wrap lines and indent
    assert _normal(b.original.replace(" ", "\n   ")) in text


@pytest.mark.parametrize("check_id", QUOTED)
def test_translated_where_the_document_is(check_id: str) -> None:
    b, document = BASES[check_id], CATALOG[check_id].source.document
    if document in SEEDS:
        assert language(document) in ("Indonesian", "French", "Korean")
        assert b.english and b.english != b.original, f"{check_id}: no English beside the original"
        assert not re.search("[\uac00-\ud7a3]", b.english), f"{check_id}: Korean left in English"
    else:
        assert language(document) == "English"
        assert not b.english, f"{check_id}: {document} is English; the quote is the sentence itself"


def test_a_check_without_a_sentence_says_so() -> None:
    b = CATALOG["loop.corpus.drives_every_conversation"].basis_json()
    assert "original" not in b and b["rule"]
    assert basis_lines(b)[0].startswith("rests on no sentence: ")
    with pytest.raises(ValueError, match="a quoted sentence or a rule"):
        Basis()
    with pytest.raises(ValueError, match="original beside it"):
        Basis(english="made up", rule="a rule")


def _failing_doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    F = Outcome.FAIL
    results = [_r("bash.restart.confirms", "reference-bash", F, message="no confirmation"),
               _r("loop.corpus.drives_every_conversation", "reference-bash", F, message="broke")]
    return sample_doc(tmp_path, results=results, monkeypatch=monkeypatch)


KOREAN = "셸 프로세스를 죽이고 새로 시작한 다음"
ENGLISH = "kill the shell process, start a new one"


def test_results_json_carries_the_basis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _failing_doc(tmp_path, monkeypatch)  # validated against results.schema.json on writing
    first, second = doc["results"]
    assert first["basis"]["language"] == "Korean"
    assert KOREAN in first["basis"]["original"] and ENGLISH in first["basis"]["english"]
    assert set(second["basis"]) == {"rule"}


def test_every_report_format_shows_the_sentence(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _failing_doc(tmp_path, monkeypatch)
    md = render_markdown(doc)
    assert ENGLISH in md and KOREAN in md and "Korean original" in md
    assert "Rests on no sentence: every recorded conversation" in md
    page = render_html(doc)
    assert ENGLISH in page and '<q lang="ko">' in page and KOREAN in page
    assert "Rests on no sentence: every recorded conversation" in page
    junit = ET.fromstring(render_junit(doc))
    text = " ".join(f.text or "" for f in junit.iter("failure"))
    assert f"Rests on: \u201cTo handle restart: true, {ENGLISH}" in text and KOREAN in text


def test_terminal_summary_and_checks_listing_show_the_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    r = _r("bash.restart.confirms", "reference-bash", Outcome.FAIL, message="no confirmation")
    summary = SimpleNamespace(
        results=[r], blocking=lambda: [r], ok=False, strict=False, duration=1.0,
        plan=SimpleNamespace(info=RunInfo(subjects=SUBJECTS[:1]), subjects=SUBJECTS[:1],
                             settings=Run()),
        counts=lambda: {"pass": 0, "fail": 1, "skip": 0, "error": 0})
    out = io.StringIO()
    print_summary(summary, out)
    assert f"      rests on: \u201cTo handle restart: true, {ENGLISH}" in out.getvalue()
    assert f"(Korean original: \u201crestart: true를 처리하려면 {KOREAN}" in out.getvalue()

    from conformance.cli import main

    assert main(["checks", "--family", "loop"]) == 0
    listing = capsys.readouterr().out
    assert "    rests on no sentence: every recorded conversation" in listing
    assert "(French original: \u201cL'ID du conteneur est OBLIGATOIRE" in listing


def test_checks_doc_catalog_shows_the_sentence() -> None:
    from conformance.checks_doc import render

    text = render()
    row = next(line for line in text.splitlines() if line.startswith("| `bash.restart.confirms`"))
    assert ENGLISH in row and f"(Korean: \u201crestart: true를 처리하려면 {KOREAN}" in row
    row = next(line for line in text.splitlines()
               if line.startswith("| `bash.input.invalid_rejected`"))
    assert "\u201c\\*Required except when using restart\u201d" in row  # not emphasis
