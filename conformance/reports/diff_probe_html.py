"""``tooluse diff --format html`` of two probe outputs, in the HTML report's style (its template
and stylesheet, :data:`conformance.reports.html.TEMPLATE`): the same sections as the Markdown,
regressions first."""

from __future__ import annotations

from typing import Any

from .diff_probe import SECTIONS, change_rows, headline, total_rows
from .html import TEMPLATE, _e

_CLASS = {"regression": "fail", "changed": "error", "improvement": "pass", "same": "skip"}


def _table(head: list[str], rows: list[list[str]], table_id: str) -> str:
    return (f'<table id="{table_id}"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join("<tr>" + "".join(rows_) + "</tr>" for rows_ in rows)
            + "</tbody></table>")


def render_probe_html(d: dict[str, Any]) -> str:
    a, b = d["a"], d["b"]
    regressions = d["counts"]["regression"]
    word = "FAIL" if regressions else "PASS"
    body = [f'<h1 class="verdict-{word}">tooluse diff: {_e(a["model"])} → {_e(b["model"])}</h1>',
            f'<div class="meta">A: {_e(a["path"])} · B: {_e(b["path"])}</div>',
            f"<p><strong>{_e(headline(d))}</strong></p>"]
    if d["not_final"]:
        body.append("<p><strong>Not finished in A or B:</strong> "
                    + ", ".join(f"<code>{_e(s)}</code>" for s in d["not_final"]) + "</p>")
    for kind, title in SECTIONS:
        rows = change_rows(d, kind)
        if not rows:
            continue
        body.append(f"<h2>{title} ({len(rows)})</h2>")
        body.append(_table(["scenario", "aspect", "what changed"], [
            [f"<td><code>{_e(sid)}</code></td>", f'<td class="cell {_CLASS[kind]}">'
             f"{_e(c['aspect'])}</td>", f"<td>{_e(c['detail'])}</td>"] for sid, c in rows],
            f"changes-{kind}"))
    if not any(change_rows(d, k) for k, _ in SECTIONS):
        body.append("<p>No differences between the probes.</p>")
    body.append("<h2>Totals (scenarios in both)</h2>")
    body.append(_table(["", "A", "B", "change"], [
        [f"<td>{_e(label)}</td>", f"<td>{va:,}</td>", f"<td>{vb:,}</td>", f"<td>{_e(delta)}</td>"]
        for label, va, vb, delta in total_rows(d)], "totals"))
    if d["drift_b"]:
        body.append("<h2>API drift in B (outside the registry)</h2>")
        body.append(_table(["scenario", "kind", "JSON pointer", "detail"], [
            [f"<td><code>{_e(f['scenario'])}</code></td>", f"<td>{_e(f['kind'])}</td>",
             f"<td><code>{_e(f['pointer'])}</code></td>", f"<td>{_e(f['detail'])}</td>"]
            for f in d["drift_b"]], "drift"))
    body.append("<h2>Per scenario</h2>")
    body.append(_table(["scenario", "verdict", "status", "turns", "tokens"], [
        [f"<td><code>{_e(r['scenario'])}</code></td>",
         f'<td class="cell {_CLASS.get(r["verdict"], "")}">{_e(r["verdict"])}</td>',
         f"<td>{_e(r['a']['status'])} → {_e(r['b']['status'])}</td>",
         f"<td>{r['a']['turns']} → {r['b']['turns']}</td>",
         f"<td>{r['a']['tokens']:,} → {r['b']['tokens']:,}</td>"] for r in d["scenarios"]],
        "scenarios"))
    html = TEMPLATE.read_text(encoding="utf-8")
    return html.replace("{{TITLE}}", _e(f"tooluse diff: {a['model']} → {b['model']}")).replace(
        "{{BODY}}", "\n".join(body))
