"""Citations a user can follow (issue 41): every check cites a public URL and a section, a fact
taken from the project's protocol notes cites its public source and the notes the package ships
(never a file the user does not have), and an English sentence that is the project's own
translation says so, beside the original and the page it is quoted from."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_reports_sample import _r, sample_doc

import conformance.checks  # noqa: F401  (registers every check)
from conformance.basis import TRANSLATION_MARK, basis_lines
from conformance.catalog import CATALOG
from conformance.reports import render_junit, render_markdown
from conformance.reports.html import render_html
from conformance.results import Outcome
from simulator.sources import NOTES, PAGES, PROTOCOL, PUBLIC, Source, cite_json_text, protocol

ROOT = Path(__file__).resolve().parent.parent
NOTES_TEXT = (ROOT / NOTES).read_text(encoding="utf-8")
IDS = sorted(CATALOG)


@pytest.mark.parametrize("check_id", IDS)
def test_every_check_cites_a_public_url_and_a_section(check_id: str) -> None:
    source = CATALOG[check_id].source
    text = source.cite()
    section, _, rest = text.partition(" \u2014 ")
    assert section.strip() and rest, f"{check_id}: no section before the URL: {text!r}"
    assert re.search(r"https://(platform\.claude\.com/docs/en/|github\.com/anthropics/)", rest), (
        f"{check_id}: no public URL in {text!r}")
    assert "PROTOCOL.md" not in text and not re.search(r"\bseeds?\b", text, re.I), text
    assert not re.search(r"\d{3}_[0-9a-f]{16}\.txt", text), f"{check_id}: a file name: {text!r}"
    assert cite_json_text(source.cite_json()) == text  # as a results file renders it
    assert source.cite_json()["url"] in text


def test_the_protocol_facts_the_checks_cite_have_a_public_source_each() -> None:
    cited = {(c.source.section, c.source.tag) for c in CATALOG.values()
             if c.source.document == PROTOCOL}
    assert len(cited) >= 9
    for section, tag in cited:
        assert (section, tag) in PUBLIC or (section, None) in PUBLIC, (
            f"{section!r} [{tag}]: name its public page and section in simulator.sources.PUBLIC")


@pytest.mark.parametrize("check_id", sorted(c for c in IDS
                                            if CATALOG[c].source.document == PROTOCOL))
def test_a_protocol_citation_names_the_shipped_notes_and_its_part(check_id: str) -> None:
    text = CATALOG[check_id].source.cite()
    m = re.search(r"\(text: docs/protocol-notes\.md \u00a7 (\d)\)", text)
    assert m, text
    assert re.search(rf"^## {m.group(1)}\. ", NOTES_TEXT, re.M), f"no part {m.group(1)} in {NOTES}"


def test_a_fact_without_a_public_source_cites_the_notes_alone() -> None:
    text = protocol("2. Code execution tool: Legacy 20250522 server_tool_use", "I").cite()
    assert text == ("Code execution tool: Legacy 20250522 server_tool_use \u2014 "
                    "docs/protocol-notes.md \u00a7 2 (no public source) [I]")
    sdk = protocol("7. Managed Agents: Events", "S").cite()
    assert "https://github.com/anthropics/anthropic-sdk-python" in sdk and sdk.endswith("[S]")


def test_the_notes_are_what_users_read_not_the_projects_working_file() -> None:
    assert "PROTOCOL.md" not in NOTES_TEXT
    assert not re.search(r"\bseeds?\b", NOTES_TEXT, re.I)
    for number in range(1, 9):
        assert re.search(rf"^## {number}\. ", NOTES_TEXT, re.M)


def test_a_translated_page_is_cited_by_its_english_section_and_original_heading() -> None:
    src = Source("003_6e507974676b5473.txt", "오류 처리하기 (Handle errors)")
    assert src.cite() == ("Handle errors \u2014 https://platform.claude.com/docs/en/"
                          "agents-and-tools/tool-use/bash-tool (Korean: 오류 처리하기)")


# --- a translation is marked as one ---------------------------------------------------------

KOREAN_CHECK = "bash.restart.confirms"
ENGLISH_CHECK = "bash.output.stdout_and_stderr"  # quoted from the (English) protocol notes


def test_the_translated_sentence_is_marked_with_the_original_and_its_page() -> None:
    b = CATALOG[KOREAN_CHECK].basis_json()
    assert b["original_url"] == PAGES[CATALOG[KOREAN_CHECK].source.document][2]
    first, second = basis_lines(b)[:2]
    assert first.startswith("rests on: \u201cTo handle restart: true")
    assert first.endswith(f"\u201d {TRANSLATION_MARK}")
    assert second.startswith("  (Korean original: \u201crestart: true를 처리하려면")
    assert second.endswith(" \u2014 https://platform.claude.com/docs/ko/agents-and-tools/"
                           "tool-use/bash-tool)")


@pytest.mark.parametrize("check_id", IDS)
def test_only_a_translation_is_marked(check_id: str) -> None:
    b = CATALOG[check_id].basis_json()
    lines = basis_lines(b)
    marked = any(TRANSLATION_MARK in line for line in lines)
    assert marked == bool(b.get("original") and b["language"] != "English"), (check_id, lines)
    if marked:
        assert b["english"] != b["original"] and b["original_url"].startswith("https://")


def test_an_english_quote_is_not_marked() -> None:
    lines = basis_lines(CATALOG[ENGLISH_CHECK].basis_json())
    assert lines == ["rests on: \u201cReturn stdout and stderr combined in one `tool_result`.\u201d"]


def test_every_report_format_marks_the_translation(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    results = [_r(KOREAN_CHECK, "reference-bash", Outcome.FAIL, message="no confirmation")]
    doc = sample_doc(tmp_path, results=results, monkeypatch=monkeypatch)
    ko = "https://platform.claude.com/docs/ko/agents-and-tools/tool-use/bash-tool"
    md = render_markdown(doc)
    assert f"\u201d {TRANSLATION_MARK}" in md and ko in md
    page = render_html(doc)
    assert f'<span class="muted">{TRANSLATION_MARK}</span>' in page and f'href="{ko}"' in page
    junit = ET.fromstring(render_junit(doc))
    text = " ".join(f.text or "" for f in junit.iter("failure"))
    assert TRANSLATION_MARK in text and ko in text
    from conformance.checks_doc import render

    row = next(line for line in render().splitlines() if line.startswith(f"| `{KOREAN_CHECK}`"))
    assert f"{TRANSLATION_MARK} (Korean: " in row
