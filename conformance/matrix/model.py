"""The matrix document (``matrix.json``, ``matrix.schema.json``): checks as rows, implementations
as columns, one cell per (check, implementation).

A cell's outcome is ``pass`` / ``fail`` / ``skip`` / ``error`` / ``incomplete`` / ``flaky`` (an
intermittent failure) / ``not-run`` (the implementation started in no case) (from that
implementation's ``results.json``), ``n-a`` (the check does not apply to its tool type) or
``unavailable`` (the column did not run: interpreter missing, environment not built, run failed
to start).

Per check: the counts, and the review flag: a check failed by more than half of the
implementations it applies to (those where it passed, failed or hit a harness error; a skip says
it turned out not to apply), and by at least :data:`REVIEW_MIN_FAILS`, is flagged "review: common
defect or calibration error", with the failing cells as the evidence.

Each check row carries a fingerprint of what it asserts (id, severity, statement, source): the
staleness test compares it with the catalog (:mod:`conformance.matrix.stale`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.catalog import CATALOG, Check
from conformance.matrix.execute import ColumnRun
from conformance.reports.render_common import format_value
from conformance.reports.rerun import rerun_for
from conformance.reports.results_file import suite_metadata
from conformance.results import rejudged_note

FORMAT_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("matrix.schema.json")
REVIEW_MIN_FAILS = 2
REVIEW_LABEL = "review: common defect or calibration error"
#: A failure saying the subject never started (runner / ProcessSession wording): no evidence
#: about the check itself.
START_FAILURE = re.compile(r"the subject (did not start|did not answer its first call|failed its "
                           r"first call, at start-up)")
CELL_OUTCOMES = ("pass", "fail", "skip", "error", "incomplete", "flaky", "not-run", "n-a",
                 "unavailable")
#: Characters of a received / documented value or reproducer kept in a cell.
VALUE_CHARS = 1500


def catalog() -> dict[str, Check]:
    import conformance.checks  # noqa: F401  (registers every check)

    return CATALOG


def fingerprint(chk: Check) -> str:
    """What a check asserts, hashed: id, severity, statement, source (document, section, tag)."""
    src = chk.source.to_json()
    doc = {"id": chk.id, "severity": chk.severity.value, "statement": chk.statement,
           "source": {k: src.get(k) for k in ("document", "section", "tag")}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def check_record(chk: Check) -> dict[str, Any]:
    src = chk.source.to_json()
    return {"id": chk.id, "family": chk.family, "severity": chk.severity.value,
            "statement": chk.statement, "applies_to": sorted(chk.applies_to),
            "source": {k: src[k] for k in ("document", "section", "title", "tag") if k in src},
            "fingerprint": fingerprint(chk)}


def matching(check_id: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(check_id, p) for p in patterns)


def row_checks(tool_types: set[str], patterns: Sequence[str] = ()) -> list[Check]:
    """The rows: every catalog check applying to one of the columns' tool types."""
    return sorted((c for c in catalog().values()
                   if c.applies_to & tool_types and matching(c.id, patterns)),
                  key=lambda c: (c.family, c.id))


def implementation_record(col: ColumnRun, out_root: Path) -> dict[str, Any]:
    e = col.entry
    summary = None
    if col.results is not None:
        summary = {k: col.results["summary"][k]
                   for k in ("total", "pass", "fail", "skip", "error", "blocking")}
    return {
        "name": e.name, "family": e.family, "tool_type": e.tool_type,
        "kind": "factory" if e.factory is not None else "command", "spec": e.spec,
        "python_requested": e.python, "requirements": list(e.requirements),
        "env": dict(e.env), "version_of": e.version_of, "version": col.version,
        "python": col.python, "suite_version": col.suite_version, "status": col.status,
        "reason": col.reason, "duration": round(col.duration, 2), "exit_code": col.exit_code,
        "summary": summary,
        "runs_dir": (col.out_dir.relative_to(out_root).as_posix()
                     if col.out_dir is not None and col.out_dir.is_relative_to(out_root) else None),
        "launcher": " ".join(col.launcher),
    }


