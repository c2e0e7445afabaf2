"""``matrix.md``: the matrix as Markdown (implementations, flagged checks, the grid, failures)."""

from __future__ import annotations

from typing import Any

from conformance.basis import basis_lines
from conformance.matrix.model import REVIEW_LABEL, catalog
from simulator.sources import cite_json_text

MARK = {"pass": "pass", "fail": "**FAIL**", "skip": "skip", "error": "ERROR",
        "incomplete": "incomplete", "flaky": "flaky", "not-run": "not run", "n-a": "n/a",
        "unavailable": "—"}
MESSAGE_CHARS = 300


def _one_line(text: str, limit: int = MESSAGE_CHARS, *, in_table: bool = False) -> str:
    flat = " ".join(str(text).split())
    if in_table:
        flat = flat.replace("|", "\\|")
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def review_counts(c: dict[str, int]) -> str:
    """``failed by 3 of the 4 implementations it applies to (1 of them did not start)``."""
    start = c.get("start_failures", 0)
    note = f" ({start} of them did not start)" if start else ""
    return f"failed by {c['fail']} of the {c['applies']} implementations it applies to{note}"


def header_line(doc: dict[str, Any]) -> str:
    suite = doc["suite"]
    return (f"Generated {doc['generated_at']} by {suite['name']} {suite['version']} "
            f"(Python {suite['python_version']}) from `{doc['config']}` in {doc['duration']:g} s.")


def implementation_rows(doc: dict[str, Any]) -> list[str]:
    lines = ["| implementation | tool type | version | Python | status | pass | fail | skip | "
             "error |", "|---|---|---|---|---|---:|---:|---:|---:|"]
    for i in doc["implementations"]:
        s = i["summary"] or {}
        version = f"{i['version_of']} {i['version'] or '(not installed)'}" if i["version_of"] \
            else "—"
        status = (i["status"] if i["status"] == "ran"
                  else f"{i['status']}: {_one_line(i['reason'], in_table=True)}")
        lines.append(f"| {i['name']} | {i['tool_type']} | {version} | {i['python'] or '—'} | "
                     f"{status} | {s.get('pass', '—')} | {s.get('fail', '—')} | "
                     f"{s.get('skip', '—')} | {s.get('error', '—')} |")
    return lines


def render_markdown(doc: dict[str, Any]) -> str:
    names = [i["name"] for i in doc["implementations"]]
    out = ["# Compatibility matrix", "", header_line(doc), "",
           "Cells: pass, **FAIL**, flaky (an intermittent failure: it failed, its reproducer did "
           "not reproduce, and it passed run again alone), skip, ERROR (a harness error, not "
           "counted against the implementation), not run (the implementation started in no "
           "case; older runs: **FAIL** (start)), n/a (the check "
           "does not apply to its tool type), — (the column did not run). "
           f"A check is flagged *{REVIEW_LABEL}* when {doc['review_rule']}.", "",
           "## Implementations", "", *implementation_rows(doc), ""]
    flagged = [r for r in doc["checks"] if r["review"]]
    out += ["## Flagged for review", ""]
    if not flagged:
        out += ["No check is failed by most of the implementations it applies to.", ""]
    for r in flagged:
        c = r["counts"]
        out += [f"### `{r['id']}` ({r['severity']})", "",
                f"{REVIEW_LABEL}: {review_counts(c)}. {r['statement']} "
                f"(source: {source_text(r)})", ""]
        basis = basis_of_row(r)
        if basis:
            out += ["> " + "<br>".join(x.strip()[:1].upper() + x.strip()[1:] for x in basis), ""]
        for name in r["evidence"]:
            cell = r["cells"][name]
            out.append(f"- **{name}**: {_one_line(cell.get('message', ''))}")
            for key in ("received", "documented"):
                if cell.get(key):
                    out.append(f"  {key}: {_code(_one_line(cell[key], 200))}")
            if cell.get("rerun"):
                out.append(f"  rerun: {_code(cell['rerun'])}")
        out.append("")
    out += ["## Checks", "", "| check | level | " + " | ".join(names) + " | failed by |",
            "|---|---|" + "---|" * len(names) + "---:|"]
    for r in doc["checks"]:
        cells = " | ".join(MARK[r["cells"][n]["outcome"]]
                           + (" (start)" if r["cells"][n].get("start_failure") else "")
                           + (" ⏱" if r["cells"][n].get("rejudged") else "")
                           for n in names)
        flag = " ⚑" if r["review"] else ""
        c = r["counts"]
        out.append(f"| `{r['id']}`{flag} | {r['severity']} | {cells} | "
                   f"{c['fail']}/{c['applies']} |")
    out += ["", "## Failures and errors", ""]
    any_problem = False
    for name in names:
        rows = [r for r in doc["checks"]
                if r["cells"][name]["outcome"] in ("fail", "error", "flaky")]
        if not rows:
            continue
        any_problem = True
        out += [f"### {name}", ""]
        for r in rows:
            cell = r["cells"][name]
            word = {"fail": "FAIL", "error": "ERROR", "flaky": "FLAKY"}[cell["outcome"]]
            out.append(f"- {word} `{r['id']}` ({r['severity']}): "
                       f"{_one_line(cell.get('message', ''))}")
            if cell.get("rerun"):
                out.append(f"  rerun: {_code(cell['rerun'])}")
        out.append("")
    if not any_problem:
        out += ["None.", ""]
    rejudged = [(name, r) for name in names for r in doc["checks"]
                if r["cells"][name].get("rejudged")]
    if rejudged:  # ⏱ in the grid: failures that did not repeat (or did), never silent
        out += ["## Re-judged", ""]
        out += [f"- {name} `{r['id']}` ({r['cells'][name]['outcome']}): "
                f"{_one_line(r['cells'][name]['rejudged'], 600)}" for name, r in rejudged]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def source_text(row: dict[str, Any]) -> str:
    """The citation as a user opens it: the section's English name and the public page."""
    return cite_json_text(row["source"])


def basis_of_row(row: dict[str, Any]) -> list[str]:
    """What the check rests on (conformance/basis.py), for a check still in the catalog with the
    same source (a stale matrix is reported by ``tooluse matrix``'s staleness check)."""
    chk = catalog().get(row["id"])
    if chk is None or chk.source.section != row["source"].get("section"):
        return []
    return basis_lines(chk.basis_json())
