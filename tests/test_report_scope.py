"""Issue 14, point 6, the reports: coverage measured against what applies to the run (an
editor-only run shows neither bash, loop and worker checks nor simulator rules it cannot
exercise), a header that says the examples are derandomized rather than "seed random", and the
failure message as wrapped text in the HTML rather than a scrolling box."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.reports.coverage import coverage_notes, coverage_rows
from conformance.reports.html import render_html
from conformance.reports.markdown import render_markdown
from conformance.reports.results_file import ResultsWriter
from conformance.results import CheckResult, Outcome, RunInfo, SubjectInfo
from simulator.cassette import default_fixtures_root

EDITOR = SubjectInfo("my-editor", "editor", "text_editor_20250728", "mine:editor")
MESSAGE = "the file was changed although the edit was refused: " + "x" * 400


def run_doc(tmp_path: Path, subjects: list[SubjectInfo], *, fixtures: str | None = None,
            seed: int | None = None) -> dict[str, Any]:
    w = ResultsWriter(tmp_path / "results.json")
    w.on_run_started(RunInfo(subjects=subjects, seed=seed, planned=2, fixtures=fixtures))
    w.on_check_finished(CheckResult("editor.view.binary_file_answered", "my-editor",
                                    EDITOR.tool_type, "editor", "MUST", Outcome.PASS))
    w.on_check_finished(CheckResult("editor.str_replace.rejects_no_match", "my-editor",
                                    EDITOR.tool_type, "editor", "MUST", Outcome.FAIL,
                                    message=MESSAGE))
    w.on_run_finished(complete=True)
    return json.loads((tmp_path / "results.json").read_text())


def test_an_editor_only_run_is_measured_against_the_editor_checks(tmp_path: Path) -> None:
    cov = run_doc(tmp_path, [EDITOR])["coverage"]
    known = cov["checks"]["known"]
    assert known and all(c.startswith("editor.") for c in known), known
    assert "editor.view.binary_file_answered" in cov["checks"]["exercised"]
    assert cov["tool_versions"]["known"] == ["text_editor_20241022", "text_editor_20250124",
                                             "text_editor_20250429", "text_editor_20250728"]
    for dim in ("block_types", "error_codes", "stop_reasons", "rules"):
        assert cov[dim]["applies"] is False and cov[dim]["known"] == []
    rows = {row.dimension for row in coverage_rows(cov)}
    assert rows == {"tool versions", "checks"}
    notes = coverage_notes(cov)
    assert any(n.startswith("block types, error codes, stop reasons, rules: not applicable")
               for n in notes), notes


def test_the_editor_only_reports_show_no_rules_or_other_families(tmp_path: Path) -> None:
    doc = run_doc(tmp_path, [EDITOR])
    md = render_markdown(doc)
    section = md.split("### Protocol coverage", 1)[1]
    assert "| rules |" not in section and "| block types |" not in section
    assert "bash." not in section and "loop." not in section and "worker." not in section
    assert "not applicable: the run replayed no API traffic" in section
    n_editor = len(run_doc(tmp_path, [EDITOR])["coverage"]["checks"]["known"])
    assert f"| checks | 2/{n_editor} |" in section
    html = render_html(doc)
    assert 'id="coverage-notes"' in html and "<td>rules</td>" not in html


def test_a_run_that_replays_the_corpus_is_measured_against_everything(tmp_path: Path) -> None:
    doc = run_doc(tmp_path, [EDITOR], fixtures=str(default_fixtures_root() / "bash"))
    cov = doc["coverage"]
    assert cov["rules"].get("applies", True) and cov["stop_reasons"]["exercised"]
    assert len(cov["tool_versions"]["known"]) > 4  # every tool of the API, not the editor's


def test_the_header_says_derandomized_not_seed_random(tmp_path: Path) -> None:
    md = render_markdown(run_doc(tmp_path, [EDITOR]))
    assert "seed random" not in md and "derandomized (the same examples every run)" in md
    assert "seed 7 ·" in render_markdown(run_doc(tmp_path, [EDITOR], seed=7))


def test_the_failure_message_is_wrapped_text_not_a_scrolling_box(tmp_path: Path) -> None:
    html = render_html(run_doc(tmp_path, [EDITOR]))
    assert f'<p class="message">{MESSAGE}</p>' in html
    assert f"<pre>{MESSAGE}" not in html
    rule = re.search(r"\.message \{([^}]*)\}", html)
    assert rule and "pre-wrap" in rule.group(1) and "overflow-wrap: anywhere" in rule.group(1)


def test_coverage_names_the_declared_version_before_the_others_it_does_not_judge(
        tmp_path: Path) -> None:
    """Issue 41: "missing text_editor_20241022, ..." read as a defect to someone who implements
    one version. Every format says which versions the subjects declared first, then the others
    as not declared, not judged."""
    from conformance.reports import render_junit
    from conformance.reports.coverage import NOT_DECLARED

    doc = run_doc(tmp_path, [EDITOR])
    assert doc["coverage"]["tool_versions"]["declared"] == ["text_editor_20250728"]
    (row,) = [r for r in coverage_rows(doc["coverage"]) if r.dimension == "tool versions"]
    text = row.missing_text()
    assert text.startswith("declared: text_editor_20250728; " + NOT_DECLARED + ": ")
    assert "text_editor_20241022" in text.split(NOT_DECLARED)[1]
    md = render_markdown(doc)
    assert ("| tool versions | 1/4 | declared: `text_editor_20250728`; other versions, not "
            "declared (not judged): `text_editor_20241022`") in md
    assert "| dimension | exercised | not exercised |" in md
    html = render_html(doc)
    assert "declared: <code>text_editor_20250728</code>; other versions, not declared (not " \
           "judged): <code>text_editor_20241022</code>" in html
    junit = render_junit(doc)
    assert "1/4 exercised; declared: text_editor_20250728; other versions, not declared" in junit
    assert "missing: text_editor" not in md + html + junit