def _cell(chk: Check, col: ColumnRun, by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if not chk.applies(col.entry.tool_type):
        return {"outcome": "n-a"}
    r = by_id.get(chk.id)
    if r is None or col.results is None:
        return {"outcome": "unavailable"}
    cell: dict[str, Any] = {"outcome": r["outcome"]}
    if r.get("observed"):
        cell["observed"] = r["observed"]
    if isinstance(r.get("rejudged"), dict):  # a failure that did not repeat: never silent
        cell["rejudged"] = rejudged_note(r["rejudged"])
    if r["outcome"] in ("fail", "error", "skip", "incomplete", "flaky", "not-run"):
        cell["message"] = r["message"]
    if r["outcome"] == "fail" and START_FAILURE.match(r["message"]):
        cell["start_failure"] = True  # an older results.json: today's says not-run
    if r["outcome"] in ("fail", "error", "flaky"):
        for key in ("received", "documented"):
            if r.get(key) is not None:
                cell[key] = format_value(r[key], VALUE_CHARS)
        if r.get("reproducer"):
            cell["reproducer"] = format_value(r["reproducer"], VALUE_CHARS)
            if r.get("setup"):
                cell["setup"] = format_value(r["setup"], VALUE_CHARS)
            cell["reproduced"] = str(r.get("reproduced") or "")
        again = rerun_for(col.results, r)
        if again:
            launcher = " ".join(col.launcher)
            cell["rerun"] = launcher + again.removeprefix("tooluse")
    return cell


def review(counts: dict[str, int]) -> bool:
    """Failed by more than half of the implementations it applies to, and by at least 2 (an
    implementation that did not start says nothing about the check: left out of both; a flaky
    one counts where it applies, not as a failure)."""
    start = counts.get("start_failures", 0)
    fails = counts["fail"] - start
    applies = (counts["pass"] + counts["fail"] + counts["error"] + counts.get("flaky", 0)
               - start)
    return fails >= REVIEW_MIN_FAILS and fails * 2 > applies


def build_matrix(columns: Sequence[ColumnRun], *, out_root: Path, config: str,
                 generated_at: str, duration: float,
                 patterns: Sequence[str] = ()) -> dict[str, Any]:
    """The matrix document of finished columns."""
    by_col: list[dict[str, dict[str, Any]]] = [
        {r["check_id"]: r for r in (c.results or {}).get("results", [])} for c in columns]
    rows = []
    for chk in row_checks({c.entry.tool_type for c in columns}, patterns):
        cells = {c.entry.name: _cell(chk, c, by_id) for c, by_id in zip(columns, by_col,
                                                                        strict=True)}
        counts = {o: sum(cell["outcome"] == o for cell in cells.values()) for o in CELL_OUTCOMES}
        counts["applies"] = counts["pass"] + counts["fail"] + counts["error"] + counts["flaky"]
        counts["start_failures"] = sum(bool(cell.get("start_failure")) for cell in cells.values())
        flagged = review(counts)
        rows.append({**check_record(chk), "cells": cells, "counts": counts,
                     "review": flagged,
                     "evidence": [n for n, cell in cells.items() if cell["outcome"] == "fail"
                                  and not cell.get("start_failure")] if flagged else []})
    suite = suite_metadata()
    return {
        "format_version": FORMAT_VERSION,
        "generated_at": generated_at,
        "config": config,
        "suite": {k: suite[k] for k in ("name", "version", "python_version")},
        "duration": round(duration, 1),
        "check_patterns": list(patterns),
        "review_rule": (f"it is failed by more than half of the implementations the check "
                        f"applies to (pass + fail + error + flaky) and by at least "
                        f"{REVIEW_MIN_FAILS}; an implementation that did not start is left out "
                        "of both counts"),
        "implementations": [implementation_record(c, out_root) for c in columns],
        "checks": rows,
    }


def validate_matrix(doc: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when ``doc`` does not follow matrix.schema.json."""
    import jsonschema

    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
