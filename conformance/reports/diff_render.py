"""Markdown for ``tooluse diff``: regressions first, then what appeared and vanished."""

from __future__ import annotations

from typing import Any

from conformance.wording import plural

_MAX_ROWS = 200


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def _c(x: Any) -> str:
    return f"`{x}`"


def render_results_md(d: dict[str, Any]) -> str:
    c = d["counts"]
    out = ["## tooluse diff: results", "",
           f"A: {d['a']['path']} (suite {d['a']['suite_version']}, anthropic "
           f"{d['a']['anthropic_sdk_version']}, {d['a']['summary']['verdict']})  ",
           f"B: {d['b']['path']} (suite {d['b']['suite_version']}, anthropic "
           f"{d['b']['anthropic_sdk_version']}, {d['b']['summary']['verdict']})", "",
           f"**{plural(c['regressions'], 'regression')}**, {c['fixed']} fixed, "
           + (f"{c['flaky']} now flaky (intermittent), " if c.get("flaky") else "")
           + f"{plural(c['changed'], 'other change')}, {c['new']} new, {c['removed']} removed.",
           ""]
    for side in ("a", "b"):
        if not d[side]["complete"]:
            out += [f"Warning: {side.upper()} is an incomplete run.", ""]
    if d["subjects"]["added"] or d["subjects"]["removed"]:
        out += [f"Subjects added: {', '.join(map(_c, d['subjects']['added'])) or '—'}; "
                f"removed: {', '.join(map(_c, d['subjects']['removed'])) or '—'}", ""]
    order = {"regression": 0, "flaky": 1, "changed": 2, "fixed": 3}
    changed = sorted(d["changed"], key=lambda x: (order[x["kind"]], x["subject"], x["check_id"]))
    if changed:
        out += ["### Changed outcome", "", "| | subject | check | severity | A | B |",
                "|---|---|---|---|---|---|"]
        for x in changed[:_MAX_ROWS]:
            out.append(f"| {x['kind']} | {_c(x['subject'])} | {_c(x['check_id'])} | "
                       f"{x['severity']} | {x['before']} | {x['after']} |")
        if len(changed) > _MAX_ROWS:
            out.append(f"\n… {len(changed) - _MAX_ROWS} more in the JSON output.")
        out.append("")
    for title, key in (("New checks (only in B)", "new"), ("Removed checks (only in A)", "removed")):
        rows = d[key]
        if rows:
            out += [f"### {title}", "", "| subject | check | severity | outcome |", "|---|---|---|---|"]
            out += [f"| {_c(x['subject'])} | {_c(x['check_id'])} | {x['severity']} | {x['outcome']} |"
                    for x in rows[:_MAX_ROWS]]
            out.append("")
    if not (changed or d["new"] or d["removed"]):
        out += ["No differences in outcomes.", ""]
    return "\n".join(out)


def _dist_section(title: str, dist: dict[str, Any], *, show_all: bool = True) -> list[str]:
    rows = dist["counts"]
    if not rows:
        return [f"### {title}", "", "None on either side.", ""]
    out = [f"### {title}", ""]
    if dist["appeared"]:
        out.append(f"Appeared in B: {', '.join(map(_c, dist['appeared']))}  ")
    if dist["vanished"]:
        out.append(f"Vanished in B: {', '.join(map(_c, dist['vanished']))}  ")
    if dist["appeared"] or dist["vanished"]:
        out.append("")
    if show_all:
        out += ["| value | A | B | A share | B share |", "|---|---:|---:|---:|---:|"]
        for k, v in list(rows.items())[:_MAX_ROWS]:
            out.append(f"| {_c(k)} | {v['a']} | {v['b']} | {v['a_share']:.1%} | {v['b_share']:.1%} |")
        out.append("")
    return out


def _refusals(d: dict[str, Any]) -> list[str]:
    out = ["### Requests the simulator refuses", ""]
    ref = d["refusals"]
    for side in ("a", "b"):
        r = ref[side]
        if not r["available"]:
            out.append(f"- {side.upper()}: not computed ({r['reason']})")
            continue
        rules = ", ".join(f"{_c(k)} × {v}" for k, v in r["by_rule"].items()) or "none"
        out.append(f"- {side.upper()}: {rules}; {r['accepted_when_recorded']} accepted by the API "
                   "when recorded")
    if ref["newly_refused_rules"]:
        out.append(f"- **Rules refusing only B's requests:** "
                   f"{', '.join(map(_c, ref['newly_refused_rules']))}")
    out.append("")
    examples = ref["b"].get("examples") or []
    if examples:
        out += ["<details><summary>B's requests refused though the API accepted them "
                f"({len(examples)} shown)</summary>", "",
                "| cassette | exchange | rule | message |", "|---|---:|---|---|"]
        out += [f"| {_c(x['cassette'])} | {x['exchange']} | {_c(x['rule_id'])} | "
                f"{_cell(x['message'])} |" for x in examples]
        out += ["", "</details>", ""]
    return out


def render_traffic_md(d: dict[str, Any]) -> str:
    a, b = d["a"], d["b"]
    out = ["## tooluse diff: recorded traffic", "",
           f"A: {a['path']}: {a['cassettes']} conversations, {a['exchanges']} exchanges; models "
           f"{', '.join(map(_c, a['models'])) or '—'}  ",
           f"B: {b['path']}: {b['cassettes']} conversations, {b['exchanges']} exchanges; models "
           f"{', '.join(map(_c, b['models'])) or '—'}", ""]
    out += _refusals(d)
    out += _dist_section("Content block types (responses)", d["block_types"])
    fields = d["block_fields"]
    out += ["### Block fields", ""]
    if fields:
        out += ["| block type | appeared in B | vanished in B |", "|---|---|---|"]
        out += [f"| {_c(t)} | {', '.join(map(_c, v['appeared'])) or '—'} | "
                f"{', '.join(map(_c, v['vanished'])) or '—'} |" for t, v in fields.items()]
    else:
        out.append("Same fields on every block type both sides use.")
    out.append("")
    if "message_shapes" in d:
        out += _dist_section("Message shapes (envelope fields and value forms)",
                             d["message_shapes"])
    out += _dist_section("Stop reasons", d["stop_reasons"])
    out += _dist_section("Tool-result error codes", d["error_codes"])
    out += _dist_section("API errors", d["api_errors"])
    out += _dist_section("Tools called", d["tools_called"])
    out += _dist_section("Tool definition types", d["tool_types"])
    out += _dist_section("Block types clients sent back", d["request_block_types"])
    ta, tb = d["turns"]["a"], d["turns"]["b"]
    out += ["### Turns per conversation", "", "| | conversations | min | mean | max |",
            "|---|---:|---:|---:|---:|",
            f"| A | {ta['conversations']} | {ta['min']} | {ta['mean']} | {ta['max']} |",
            f"| B | {tb['conversations']} | {tb['min']} | {tb['mean']} | {tb['max']} |", ""]
    return "\n".join(out)
