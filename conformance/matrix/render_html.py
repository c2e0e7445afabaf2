"""``matrix.html``: one self-contained page. Every failing or erroring cell opens
(``<details>``) on its message, what was received and documented, the reproducer and the rerun
command; flagged checks are listed first with their evidence."""

from __future__ import annotations

from html import escape
from typing import Any

from conformance.matrix.model import REVIEW_LABEL
from conformance.matrix.render_md import basis_of_row, header_line, review_counts, source_text
from conformance.reproducers import describe_reproduced

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}
thead th{position:sticky;top:0;background:#f4f4f4}
td.pass{background:#e7f6e7}td.fail{background:#fbe1e1}td.error{background:#fff0c8}
td.flaky{background:#fff0c8;font-style:italic}
td.skip{background:#f0f0f0;color:#666}td.n-a{color:#aaa}td.unavailable{color:#aaa}
tr.review>td:first-child{border-left:4px solid #c00}
details summary{cursor:pointer;font-weight:600}
details.reproducer summary{font-weight:400}
details[open]{min-width:28em;max-width:48em}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;border:1px solid #eee;
padding:4px;margin:4px 0;max-height:20em;overflow:auto}
code.rerun{display:block;white-space:pre-wrap;word-break:break-all;background:#eef;padding:4px}
.flag{color:#c00;font-weight:600}.small{color:#666;font-size:12px}
"""
_WORD = {"pass": "pass", "fail": "FAIL", "skip": "skip", "error": "ERROR",
         "incomplete": "incomplete", "flaky": "flaky", "not-run": "not run", "n-a": "n/a",
         "unavailable": "—"}


def _cell_body(cell: dict[str, Any], family: str = "") -> str:
    parts = []
    if cell.get("message"):
        parts.append(f"<p>{escape(cell['message'])}</p>")
    for key in ("received", "documented"):
        if cell.get(key):
            parts.append(f"<div class=small>{key}</div><pre>{escape(cell[key])}</pre>")
    if cell.get("reproducer"):  # collapsed: it would take most of the page
        setup = f"<pre>{escape(cell['setup'])}</pre>" if cell.get("setup") else ""
        parts.append("<details class=reproducer><summary class=small>reproducer "
                     f"({escape(describe_reproduced(str(cell.get('reproduced') or ''), family))})"
                     f"</summary>{setup}<pre>{escape(cell['reproducer'])}</pre></details>")
    if cell.get("observed"):
        parts.append(f"<div class=small>observed: {escape(cell['observed'])}</div>")
    if cell.get("rerun"):
        parts.append(f"<div class=small>rerun</div><code class=rerun>{escape(cell['rerun'])}"
                     "</code>")
    return "".join(parts)


def _cell(cell: dict[str, Any], family: str = "") -> str:
    o = cell["outcome"]
    word = _WORD[o] + (" (start)" if cell.get("start_failure") else "")
    if o in ("fail", "error", "skip", "incomplete", "flaky", "not-run") and (
            cell.get("message") or cell.get("rerun")):
        inner = f"<details><summary>{word}</summary>{_cell_body(cell, family)}</details>"
    elif cell.get("observed"):
        inner = f"<span title=\"{escape(cell['observed'])}\">{word}*</span>"
    else:
        inner = word
    if cell.get("rejudged"):  # never a silent pass
        inner += f"<span title=\"{escape(cell['rejudged'])}\">⏱</span>"
    return f"<td class={o}>{inner}</td>"


def _implementations(doc: dict[str, Any]) -> str:
    rows = []
    for i in doc["implementations"]:
        s = i["summary"] or {}
        version = (f"{escape(i['version_of'])} {escape(i['version'] or '(not installed)')}"
                   if i["version_of"] else "—")
        status = escape(i["status"] if i["status"] == "ran" else f"{i['status']}: {i['reason']}")
        env = ""
        if i["python_requested"] or i["requirements"]:
            env = escape(f"python {i['python_requested'] or '(running)'}; "
                         + (", ".join(i["requirements"]) or "no requirements"))
        counts = "".join(f"<td>{s.get(k, '—')}</td>" for k in ("pass", "fail", "skip", "error"))
        rows.append(f"<tr><td>{escape(i['name'])}</td><td>{escape(i['tool_type'])}</td>"
                    f"<td><code>{escape(i['spec'])}</code></td><td>{version}</td>"
                    f"<td>{escape(i['python'] or '—')}</td><td>{env}</td><td>{status}</td>"
                    f"{counts}</tr>")
    return ("<table><thead><tr><th>implementation</th><th>tool type</th><th>spec</th>"
            "<th>version</th><th>Python</th><th>own environment</th><th>status</th><th>pass</th>"
            "<th>fail</th><th>skip</th><th>error</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _flagged(doc: dict[str, Any]) -> str:
    flagged = [r for r in doc["checks"] if r["review"]]
    if not flagged:
        return "<p>No check is failed by most of the implementations it applies to.</p>"
    out = []
    for r in flagged:
        c = r["counts"]
        items = "".join(
            f"<li><b>{escape(n)}</b><details><summary>evidence</summary>"
            f"{_cell_body(r['cells'][n], r['id'].split('.')[0])}</details></li>" for n in r["evidence"])
        out.append(f"<h3 id=\"review-{escape(r['id'])}\"><code>{escape(r['id'])}</code> "
                   f"({r['severity']})</h3><p><span class=flag>{REVIEW_LABEL}</span>: "
                   f"{escape(review_counts(c))}. "
                   f"{escape(r['statement'])}</p><ul>{items}</ul>")
    return "".join(out)


def render_html(doc: dict[str, Any]) -> str:
    names = [i["name"] for i in doc["implementations"]]
    versions = {i["name"]: i["version"] for i in doc["implementations"]}
    head = "".join(f"<th>{escape(n)}<div class=small>{escape(versions[n] or '')}</div></th>"
                   for n in names)
    rows = []
    for r in doc["checks"]:
        c = r["counts"]
        flag = " <span class=flag title=\"" + REVIEW_LABEL + "\">⚑</span>" if r["review"] else ""
        rests = "\n".join(basis_of_row(r))
        title = escape(f"{r['statement']} (source: {source_text(r)})" + (f"\n{rests}" if rests else ""))
        rows.append(f"<tr class=\"{'review' if r['review'] else ''}\"><td title=\"{title}\">"
                    f"<code>{escape(r['id'])}</code>{flag}</td><td>{r['severity']}</td>"
                    + "".join(_cell(r["cells"][n], r["id"].split(".")[0]) for n in names)
                    + f"<td>{c['fail']}/{c['applies']}</td></tr>")
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<title>tooluse compatibility matrix</title>"
        f"<style>{_CSS}</style></head><body><h1>Compatibility matrix</h1>"
        f"<p>{escape(header_line(doc).replace('`', ''))}</p>"
        "<p class=small>Cells: pass, pass* (passed, and noted the convention it observed where "
        "the docs leave a choice: hover it), FAIL, flaky (an intermittent failure: it failed, "
        "its reproducer did not reproduce, and it passed run again alone), not run (the "
        "implementation started in no case; older runs: FAIL (start)), "
        "skip, ERROR (a harness error, not counted against the "
        "implementation), n/a (not its tool type), — (the column did not run); click a FAIL or "
        "ERROR for the message, the evidence and the rerun command. ⚑ " + REVIEW_LABEL
        + f": {escape(doc['review_rule'])}. Hover a check id for its statement.</p>"
        f"<h2>Implementations</h2>{_implementations(doc)}"
        f"<h2>Flagged for review</h2>{_flagged(doc)}"
        "<h2>Checks</h2><table><thead><tr><th>check</th><th>level</th>" + head
        + "<th>failed by</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        "</body></html>\n")
