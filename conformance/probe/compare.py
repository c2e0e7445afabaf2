"""Two probe outputs side by side: what changed per scenario and in total (``tooluse diff``).

Per scenario driven by both, each *aspect* that differs is a change, classified as a
``regression``, an ``improvement`` or ``changed`` (neither better nor worse by itself):

- ``status``: how the conversation ended (completed, stopped at a limit, API error, failed);
  ending worse is a regression.
- ``tool_calls``: the sequence of calls (tool, editor command or bash program, input fields),
  e.g. ``insert`` with ``insert_text`` instead of ``new_str``: changed.
- ``stop_reason``: the final stop reason, or the set of stop reasons seen; a final ``refusal``,
  ``max_tokens`` or ``model_context_window_exceeded`` is a regression.
- ``turns``, ``tokens``: the number of model turns, the tokens used (input, output, cache):
  changed, with the difference.
- ``error``: an API error that ended the conversation (appeared: regression).
- ``retried``: transient errors answered and retried (429, 529, 5xx): changed.
- ``refusals``: more refusals is a regression.
- ``drift``: findings outside the registry (kind, pointer without the exchange index, value);
  new in B is a regression, gone in B an improvement.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from .driver import FINAL
from .run import ProbeOutputError, load_index, scenario_file

#: How well a scenario ended (higher is better).
STATUS_RANK = {"completed": 3, "max_turns": 2, "max_output_tokens": 2, "api_error": 1,
               "failed": 0}
BAD_STOPS = frozenset({"refusal", "max_tokens", "model_context_window_exceeded"})
ORDER = {"regression": 0, "changed": 1, "improvement": 2}


def load_probe(path: str | Path) -> dict[str, Any]:
    """``{"path", "model", "complete", "scenarios": {id: outcome}}`` of a probe output."""
    p = Path(path)
    index = load_index(p)
    if index is None:
        raise ProbeOutputError(f"{p}: no probe.json; give a `tooluse probe --out` directory")
    scenarios: dict[str, Any] = {}
    for sid in index.get("scenarios", {}):
        f = scenario_file(p, sid)
        if f.is_file():
            scenarios[sid] = json.loads(f.read_text(encoding="utf-8"))
    return {"path": str(p), "model": index.get("model"), "complete": bool(index.get("complete")),
            "scenarios": scenarios}


def _signature(call: dict[str, Any]) -> str:
    keys = ",".join(call.get("input_keys") or [])
    command = f" {call['command']}" if call.get("command") else ""
    return f"{call.get('tool')}{command} [{keys}]"


def _change(aspect: str, kind: str, a: Any, b: Any, detail: str) -> dict[str, Any]:
    return {"aspect": aspect, "kind": kind, "a": a, "b": b, "detail": detail}


def _calls_change(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any] | None:
    sa, sb = [_signature(c) for c in a], [_signature(c) for c in b]
    if sa == sb:
        return None
    first = next((i for i, (x, y) in enumerate(zip(sa, sb, strict=False)) if x != y),
                 min(len(sa), len(sb)))
    keys_a = {k for c in a for k in c.get("input_keys") or []}
    keys_b = {k for c in b for k in c.get("input_keys") or []}
    parts = [f"from call {first + 1}: {sa[first] if first < len(sa) else '(none)'} → "
             f"{sb[first] if first < len(sb) else '(none)'}"]
    if len(sa) != len(sb):
        parts.append(f"{len(sa)} → {len(sb)} calls")
    if keys_b - keys_a:
        parts.append("input fields appeared: " + ", ".join(sorted(keys_b - keys_a)))
    if keys_a - keys_b:
        parts.append("input fields vanished: " + ", ".join(sorted(keys_a - keys_b)))
    return _change("tool_calls", "changed", sa, sb, "; ".join(parts))


def _drift_keys(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    import re

    out = {}
    for f in doc.get("drift") or []:
        pointer = re.sub(r"^/exchanges/\d+/response", "", str(f.get("pointer")))
        out[(str(f.get("kind")), pointer, str(f.get("detail")).split(":", 1)[0])] = f
    return out


def compare_scenario(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes from ``a`` to ``b`` (two outcomes of one scenario), regressions first."""
    out: list[dict[str, Any]] = []
    if a["status"] != b["status"]:
        ra, rb = STATUS_RANK.get(a["status"], -1), STATUS_RANK.get(b["status"], -1)
        kind = "regression" if rb < ra else "improvement" if rb > ra else "changed"
        out.append(_change("status", kind, a["status"], b["status"],
                           f"{a['status']} → {b['status']}"))
    calls = _calls_change(a.get("tool_calls") or [], b.get("tool_calls") or [])
    if calls:
        out.append(calls)
    stops_a, stops_b = a.get("stop_reasons") or [], b.get("stop_reasons") or []
    last_a, last_b = (stops_a or [None])[-1], (stops_b or [None])[-1]
    if last_a != last_b or set(stops_a) != set(stops_b):
        kind = "regression" if last_b in BAD_STOPS and last_a not in BAD_STOPS else \
            "improvement" if last_a in BAD_STOPS and last_b not in BAD_STOPS else "changed"
        out.append(_change("stop_reason", kind, stops_a, stops_b,
                           f"final {last_a} → {last_b}; seen {sorted(set(stops_a))} → "
                           f"{sorted(set(stops_b))}"))
    if a["turns"] != b["turns"]:
        out.append(_change("turns", "changed", a["turns"], b["turns"],
                           f"{a['turns']} → {b['turns']} ({b['turns'] - a['turns']:+d})"))
    if a["tokens"] != b["tokens"]:
        delta = b["tokens"] - a["tokens"]
        share = f", {delta / a['tokens']:+.0%}" if a["tokens"] else ""
        out.append(_change("tokens", "changed", a["tokens"], b["tokens"],
                           f"{a['tokens']:,} → {b['tokens']:,} ({delta:+,}{share})"))
    err_a = (a.get("error") or {}).get("type")
    err_b = (b.get("error") or {}).get("type")
    if err_a != err_b:
        kind = "regression" if err_b else "improvement"
        out.append(_change("error", kind, a.get("error"), b.get("error"),
                           f"{err_a or 'no error'} → {err_b or 'no error'}"
                           + (f": {b['error'].get('message')}" if err_b else "")))
    retried_a = [f"{r.get('status')} {r.get('type')}" for r in a.get("retried") or []]
    retried_b = [f"{r.get('status')} {r.get('type')}" for r in b.get("retried") or []]
    if retried_a != retried_b:
        out.append(_change("retried", "changed", retried_a, retried_b,
                           f"{', '.join(retried_a) or 'none'} → {', '.join(retried_b) or 'none'}"))
    if a.get("refusals", 0) != b.get("refusals", 0):
        kind = "regression" if b.get("refusals", 0) > a.get("refusals", 0) else "improvement"
        out.append(_change("refusals", kind, a.get("refusals", 0), b.get("refusals", 0),
                           f"{a.get('refusals', 0)} → {b.get('refusals', 0)}"))
    da, db = _drift_keys(a), _drift_keys(b)
    new, gone = [db[k] for k in db if k not in da], [da[k] for k in da if k not in db]
    if new:
        out.append(_change("drift", "regression", None, new, "new in B: " + "; ".join(
            f"{f['kind']} at {f['pointer']} ({f['detail']})" for f in new)))
    if gone:
        out.append(_change("drift", "improvement", gone, None, "gone in B: " + "; ".join(
            f"{f['kind']} at {f['pointer']} ({f['detail']})" for f in gone)))
    return sorted(out, key=lambda c: ORDER[c["kind"]])


