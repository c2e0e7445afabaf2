"""``tooluse diff`` of two probe outputs as Markdown (regressions first); the document is
:func:`conformance.probe.compare.diff_probes`, the HTML in :mod:`.diff_probe_html`."""

from __future__ import annotations

from typing import Any

from conformance.wording import plural

from .diff_render import _c, _cell

_MAX_ROWS = 200
TOTAL_ROWS = (("scenarios", "scenarios compared"), ("turns", "turns"), ("requests", "requests"),
              ("tokens", "tokens (input + output + cache)"), ("output_tokens", "output tokens"),
              ("tool_calls", "tool calls"), ("retried", "errors retried"),
              ("errors", "scenarios ended by an API error"), ("refusals", "refusals"),
              ("drift", "drift findings"))
SECTIONS = (("regression", "Regressions"), ("changed", "Other changes"),
            ("improvement", "Improvements"))


def total_rows(d: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """``(label, A, B, delta)`` for the totals table."""
    ta, tb = d["a"]["totals"], d["b"]["totals"]
    rows = []
    for key, label in TOTAL_ROWS:
        delta = tb[key] - ta[key]
        rows.append((label, ta[key], tb[key], f"{delta:+,}" if delta else ""))
    return rows


def change_rows(d: dict[str, Any], kind: str) -> list[tuple[str, dict[str, Any]]]:
    """``(scenario, change)`` of one kind, scenario by scenario."""
    return [(r["scenario"], c) for r in d["scenarios"] for c in r["changes"] if c["kind"] == kind]


def headline(d: dict[str, Any]) -> str:
    c = d["counts"]
    return (f"{plural(c['compared'], 'scenario')} compared: {c['regression']} with a regression, "
            f"{c['changed']} changed, {c['improvement']} improved, {c['same']} the same.")


def render_probe_md(d: dict[str, Any]) -> str:
    a, b = d["a"], d["b"]
    out = ["## tooluse diff: probes", "",
           f"A: {a['path']} (model {_c(a['model'])}{'' if a['complete'] else ', incomplete'})  ",
           f"B: {b['path']} (model {_c(b['model'])}{'' if b['complete'] else ', incomplete'})", "",
           f"**{headline(d)}**", ""]
    if d["aspects"]:
        out += ["Scenarios changed by aspect: " + ", ".join(
            f"{_c(k)} {v}" for k, v in d["aspects"].items()), ""]
    if d["not_final"]:
        out += [f"Warning: not finished (interrupted, budget or failed): "
                f"{', '.join(map(_c, d['not_final']))}", ""]
    for kind, title in SECTIONS:
        rows = change_rows(d, kind)
        if not rows:
            continue
        out += [f"### {title} ({len(rows)})", "", "| scenario | aspect | what changed |",
                "|---|---|---|"]
        out += [f"| {_c(sid)} | {c['aspect']} | {_cell(c['detail'])} |" for sid, c in rows[:_MAX_ROWS]]
        if len(rows) > _MAX_ROWS:
            out.append(f"\n… {len(rows) - _MAX_ROWS} more in the JSON output.")
        out.append("")
    if not any(change_rows(d, k) for k, _ in SECTIONS):
        out += ["No differences between the probes.", ""]
    out += ["### Totals (scenarios in both)", "", "| | A | B | change |", "|---|---:|---:|---:|"]
    out += [f"| {label} | {va:,} | {vb:,} | {delta} |" for label, va, vb, delta in total_rows(d)]
    out.append("")
    if d["drift_b"]:
        out += ["### API drift in B (outside the registry)", "",
                "| scenario | kind | JSON pointer | detail |", "|---|---|---|---|"]
        out += [f"| {_c(f['scenario'])} | {f['kind']} | {_c(f['pointer'])} | {_cell(f['detail'])} |"
                for f in d["drift_b"][:_MAX_ROWS]]
        out.append("")
    for key, label in (("only_a", "Only in A"), ("only_b", "Only in B")):
        if d[key]:
            out += [f"{label}: {', '.join(map(_c, d[key]))}", ""]
    out += ["### Per scenario", "", "| scenario | verdict | status A → B | turns A → B | "
            "tokens A → B |", "|---|---|---|---:|---:|"]
    for r in d["scenarios"][:_MAX_ROWS]:
        ra, rb = r["a"], r["b"]
        out.append(f"| {_c(r['scenario'])} | {r['verdict']} | {ra['status']} → {rb['status']} | "
                   f"{ra['turns']} → {rb['turns']} | {ra['tokens']:,} → {rb['tokens']:,} |")
    out.append("")
    return "\n".join(out)
