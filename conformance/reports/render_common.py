"""Helpers the Markdown, JUnit and HTML writers share: ordering, value formatting, headings."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from conformance.reproducers import describe_reproduced, describe_setup
from conformance.results import rejudged_note

from .baseline import BaselineVerdict
from .results_file import gating, is_blocking

SEVERITY_ORDER = {"MUST": 0, "SHOULD": 1, "INFO": 2}
OUTCOMES = ("pass", "fail", "skip", "error", "incomplete", "flaky", "not-run")
MAX_VALUE_CHARS = 4000


def format_value(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A received/documented value as text: strings as they are, anything else as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters in results.json)"
    return text


def reproducer_text(reproducer: list[Any], limit: int = MAX_VALUE_CHARS) -> str:
    return format_value(reproducer, limit)


def reproducer_setup(r: dict[str, Any]) -> list[str]:
    """What the reproducer plants behind the subject's back ("before input 1, make the directory
    ..."): every format prints it before the inputs, where whoever replays them needs it."""
    return [describe_setup(x) for x in r.get("setup") or []]


def reproducer_verification(r: dict[str, Any]) -> list[str]:
    """Whether the reproducer (its setup, then its inputs) was verified on a fresh subject:
    every format prints it after them, as the outcome of replaying them."""
    if not r.get("reproducer") and not r.get("setup"):
        return []
    return ["Reproducer " + describe_reproduced(str(r.get("reproduced") or ""),
                                             str(r.get("family") or ""))]


def is_known(r: dict[str, Any], verdict: BaselineVerdict | None) -> bool:
    return verdict is not None and verdict.is_known(r["subject"], r["check_id"])


def problems(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> list[dict[str, Any]]:
    """Failing and erroring results, the ones that fail the run first, then by severity and id.

    Order: blocking failures, blocking harness errors, SHOULD, INFO, then known (baseline) ones.
    """
    strict = bool(doc["run"].get("strict"))

    def rank(r: dict[str, Any]) -> tuple[int, int, int, str, str]:
        known = is_known(r, verdict)
        if not gating(r["severity"], strict=strict):
            group = 2
        else:
            group = 1 if r["outcome"] == "error" else 0
        return (int(known), group, SEVERITY_ORDER.get(r["severity"], 3), r["check_id"],
                r["subject"])

    return sorted((r for r in doc["results"] if r["outcome"] in ("fail", "error", "incomplete")),
                  key=rank)


def flaky_results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Flaky results (an intermittent failure: both observations in ``rejudged``), by severity,
    check id, subject."""
    return sorted((r for r in doc["results"] if r["outcome"] == "flaky"),
                  key=lambda r: (SEVERITY_ORDER.get(r["severity"], 3), r["check_id"],
                                 r["subject"]))


def flaky_tag(doc: dict[str, Any], r: dict[str, Any]) -> str:
    """``FLAKY (...)``: whether it fails the run (``--fail-on-flaky``) or not."""
    if is_blocking(r, strict=bool(doc["run"].get("strict")),
                   fail_on_flaky=bool(doc["run"].get("fail_on_flaky"))):
        return "FLAKY (fails the run: --fail-on-flaky)"
    return "FLAKY (an intermittent failure; does not fail the run without --fail-on-flaky)"


def not_run_subjects(doc: dict[str, Any]) -> list[tuple[str, int, str]]:
    """(subject, how many of its cases never ran, why: the first such message) for every
    subject with ``not-run`` results."""
    out: dict[str, list[Any]] = {}
    for r in doc["results"]:
        if r["outcome"] == "not-run":
            entry = out.setdefault(r["subject"], [0, r.get("message") or ""])
            entry[0] += 1
    return [(name, n, why) for name, (n, why) in out.items()]


def rejudged_rows(doc: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Results that rested on a deadline and were run again alone, with their note (both
    timings), by check id then subject (flaky ones have a section of their own)."""
    rows = sorted((r for r in doc["results"] if r.get("rejudged") and r["outcome"] != "flaky"),
                  key=lambda r: (r["check_id"], r["subject"]))
    return [(r, rejudged_note(r["rejudged"])) for r in rows]


def observed_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Passing results that report the convention they observed, by check id then subject."""
    return sorted((r for r in doc["results"] if r["outcome"] == "pass" and r.get("observed")),
                  key=lambda r: (r["check_id"], r["subject"]))


def per_subject(doc: dict[str, Any]) -> list[tuple[dict[str, Any], Counter[str]]]:
    counts: dict[str, Counter[str]] = {s["name"]: Counter() for s in doc["subjects"]}
    extra: dict[str, dict[str, Any]] = {}
    for r in doc["results"]:
        if r["subject"] not in counts:
            counts[r["subject"]] = Counter()
            extra[r["subject"]] = {"name": r["subject"], "family": r["family"],
                                   "tool_type": r["tool_type"], "spec": ""}
        counts[r["subject"]][r["outcome"]] += 1
    subjects = list(doc["subjects"]) + list(extra.values())
    return [(s, counts[s["name"]]) for s in subjects]


def verdict_word(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> str:
    """PASS / FAIL / INCOMPLETE, taking a baseline into account when one was applied."""
    if not doc["run"]["complete"]:
        return "INCOMPLETE"
    if verdict is not None and not verdict.ok:
        return "FAIL"
    if doc["summary"]["verdict"] == "incomplete":  # a case never ran: no verdict on it
        return "INCOMPLETE"
    if verdict is not None:
        return "PASS"
    return "PASS" if doc["summary"]["verdict"] == "pass" else "FAIL"


def run_line(doc: dict[str, Any]) -> str:
    suite, run = doc["suite"], doc["run"]
    parts = [f"tooluse-conformance {suite['version']}",
             f"anthropic {suite['anthropic_sdk_version'] or 'not installed'}",
             f"Python {suite['python_version']}",
             # No seed: the property and model checks run derandomized (hypothesis derives
             # their examples from the check itself), so every run tries the same examples.
             f"random seed {run['seed']}" if run["seed"] is not None
             else "derandomized (the same examples every run)",
             f"started {run['started_at']}"]
    if run.get("finished_at"):
        parts.append(f"finished {run['finished_at']}")
    if run.get("strict"):
        parts.append("strict (SHOULD counts)")
    if run.get("fail_on_flaky"):
        parts.append("--fail-on-flaky (flaky counts)")
    if run.get("interrupted"):
        parts.append("interrupted")
    return " · ".join(parts)
