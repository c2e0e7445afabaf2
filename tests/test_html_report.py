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


def _dump_dom(tmp_path: Path, url: str, size: tuple[int, int] | None = None) -> str:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium; .ci/setup-extras "
                    "does it in CI)")
    window = [f"--window-size={size[0]},{size[1]}"] if size else []
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         *window, f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom", url],
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


def test_browser_filters_by_family_and_opens_a_failure(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    doc = sample_doc(tmp_path, monkeypatch=monkeypatch)
    verdict = apply_baseline(RunResults(doc).results,
                             parse_baseline("broken-editor:editor.demo.view_line_numbers\n"))
    page = tmp_path / "report.html"
    page.write_text(render_html(doc, verdict), encoding="utf-8")
    known = next(a["id"] for t, a in _tags(page.read_text())
                 if t == "details" and "known" in (a.get("class") or ""))
    assert known and "open" not in dict(next(a for t, a in _tags(page.read_text())
                                             if t == "details" and a.get("id") == known))
    dom = _dump_dom(tmp_path, page.as_uri() + f"#family=bash&open={known}")
    assert sorted(_visible_rows(dom)) == ["bash.demo.output_truncated", "bash.demo.restart_observed",
                                          "bash.demo.session_persists"]
    failures = [a for t, a in _tags(dom) if t == "details" and a.get("data-check")]
    assert failures and all("open" in a for a in failures)  # the known one opened by the hash
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
    assert 'id="failures-filtered" class="muted" hidden' in dom  # some failures are shown
    none = _dump_dom(tmp_path, page.as_uri() + "#family=bash")
    assert _failures_shown(none) == f"0 of {len(failures)} shown"
    assert re.search(r'<p id="failures-filtered" class="muted">No failure matches', none)


# --- issue 41: a page that leads with the failure, with nothing wider than the window -----------

#: Written into the page under test only (never into a report): on load, the page measures
#: itself and writes the numbers into the DOM, which ``--dump-dom`` then prints. Boxes made to
#: scroll sideways (``.wide``, ``.matrix-box``) are the only places allowed to be wider.
_MEASURE = """<script>
window.addEventListener("load", function () {
  var root = document.documentElement, out = {width: innerWidth, height: innerHeight,
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wider: []};
  var cards = document.querySelectorAll("details.failure");
  out.failures = cards.length;
  if (cards.length) {
    out.firstTop = cards[0].getBoundingClientRect().top;
    out.firstSummaryBottom = cards[0].querySelector("summary").getBoundingClientRect().bottom;
    out.firstOpen = cards[0].open;
  }
  document.querySelectorAll("body *").forEach(function (el) {
    var up = el.parentElement;  // a scroll box is measured itself, not what it holds
    if (up && up.closest(".wide, .matrix-box")) { return; }
    var box = el.getBoundingClientRect(), name = el.tagName + "." + el.className;
    if (!box.width) { return; }
    if (box.right > root.clientWidth + 0.5) { out.wider.push("page: " + name); }
    var card = el.closest("details.failure");
    if (card && card !== el && box.right > card.getBoundingClientRect().right + 0.5) {
      out.wider.push("card: " + name);
    }
    if (el.tagName === "PRE" && el.scrollWidth > el.clientWidth + 1) {
      out.wider.push("scrolls sideways: " + name);
    }
  });
  var box = document.querySelector(".matrix-box");
  out.matrixScrolls = box.scrollWidth > box.clientWidth;
  var pre = document.createElement("pre");
  pre.id = "layout-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

LONG_URL = ("https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool"
            "#an-anchor-long-enough-that-it-cannot-fit-beside-anything-else-on-a-line")


def _crowded_doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The sample run grown to a real run's shape: 60 more passing checks (the matrix the issue
    saw was 61 rows), 24 more subjects (a matrix wider than the window), and a failure whose
    documented value is a long URL and a word with no space to wrap at."""
    from test_reports_sample import sample_results

    from conformance.results import CheckResult, Outcome

    results = sample_results()
    for i in range(60):
        results.append(CheckResult(check_id=f"editor.demo.passing_check_number_{i:02d}",
                                   subject="reference-editor", tool_type="text_editor_20250728",
                                   family="editor", severity="MUST", outcome=Outcome.PASS,
                                   duration=0.01))
    for i in range(24):
        results.append(CheckResult(check_id="editor.demo.view_line_numbers",
                                   subject=f"another-editor-with-a-long-name-{i:02d}",
                                   tool_type="text_editor_20250728", family="editor",
                                   severity="MUST", outcome=Outcome.PASS, duration=0.01))
    wide = results[4]
    wide.message = f"view output has no line numbers; the docs say so at {LONG_URL}"
    wide.documented = f"{LONG_URL} " + "x" * 400
    wide.received = {"path": "/w/" + "y" * 300, "text": "hello\nworld"}
    return sample_doc(tmp_path, results=results, monkeypatch=monkeypatch)


def _measured(tmp_path: Path, html: str) -> dict[str, Any]:
    import json

    page = tmp_path / "measured.html"
    page.write_text(html.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = _dump_dom(tmp_path, page.as_uri(), size=(1280, 800))
    m = re.search(r'id="layout-measure">([^<]*)<', dom)
    assert m, "the page did not write its measurements (did its load event run?)"
    return dict(json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")))


def test_browser_leads_with_the_failure_and_nothing_is_wider_than_1280px(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _measured(tmp_path, render_html(_crowded_doc(tmp_path, monkeypatch)))
    assert m["width"] == 1280, m
    assert m["wider"] == [], m  # the "Documented" box overflowed its card (issue 41)
    assert m["scrollWidth"] <= m["clientWidth"], m  # no horizontal scrolling of the page
    assert m["failures"] == 4 and m["firstOpen"], m
    assert m["matrixScrolls"], m  # 27 subjects: the matrix is wider than the window, in its box
    # The first failure's heading is in the first screen (at most 800 px high), unscrolled.
    assert 0 < m["firstTop"] and m["firstSummaryBottom"] <= min(m["height"], 800), m


def test_the_failures_come_before_the_matrix_open_with_a_legend(page: Path) -> None:
    html = page.read_text()
    assert html.index('id="failures"') < html.index('<table id="subjects"') \
        < html.index('<table id="matrix"')
    tags = _tags(html)
    failures = [a for t, a in tags if t == "details" and a.get("data-check")]
    assert failures and all("open" in a for a in failures)
    legend = html[html.index('id="legend"'):html.index("</ul>", html.index('id="legend"'))]
    for symbol, meaning in (("✓", "pass"), ("✗", "fail"), ("–", "skipped"), ("·", "does not apply"),
                            ("!", "harness error"), ("≈", "flaky"), ("∅", "not run"),
                            ("…", "incomplete")):
        assert f"{symbol}</span> {meaning}" in legend, (symbol, legend)


def test_a_one_step_reproducer_says_step(page: Path) -> None:
    html = page.read_text()
    assert "(1 step)" in html and "(2 steps)" in html and "1 steps" not in html
