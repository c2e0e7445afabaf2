"""Is a committed matrix stale? Its check rows compared with the current catalog.

A row is stale when the check's fingerprint (id, severity, statement, source) changed, when the
check left the catalog, or when a catalog check applying to one of the matrix's tool types has no
row. The fix is always the same: regenerate the matrix (``nox -s matrix``).
"""

from __future__ import annotations

import json
from typing import Any

from conformance.matrix.model import catalog, check_record, fingerprint, row_checks


def stale_checks(doc: dict[str, Any]) -> list[str]:
    """One line per stale row (empty: the matrix matches the catalog)."""
    problems: list[str] = []
    cat = catalog()
    rows = {r["id"]: r for r in doc["checks"]}
    for cid, row in sorted(rows.items()):
        chk = cat.get(cid)
        if chk is None:
            problems.append(f"{cid}: no longer in the catalog")
            continue
        if fingerprint(chk) != row["fingerprint"]:
            now = check_record(chk)
            changed = [k for k in ("severity", "statement", "source")
                       if _comparable(k, now[k]) != _comparable(k, row.get(k))]
            problems.append(f"{cid}: {', '.join(changed) or 'fingerprint'} changed "
                            f"({_diff(changed, row, now)})")
    tool_types = {i["tool_type"] for i in doc["implementations"]}
    for chk in row_checks(tool_types, doc.get("check_patterns") or ()):
        if chk.id not in rows:
            problems.append(f"{chk.id}: a {chk.severity.value} check the matrix has no row for")
    return problems


def _comparable(key: str, value: Any) -> Any:
    if key == "source" and isinstance(value, dict):
        return {k: value.get(k) for k in ("document", "section", "tag")}
    return value


def _diff(changed: list[str], old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for k in changed:
        before, after = _comparable(k, old.get(k)), _comparable(k, new[k])
        if k == "severity":
            parts.append(f"{before} -> {after}")
        else:
            parts.append(f"{k} was {json.dumps(before)[:120]}, now {json.dumps(after)[:120]}")
    return "; ".join(parts) or "fingerprint differs"
