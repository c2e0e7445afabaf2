"""The Markdown summary: short enough for a pull-request comment, failing MUST checks first."""

from __future__ import annotations

import html
from typing import Any

from conformance.basis import basis_lines
from conformance.results import rejudged_note
from conformance.wording import plural
from simulator.sources import cite_json_text

from .baseline import BaselineVerdict
from .coverage import coverage_notes, coverage_rows
from .render_common import (
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

#: GitHub refuses comments over 65536 characters; leave room for the tail sections.
MAX_CHARS = 60_000
_ICON = {"PASS": "✅", "FAIL": "❌", "INCOMPLETE": "⚠️"}


def _inline(text: str) -> bool:
    return "\n" not in text and len(text) <= 100 and "`" not in text


def _received_documented(received: object, documented: object) -> list[str]:
    """Both on one-line bullets when both are short, else both as fenced blocks (same style)."""
    texts = [("Received", format_value(received, 600)), ("Documented", format_value(documented, 600))]
    if all(_inline(t) for _, t in texts):
        return [f"- **{label}:** `{t}`" for label, t in texts] + [""]
    out: list[str] = []
    for label, t in texts:
        fence = "````" if "```" in t else "```"
        out += [f"**{label}:**", "", fence, t, fence, ""]
    return out


def _text(text: str) -> str:
    """Subject-influenced text outside code blocks: no raw HTML (a stray ``</details>`` or
    ``<script>`` must not reshape the comment)."""
    return html.escape(text, quote=False)


def _fenced(text: str, lang: str = "") -> list[str]:
    fence = "````" if "```" in text else "```"
    return [fence + lang, text, fence]


def _failure(r: dict[str, Any], verdict: BaselineVerdict | None, rerun: str = "",
             tag: str = "") -> str:
    tag = tag or ("expected failure (baseline)" if is_known(r, verdict) else r["outcome"].upper())
    out = [f"#### {r['severity']} `{r['check_id']}` on `{r['subject']}`: {tag}", ""]
    if r.get("statement"):
        src = r.get("source") or {}
        cite = f" (source: {cite_json_text(src)})" if src else ""
        out += [f"> {r['statement']}{cite}", ""]
        basis = basis_lines(r.get("basis"))
        if basis:
            out += ["> " + "<br>".join(_text(x.strip()[:1].upper() + x.strip()[1:])
                                       for x in basis), ""]
    if r.get("message"):
        out += [_text(r["message"].strip()), ""]
    if r.get("rejudged"):
        out += [f"⏱ {_text(rejudged_note(r['rejudged']))}", ""]
    if r.get("received") is not None or r.get("documented") is not None:
        out += _received_documented(r.get("received"), r.get("documented"))
    if rerun:
        out += ["Rerun this check alone:", "", *_fenced(rerun, "sh"), ""]
    setup = reproducer_setup(r)
    if setup:
        out += [f"- {_text(x)}" for x in setup] + [""]
    if r.get("reproducer"):
        n = len(r["reproducer"])
        text = reproducer_text(r["reproducer"], 3000)
        fence = "````" if "```" in text else "```"
        where = (" (`$TOOLUSE_WORKDIR`: the case's directory)" if "$TOOLUSE_WORKDIR" in text
                 else "")
        out += [f"<details><summary>Reproducer ({plural(n, 'step')})"
                + f"{where}</summary>", "", fence + "json", text, fence, "", "</details>", ""]
    verification = reproducer_verification(r)
    if verification:
        out += [f"- {_text(x)}" for x in verification] + [""]
    return "\n".join(out)


def render_markdown(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> str:
    word = verdict_word(doc, verdict)
    s = doc["summary"]
    out = [f"## {_ICON[word]} tooluse conformance: {word}", "", run_line(doc), ""]
    if not doc["run"]["complete"]:
        out += ["**The run did not finish**: these results are partial.", ""]
    # "incomplete" (a check its hard time cap ended), "flaky" and "not run" only when there is one.
    rare = [k for k in ("incomplete", "flaky", "not-run") if s.get(k)]
    head = "".join(f"| {k.replace('-', ' ')} " for k in rare)
    rule = "---:|" * len(rare)
    extra = "".join(f"| {s[k]} " for k in rare)
    out += [f"| checks | pass | fail | skip | error {head}| blocking |",
            f"|---:|---:|---:|---:|---:|{rule}---:|",
            f"| {s['total']} | {s['pass']} | {s['fail']} | {s['skip']} | {s['error']} "
            f"{extra}| {s['blocking']} |", ""]
    subjects = per_subject(doc)
    if subjects:
        more = [k for k in ("flaky", "not-run") if any(c[k] for _, c in subjects)]
        out += ["### Subjects", "",
                "| subject | tool type | runs | pass | fail | skip | error |"
                + "".join(f" {k.replace('-', ' ')} |" for k in more),
                "|---|---|---|---:|---:|---:|---:|" + "---:|" * len(more)]
        out += [f"| {_code(sub['name'])} | `{sub['tool_type']}` | {_code(sub.get('spec') or '')}"
                f" | {c['pass']} | {c['fail']} | {c['skip']} | {c['error']} |"
                + "".join(f" {c[k]} |" for k in more)
                for sub, c in subjects]
        out.append("")
    if verdict is not None:
        out += ["### Baseline", "", *[f"- {line.strip()}" for line in verdict.lines()], ""]
    out += _not_run(doc)
    tail = _flaky(doc) + _rejudged(doc) + _observed(doc) + _coverage(doc)
    failing = problems(doc, verdict)
    if failing:
        out += [f"### Failures ({len(failing)})", ""]
        used = sum(len(x) + 1 for x in out) + len(tail)
        for i, r in enumerate(failing):
            block = _failure(r, verdict, rerun_for(doc, r))
            if used + len(block) > MAX_CHARS:
                out += [f"… {len(failing) - i} more failures: see results.json or report.html.", ""]
                break
            out.append(block)
            used += len(block) + 1
    else:
        out += ["No failures.", ""]
    return "\n".join(out) + tail


def _not_run(doc: dict[str, Any]) -> list[str]:
    """Subjects that never started: one line each, not one failure per check."""
    rows = not_run_subjects(doc)
    if not rows:
        return []
    out = [f"### Not run ({sum(n for _, n, _ in rows)})", "",
           "These subjects started in no case, so their checks did not run: no verdict on them "
           "(neither a pass nor a failure).", ""]
    out += [f"- {_code(name)}: {plural(n, 'check')} not run; "
            f"{_text(why.strip().splitlines()[0] if why.strip() else 'it did not start')}"
            for name, n, why in rows]
    return out + [""]


def _flaky(doc: dict[str, Any]) -> str:
    """Intermittent failures: each with both observations (the failing one, the passing
    re-run) and its reproducer."""
    rows = flaky_results(doc)
    if not rows:
        return ""
    out = ["", f"### Flaky ({len(rows)})", "",
           "Each failed once, its reproducer replayed on a fresh subject did not show the failure "
           "again, and the check run again alone passed: an intermittent defect (a race, "
           "state the reproducer does not set up). "
           + ("They fail the run (`--fail-on-flaky`)." if doc["run"].get("fail_on_flaky")
              else "They do not fail the run; `--fail-on-flaky` makes them."), ""]
    out += [_failure(r, None, rerun_for(doc, r), flaky_tag(doc, r)) for r in rows]
    return "\n".join(out) + "\n"


def _code(text: str) -> str:
    """Inline code in a table cell (``|`` escaped; backticks kept out of the span)."""
    if not text:
        return "—"
    t = text.replace("|", "\\|").replace("\n", " ")
    return f"`` {t} ``" if "`" in t else f"`{t}`"


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|").replace("\n", " ")


def _rejudged(doc: dict[str, Any]) -> str:
    """Results re-judged: on a deadline (run again alone after the run, with both timings) or
    by replay (a model check's findings that did not show again on a fresh subject)."""
    rows = rejudged_rows(doc)
    if not rows:
        return ""
    out = ["", f"### Re-judged ({len(rows)})", "",
           "A deadline passed during these cases (even with the allowance for measured load), "
           "so each was run again alone after the run, or (a model check) the disagreements "
           "found were replayed on a fresh subject; only a failure that repeats counts.", "",
           "| check | subject | outcome | re-judged |", "|---|---|---|---|"]
    out += [f"| `{r['check_id']}` | {_code(r['subject'])} | {r['outcome']} | {_cell(note)} |"
            for r, note in rows]
    return "\n".join(out) + "\n"


#: Rows of the observed-conventions table at most (the rest: results.json, report.html).
MAX_OBSERVED = 80


def _observed(doc: dict[str, Any]) -> str:
    """What passing checks saw a subject do where the docs leave a choice."""
    rows = observed_rows(doc)
    if not rows:
        return ""
    out = ["", f"### Observed conventions ({len(rows)})", "",
           "Where the docs leave a choice, the convention each subject was seen to follow.", "",
           "| check | subject | observed |", "|---|---|---|"]
    out += [f"| `{r['check_id']}` | {_code(r['subject'])} | {_cell(r['observed'])} |"
            for r in rows[:MAX_OBSERVED]]
    if len(rows) > MAX_OBSERVED:
        out.append(f"\n… {len(rows) - MAX_OBSERVED} more in results.json or report.html.")
    return "\n".join(out) + "\n"


def _coverage(doc: dict[str, Any]) -> str:
    rows = coverage_rows(doc.get("coverage") or {})
    notes = coverage_notes(doc.get("coverage") or {})
    if not rows and not notes:
        return ""
    out = ["", "### Protocol coverage", ""]
    if rows:
        out += ["| dimension | exercised | not exercised |", "|---|---:|---|"]
    for row in rows:
        out.append(f"| {row.dimension} | {row.fraction} | "
                   f"{row.missing_text(lambda m: f'`{m}`', limit=12)} |")
    if notes:
        out += ["", *(f"- {n}" for n in notes)]
    return "\n".join(out) + "\n"