def _totals(side: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    docs = [side["scenarios"][i] for i in ids]
    return {"scenarios": len(docs),
            "statuses": dict(sorted(Counter(d["status"] for d in docs).items())),
            "turns": sum(d["turns"] for d in docs), "requests": sum(d["requests"] for d in docs),
            "tokens": sum(d["tokens"] for d in docs),
            "output_tokens": sum(d["usage"]["output_tokens"] for d in docs),
            "tool_calls": sum(len(d.get("tool_calls") or []) for d in docs),
            "retried": sum(len(d.get("retried") or []) for d in docs),
            "errors": sum(1 for d in docs if d.get("error")),
            "refusals": sum(d.get("refusals", 0) for d in docs),
            "drift": sum(len(d.get("drift") or []) for d in docs)}


def diff_probes(a_path: str | Path, b_path: str | Path) -> dict[str, Any]:
    """The ``tooluse diff`` document of two probe outputs (kind ``probe``)."""
    a, b = load_probe(a_path), load_probe(b_path)
    common = [i for i in a["scenarios"] if i in b["scenarios"]]
    rows = []
    for sid in common:
        da, db = a["scenarios"][sid], b["scenarios"][sid]
        changes = compare_scenario(da, db)
        verdict = changes[0]["kind"] if changes else "same"
        rows.append({"scenario": sid, "verdict": verdict, "changes": changes,
                     "a": {k: da[k] for k in ("status", "turns", "tokens", "requests")},
                     "b": {k: db[k] for k in ("status", "turns", "tokens", "requests")}})
    rows.sort(key=lambda r: (ORDER.get(r["verdict"], 3), r["scenario"]))
    aspects: Counter[str] = Counter()
    for r in rows:
        aspects.update({c["aspect"] for c in r["changes"]})
    drift_b = [{**f, "scenario": sid} for sid in b["scenarios"]
               for f in b["scenarios"][sid].get("drift") or []]
    incomplete = [sid for side in (a, b) for sid, d in side["scenarios"].items()
                  if d["status"] not in FINAL]
    return {
        "kind": "probe",
        "a": {"path": a["path"], "model": a["model"], "complete": a["complete"],
              "totals": _totals(a, common)},
        "b": {"path": b["path"], "model": b["model"], "complete": b["complete"],
              "totals": _totals(b, common)},
        "counts": {"compared": len(rows),
                   **{k: sum(1 for r in rows if r["verdict"] == k)
                      for k in ("regression", "changed", "improvement", "same")}},
        "aspects": dict(sorted(aspects.items())),
        "only_a": sorted(set(a["scenarios"]) - set(b["scenarios"])),
        "only_b": sorted(set(b["scenarios"]) - set(a["scenarios"])),
        "not_final": sorted(set(incomplete)),
        "scenarios": rows,
        "drift_b": drift_b,
    }


def has_regressions(diff: dict[str, Any]) -> bool:
    return bool(diff["counts"]["regression"])
