"""The self-contained HTML report, statically and opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_reports_sample import SUBJECTS, sample_doc

from conformance.reports import apply_baseline, parse_baseline, render_html
from conformance.reports.results_file import RunResults

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    p = _Collect()
    p.feed(html)
    return p.tags


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    doc = sample_doc(tmp_path, monkeypatch=monkeypatch)
    path = tmp_path / "report.html"
    path.write_text(render_html(doc), encoding="utf-8")
    return path


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    for tag, attrs in _tags(html):
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            assert not re.match(r"^(https?:)?//", value), f"<{tag} {key}={value}> loads from the network"
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
    assert "<style>" in html and "<script>" in html


def test_matrix_has_a_cell_per_subject_and_check(page: Path) -> None:
    tags = _tags(page.read_text())
    rows = [a for t, a in tags if t == "tr" and a.get("data-check")]
    cells = [a for t, a in tags if t == "td" and "cell" in (a.get("class") or "")]
    assert len(rows) == 7  # distinct checks in the sample run
    assert len(cells) == 7 * len(SUBJECTS)
    assert sum(1 for c in cells if c.get("data-outcome") == "fail") == 3
    failing_links = [a for t, a in tags if t == "a" and a.get("data-open")]
    details = [a for t, a in tags if t == "details" and a.get("data-check")]
    assert {a["data-open"] for a in failing_links} == {a["id"] for a in details}
    assert len(details) == 4


def test_values_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_reports_sample import sample_results

    r = sample_results()[4]
    r.received = "<script>alert(1)</script>"
    html = render_html(sample_doc(tmp_path, results=[r], monkeypatch=monkeypatch))
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_baseline_marks_known_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = sample_doc(tmp_path, monkeypatch=monkeypatch)
    verdict = apply_baseline(RunResults(doc).results,
                             parse_baseline("editor.demo.view_line_numbers\n"))
    html = render_html(doc, verdict)
    assert html.count('class="cell fail known"') == 1
    assert "expected failure (baseline)" in html


# --- in a real browser -------------------------------------------------------------------------


def _dump_dom(tmp_path: Path, url: str) -> str:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium; .ci/setup-extras "
                    "does it in CI)")
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom", url],
        capture_output=True, text=True, timeout=90, check=False)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        pytest.fail(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def _visible_rows(dom: str) -> list[str]:
    return [a["data-check"] or "" for t, a in _tags(dom)
            if t == "tr" and a.get("data-check") and "hidden" not in a]


def _shown(dom: str) -> str:
    m = re.search(r'id="shown"[^>]*>([^<]*)<', dom)
    assert m, "the filter counter is missing"
    return m.group(1)


def test_browser_renders_matrix_and_script_runs(page: Path, tmp_path: Path) -> None:
    dom = _dump_dom(tmp_path, page.as_uri())
    assert len(_visible_rows(dom)) == 7
    assert _shown(dom) == "7 of 7 checks shown"  # written by the page's script


def test_browser_filters_by_severity_and_outcome_from_url_hash(page: Path, tmp_path: Path) -> None:
    dom = _dump_dom(tmp_path, page.as_uri() + "#severity=MUST&outcome=fail")
    assert sorted(_visible_rows(dom)) == ["editor.demo.str_replace_multiple_matches",
                                          "editor.demo.view_line_numbers"]
    assert _shown(dom) == "2 of 7 checks shown"
    visible_details = [a for t, a in _tags(dom)
                       if t == "details" and a.get("data-check") and "hidden" not in a]
    assert {a["data-severity"] for a in visible_details} == {"MUST"}


def test_browser_filters_by_family_and_opens_a_failure(page: Path, tmp_path: Path) -> None:
    dom = _dump_dom(tmp_path, page.as_uri() + "#family=bash&open=f0")
    assert sorted(_visible_rows(dom)) == ["bash.demo.output_truncated", "bash.demo.restart_observed",
                                          "bash.demo.session_persists"]
    opened: list[dict[str, Any]] = [a for t, a in _tags(dom) if t == "details" and "open" in a]
    assert [a["id"] for a in opened] == ["f0"]
    assert 'data-filter="family=bash&amp;severity=&amp;outcome="' in dom


def test_observed_conventions_rerun_commands_and_subject_specs_are_shown(page: Path) -> None:
    html = page.read_text()
    assert '<table id="observed">' in html
    assert "view: a file ending in \\n shows no empty last line" in html
    assert '<pre class="rerun">tooluse run --editor tests.broken:editor --name broken-editor ' \
           "--check editor.demo.view_line_numbers</pre>" in html
    assert "<code>tests.broken:editor</code>" in html  # what each label runs


# --- issue 26, point 8: counts that follow the filter, compact reproducers ----------------------


def _failures_shown(dom: str) -> str:
    m = re.search(r'id="failures-shown"[^>]*>([^<]*)<', dom)
    assert m, "the failure count is missing"
    return m.group(1)


def test_reproducers_are_collapsed_and_the_failure_count_is_marked(page: Path) -> None:
    html = page.read_text()
    tags = _tags(html)
    repro = [a for t, a in tags if t == "details" and a.get("class") == "reproducer"]
    assert repro and not any("open" in a for a in repro)  # closed until asked for
    failures = [a for t, a in tags if t == "details" and a.get("data-check")]
    assert _failures_shown(html) == str(len(failures))


def test_browser_failure_count_follows_the_filter(page: Path, tmp_path: Path) -> None:
    everything = _dump_dom(tmp_path, page.as_uri())
    failures = [a for t, a in _tags(everything) if t == "details" and a.get("data-check")]
    assert _failures_shown(everything) == str(len(failures))
    dom = _dump_dom(tmp_path, page.as_uri() + "#severity=SHOULD")
    visible = [a for t, a in _tags(dom)
               if t == "details" and a.get("data-check") and "hidden" not in a]
    assert 0 < len(visible) < len(failures)
    assert _failures_shown(dom) == f"{len(visible)} of {len(failures)} shown"
