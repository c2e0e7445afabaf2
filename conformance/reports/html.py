"""The self-contained HTML report: the failures first (open), then the subjects × checks matrix
with its legend, filters.

One file, inline CSS and JS, no network. The matrix is rendered here (it reads without JS); the
script only filters rows by family, severity and outcome, driven by the URL hash
(``report.html#family=bash&severity=MUST&outcome=fail``) so a filtered view can be linked.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from conformance.basis import TRANSLATION_MARK, translated
from conformance.results import rejudged_note
from conformance.wording import plural

from .baseline import BaselineVerdict
from .coverage import coverage_notes, coverage_rows
from .render_common import (
    SEVERITY_ORDER,
    flaky_results,
    flaky_tag,
    format_value,
    is_known,
    not_run_subjects,
    observed_rows,
    per_subject,
    problems,
    rejudged_rows,
    reproducer_setup,
    reproducer_text,
    reproducer_verification,
    run_line,
    verdict_word,
)
from .rerun import rerun_for

TEMPLATE = Path(__file__).with_name("report.html")
_LABEL = {"pass": "✓", "fail": "✗", "skip": "–", "error": "!", "incomplete": "…", "flaky": "≈",
          "not-run": "∅"}


def _e(x: Any) -> str:
    return escape(str(x), quote=True)


def _select(key: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return (f'<label>{key} <select id="f-{key}"><option value="">all</option>{opts}'
            f"</select></label>")


def _source_html(src: dict[str, Any]) -> str:
    """The citation with its page as a link a user can open."""
    from simulator.sources import cite_json_text

    text = _e(cite_json_text(src))
    url = src.get("url")
    if isinstance(url, str) and url.startswith("https://"):
        text = text.replace(_e(url), f'<a href="{_e(url)}">{_e(url)}</a>', 1)
    return text


def _basis_html(basis: dict[str, Any] | None) -> list[str]:
    """The sentence the check rests on (English, the original beside it) and its rule."""
    if not basis:
        return []
    out = []
    if basis.get("original"):
        original = mark = ""
        if translated(basis):
            mark = f' <span class="muted">{_e(TRANSLATION_MARK)}</span>'
            url = basis.get("original_url", "")
            page = f' \u2014 <a href="{_e(url)}">{_e(url)}</a>' if url else ""
            original = (f' <span class="muted">({_e(basis["language"])} original: '
                        f'<q lang="{_e(_LANG.get(basis["language"], ""))}">'
                        f'{_e(basis["original"])}</q>{page})</span>')
        out.append(f'<p class="basis">Rests on: <q>{_e(basis["english"])}</q>{mark}{original}</p>')
    if basis.get("rule"):
        head = "Beyond the sentence" if out else "Rests on no sentence"
        out.append(f'<p class="basis muted">{head}: {_e(basis["rule"])}</p>')
    return out


_LANG = {"Indonesian": "id", "French": "fr", "Korean": "ko"}


def _failure(r: dict[str, Any], anchor: str, verdict: BaselineVerdict | None,
             rerun: str = "", tag: str = "") -> str:
    """One failure as a card, open (the page leads with it); a known (baseline) failure is
    collapsed: it does not fail the run."""
    known = is_known(r, verdict)
    classes = ("failure" + (" error" if r["outcome"] == "error" else "")
               + (" flaky" if r["outcome"] == "flaky" else "") + (" known" if known else ""))
    tag = tag or ("expected failure (baseline)" if known else r["outcome"])
    opened = "" if known else " open"
    parts = [f'<details class="{classes}"{opened} id="{anchor}" data-check="{_e(r["check_id"])}" '
             f'data-family="{_e(r["family"])}" data-severity="{_e(r["severity"])}" '
             f'data-outcomes="{_e(r["outcome"])}">',
             f'<summary><span class="sev sev-{_e(r["severity"])}">{_e(r["severity"])}</span> '
             f'<code>{_e(r["check_id"])}</code> on <code>{_e(r["subject"])}</code>: {_e(tag)}'
             "</summary>"]
    if r.get("statement"):
        src = r.get("source") or {}
        cite = (f' <span class="muted">(source: {_source_html(src)})</span>' if src else "")
        parts.append(f"<p><em>{_e(r['statement'])}</em>{cite}</p>")
        parts += _basis_html(r.get("basis"))
    if r.get("message"):
        # Wrapped text, not a scrolling box: the message is the first thing to read.
        parts.append(f'<p class="message">{_e(r["message"])}</p>')
    if r.get("received") is not None or r.get("documented") is not None:
        parts.append('<div class="side"><div><strong>Received</strong>'
                     f"<pre>{_e(format_value(r.get('received')))}</pre></div>"
                     "<div><strong>Documented</strong>"
                     f"<pre>{_e(format_value(r.get('documented')))}</pre></div></div>")
    if rerun:
        parts.append("<p><strong>Rerun this check alone</strong></p>"
                     f'<pre class="rerun">{_e(rerun)}</pre>')
    setup = reproducer_setup(r)
    if setup:
        parts.append('<ul class="reproducer-notes">'
                     + "".join(f"<li>{_e(x)}</li>" for x in setup) + "</ul>")
    if r.get("reproducer"):
        text = reproducer_text(r["reproducer"])
        where = (" <span class=\"muted\">(<code>$TOOLUSE_WORKDIR</code>: the case's directory)"
                 "</span>" if "$TOOLUSE_WORKDIR" in text else "")
        # Collapsed: a long reproducer would otherwise take most of the page.
        parts.append(f'<details class="reproducer"><summary><strong>Reproducer</strong> '
                     f"({plural(len(r['reproducer']), 'step')}){where}</summary>"
                     f'<pre class="reproducer">{_e(text)}</pre></details>')
    verification = reproducer_verification(r)
    if verification:
        parts.append('<ul class="reproducer-notes">'
                     + "".join(f"<li>{_e(x)}</li>" for x in verification) + "</ul>")
    parts.append("</details>")
    return "\n".join(parts)


#: The matrix's symbols, in the legend's order: (symbol, outcome class, what it means).
LEGEND = (("✓", "pass", "pass"), ("✗", "fail", "fail"),
          ("!", "error", "harness error (the suite could not judge)"),
          ("–", "skip", "skipped (the reason is in the cell's tooltip)"),
          ("…", "incomplete", "incomplete (its time cap ended it)"),
          ("≈", "flaky", "flaky (failed once, did not repeat)"),
          ("∅", "not-run", "not run (the subject never started)"),
          ("·", "na", "does not apply to the subject's tool type"),
          ("⏱", "", "re-judged after a deadline"))


def _legend(verdict: BaselineVerdict | None) -> str:
    items = [f'<li><span class="sym {cls}">{sym}</span> {_e(what)}</li>'
             for sym, cls, what in LEGEND]
    if verdict is not None:
        items.append('<li><span class="sym fail known">✗</span> a known failure '
                     "(baseline)</li>")
    return '<ul class="legend" id="legend">' + "".join(items) + "</ul>"


def _matrix(doc: dict[str, Any], verdict: BaselineVerdict | None,
            anchors: dict[tuple[str, str], str]) -> list[str]:
    subjects = [sub for sub, _ in per_subject(doc)]
    by_check: dict[str, dict[str, dict[str, Any]]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for r in doc["results"]:
        by_check.setdefault(r["check_id"], {})[r["subject"]] = r
        meta.setdefault(r["check_id"], r)
    checks = sorted(by_check, key=lambda c: (meta[c]["family"],
                                             SEVERITY_ORDER.get(meta[c]["severity"], 3), c))
    # In a box of its own: a wide matrix scrolls there, never the page; its header sticks.
    body = ["<h2>Matrix</h2>", _legend(verdict),
            '<div class="matrix-box"><table id="matrix"><thead><tr><th>check</th>'
            "<th>severity</th>"
            + "".join(f'<th class="subject" title="{_e(sub["tool_type"])}">{_e(sub["name"])}'
                      "</th>" for sub in subjects) + "</tr></thead><tbody>"]
    for cid in checks:
        m = meta[cid]
        cells = by_check[cid]
        outcomes = " ".join(sorted({r["outcome"] for r in cells.values()}))
        title = _e(m.get("statement", ""))
        row = [f'<tr data-check="{_e(cid)}" data-family="{_e(m["family"])}" '
               f'data-severity="{_e(m["severity"])}" data-outcomes="{outcomes}">'
               f'<td class="id" title="{title}"><code>{_e(cid)}</code></td>'
               f'<td><span class="sev sev-{_e(m["severity"])}">{_e(m["severity"])}</span></td>']
        for sub in subjects:
            r = cells.get(sub["name"])
            if r is None:
                row.append('<td class="cell na muted" title="not applicable">·</td>')
                continue
            o = r["outcome"]
            known = " known" if is_known(r, verdict) else ""
            label = _LABEL[o]
            anchor = anchors.get((r["subject"], cid))
            if anchor:
                label = f'<a href="#open={anchor}" data-open="{anchor}">{label}</a>'
            said = r.get("message") or (r.get("observed") if o == "pass" else "")
            tip = _e(said.splitlines()[0][:200] if said else o)
            if r.get("rejudged"):  # never a silent pass: marked in the cell too
                label += '<span class="rejudged" title="re-judged">⏱</span>'
                tip = _e(rejudged_note(r["rejudged"])[:300])
            row.append(f'<td class="cell {o}{known}" data-outcome="{o}" title="{tip}">{label}</td>')
        body.append("".join(row) + "</tr>")
    body.append("</tbody></table></div>")
    return body


def _table(table_id: str, heads: list[str], rows: list[list[str]]) -> str:
    """A table in a box that scrolls sideways if it must (the page itself never does); the
    cells are HTML already."""
    return (f'<div class="wide"><table id="{table_id}"><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
            + "</tbody></table></div>")


def _failures(doc: dict[str, Any], verdict: BaselineVerdict | None,
              failing: list[dict[str, Any]], flaky: list[dict[str, Any]],
              anchors: dict[tuple[str, str], str]) -> list[str]:
    # The page's script rewrites the count to follow the filter ("2 of 5 shown").
    body = [f'<h2 id="failures">Failures (<span id="failures-shown" '
            f'data-total="{len(failing)}">{len(failing)}</span>)</h2>']
    body += [_failure(r, anchors[(r["subject"], r["check_id"])], verdict, rerun_for(doc, r))
             for r in failing] or ["<p>No failures.</p>"]
    if failing:  # shown by the page's script when the filter hides every failure
        body.append('<p id="failures-filtered" class="muted" hidden>No failure matches the '
                    "filter.</p>")
    if flaky:  # intermittent failures: both observations, never a silent pass nor a plain FAIL
        body.append(f'<h2 id="flaky">Flaky ({len(flaky)})</h2><p class="muted">Each failed '
                    "once, its reproducer replayed on a fresh subject did not show the failure "
                    "again, and the check run again alone passed: an intermittent defect. "
                    + ("They fail the run (--fail-on-flaky)." if doc["run"].get("fail_on_flaky")
                       else "They do not fail the run; --fail-on-flaky makes them.") + "</p>")
        body += [_failure(r, anchors[(r["subject"], r["check_id"])], None, rerun_for(doc, r),
                          flaky_tag(doc, r)) for r in flaky]
    never = not_run_subjects(doc)
    if never:
        body.append(f'<h2 id="not-run">Not run ({sum(n for _, n, _ in never)})</h2>'
                    '<p class="muted">These subjects started in no case, so their checks did '
                    "not run: no verdict on them (neither a pass nor a failure).</p><ul>"
                    + "".join(f"<li><code>{_e(name)}</code>: {plural(n, 'check')} "
                              f"not run; {_e(why.strip() or 'it did not start')}</li>"
                              for name, n, why in never) + "</ul>")
    return body


def _details(doc: dict[str, Any]) -> list[str]:
    """The sections after the matrix: re-judged results, observed conventions, coverage."""
    body = []
    timed = rejudged_rows(doc)
    if timed:
        body.append(f'<h2>Re-judged ({len(timed)})</h2><p class="muted">A deadline '
                    "passed during these cases (even with the allowance for measured load), so "
                    "each was run again alone after the run, or (a model check) the "
                    "disagreements found were replayed on a fresh subject; only a failure that "
                    "repeats counts.</p>")
        body.append(_table("rejudged", ["check", "subject", "outcome", "re-judged"], [
            [f'<code>{_e(r["check_id"])}</code>', f'<code>{_e(r["subject"])}</code>',
             _e(r["outcome"]), _e(note)] for r, note in timed]))
    seen = observed_rows(doc)
    if seen:
        body.append(f"<h2>Observed conventions ({len(seen)})</h2>"
                    '<p class="muted">Where the docs leave a choice, the convention each subject '
                    "was seen to follow.</p>")
        body.append(_table("observed", ["check", "subject", "observed"], [
            [f'<code>{_e(r["check_id"])}</code>', f'<code>{_e(r["subject"])}</code>',
             _e(r["observed"])] for r in seen]))
    rows = coverage_rows(doc.get("coverage") or {})
    notes = coverage_notes(doc.get("coverage") or {})
    if rows or notes:
        body.append("<h2>Protocol coverage</h2>")
    if rows:
        body.append(_table("coverage", ["dimension", "exercised", "not exercised"], [
            [_e(row.dimension), _e(row.fraction),
             _e(row.missing_text(lambda x: f"\0{x}\1")).replace("\0", "<code>").replace(
                 "\1", "</code>")] for row in rows]))
    if notes:
        body.append('<ul class="muted" id="coverage-notes">'
                    + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    return body


def render_html(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> str:
    """The page, leading with the failure: the verdict and counts, the filters, the failures
    (open), then the subjects, the matrix with its legend, and the rest."""
    word = verdict_word(doc, verdict)
    s = doc["summary"]
    subjects = [sub for sub, _ in per_subject(doc)]
    failing = problems(doc, verdict)
    flaky = flaky_results(doc)
    anchors = {(r["subject"], r["check_id"]): f"f{i}" for i, r in enumerate(failing + flaky)}
    families = sorted({r["family"] for r in doc["results"]})

    body = [f'<h1 class="verdict-{word}">tooluse conformance: {word}</h1>',
            f'<div class="meta">{_e(run_line(doc))}</div>']
    if not doc["run"]["complete"]:
        body.append("<p><strong>The run did not finish: these results are partial.</strong></p>")
    body.append('<div class="counts">' + "".join(
        f'<span class="{k}">{k} {s[k]}</span>' for k in ("total", "pass", "fail", "skip", "error",
                                                           "incomplete", "flaky", "not-run", "blocking")
        if k in s and (s[k] or k not in ("flaky", "not-run"))) + "</div>")
    if verdict is not None:
        body.append("<pre>" + _e("\n".join(verdict.lines())) + "</pre>")
    body.append('<div class="filters">' + _select("family", families)
                + _select("severity", ["MUST", "SHOULD", "INFO"])
                + _select("outcome", ["pass", "fail", "skip", "error", "incomplete", "flaky",
                                      "not-run"])
                + ' <span id="shown" class="muted"></span></div>')
    body += _failures(doc, verdict, failing, flaky, anchors)
    body.append("<h2>Subjects</h2>" + _table("subjects", ["subject", "tool type", "runs"], [
        [f"<code>{_e(sub['name'])}</code>", f"<code>{_e(sub['tool_type'])}</code>",
         f"<code>{_e(sub.get('spec') or '')}</code>"] for sub in subjects]))
    body += _matrix(doc, verdict, anchors)
    body += _details(doc)
    html = TEMPLATE.read_text(encoding="utf-8")
    return html.replace("{{TITLE}}", _e(f"tooluse conformance: {word}")).replace(
        "{{BODY}}", "\n".join(body))
