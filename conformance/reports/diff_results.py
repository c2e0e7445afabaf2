"""Diff of two ``results.json`` files: checks that changed outcome, new and removed checks."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .results_file import RunResults

_BAD = ("fail", "error")


def _kind(before: str, after: str, flaky_fails: bool = False) -> str:
    """``regression`` (B fails or errs where A did not), ``fixed`` (B passes where A failed,
    erred or was flaky), ``flaky`` (B is flaky where A was not: an intermittent failure, not a
    regression unless B's run counted flaky results, ``flaky_fails``) or ``changed``."""
    if flaky_fails and after == "flaky" and before not in (*_BAD, "flaky"):
        return "regression"
    if before not in _BAD and after in _BAD:
        return "regression"
    if before in (*_BAD, "flaky") and after == "pass":
        return "fixed"
    if after == "flaky":
        return "flaky"
    return "changed"


def _key(r: dict[str, Any]) -> tuple[str, str]:
    return (r["subject"], r["check_id"])


def diff_results(a: RunResults, b: RunResults) -> dict[str, Any]:
    """A JSON-able diff; entries are sorted by (subject, check id)."""
    ra = {_key(r): r for r in a.doc["results"]}
    rb = {_key(r): r for r in b.doc["results"]}
    changed, new, removed = [], [], []
    flaky_fails = bool(b.doc["run"].get("fail_on_flaky"))
    for key in sorted(set(ra) | set(rb)):
        x, y = ra.get(key), rb.get(key)
        if x is not None and y is not None:
            if x["outcome"] != y["outcome"]:
                changed.append({"subject": key[0], "check_id": key[1], "severity": y["severity"],
                                "before": x["outcome"], "after": y["outcome"],
                                "kind": _kind(x["outcome"], y["outcome"], flaky_fails),
                                "message": y.get("message", "") if y["outcome"] in (
                                    *_BAD, "flaky") else ""})
        elif y is not None:
            new.append({"subject": key[0], "check_id": key[1], "severity": y["severity"],
                        "outcome": y["outcome"]})
        elif x is not None:
            removed.append({"subject": key[0], "check_id": key[1], "severity": x["severity"],
                            "outcome": x["outcome"]})
    kinds = Counter(c["kind"] for c in changed)
    sa = {s["name"] for s in a.doc["subjects"]}
    sb = {s["name"] for s in b.doc["subjects"]}

    def meta(run: RunResults) -> dict[str, Any]:
        return {"path": str(run.path) if run.path else None,
                "suite_version": run.doc["suite"]["version"],
                "anthropic_sdk_version": run.doc["suite"]["anthropic_sdk_version"],
                "started_at": run.doc["run"]["started_at"], "complete": run.doc["run"]["complete"],
                "summary": run.doc["summary"]}

    return {
        "kind": "results",
        "a": meta(a), "b": meta(b),
        "subjects": {"added": sorted(sb - sa), "removed": sorted(sa - sb)},
        "counts": {"regressions": kinds["regression"], "fixed": kinds["fixed"],
                   "flaky": kinds["flaky"], "changed": kinds["changed"], "new": len(new),
                   "removed": len(removed)},
        "changed": changed, "new": new, "removed": removed,
    }
