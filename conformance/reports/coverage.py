"""Protocol coverage: what a run exercised, against the full sets the simulator knows.

Dimensions: tool versions (``simulator.registry.TOOLS``), content block types, tool-result error
codes, stop reasons, simulator rules (``simulator.rules``, when installed) and catalog checks.
"Exercised" comes from the run's subjects and results plus the cassettes it replayed (and rule
ids the simulator reported firing). Every report shows the ``missing`` lists so a gap is visible.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator import registry
from simulator.cassette import Cassette, CassetteError

from .traffic import TrafficStats, add_cassette, collect_corpus

DIMENSIONS = ("tool_versions", "block_types", "error_codes", "stop_reasons", "rules", "checks")

#: Block types every Messages API conversation may carry besides the tools' own result blocks.
_BASE_BLOCK_TYPES = ("text", "thinking", "redacted_thinking", "tool_use", "tool_result",
                     "server_tool_use", "container_upload")


def known_tool_versions() -> list[str]:
    return sorted(registry.TOOLS)


def known_block_types() -> list[str]:
    """Base blocks, each server tool's result block, and the typed objects inside those."""
    try:  # the schemas package may publish the authoritative list
        mod = importlib.import_module("simulator.schemas")
        listed = getattr(mod, "BLOCK_TYPES", None)
        if listed:
            return sorted(set(listed))
    except ImportError:
        pass
    types = set(_BASE_BLOCK_TYPES)
    for tool in registry.TOOLS.values():
        for result_type in tool.sub_tools.values():
            types.add(result_type)
            stem = result_type.removesuffix("_tool_result")
            if tool.family == "code_execution":
                types.update({f"{stem}_result", f"{result_type}_error"})
    return sorted(types)


def known_error_codes() -> list[str]:
    codes: set[str] = set()
    for tool in registry.TOOLS.values():
        for per_tool in tool.error_codes.values():
            codes.update(per_tool)
    return sorted(codes)


def known_stop_reasons() -> list[str]:
    return sorted(registry.STOP_REASONS)


def known_rule_ids() -> list[str] | None:
    """Rule ids from the simulator's rule registry; None when it is not installed."""
    try:
        mod = importlib.import_module("simulator.rules")
    except ImportError:
        return None
    for attr in ("RULES", "REGISTRY", "rules"):
        reg = getattr(mod, attr, None)
        if isinstance(reg, dict):
            return sorted(str(k) for k in reg)
        if isinstance(reg, list | tuple):
            return sorted(str(getattr(r, "id", r)) for r in reg)
    for attr in ("rule_ids", "all_rules"):
        fn = getattr(mod, attr, None)
        if callable(fn):
            return sorted(str(getattr(r, "id", r)) for r in fn())
    return None


def known_check_ids() -> list[str]:
    from conformance.catalog import CATALOG

    # registers every check of the suite; a broken check module must not stop a report
    with contextlib.suppress(Exception):
        importlib.import_module("conformance.checks")

    return sorted(CATALOG)


def rules_from_log(log: Iterable[Any]) -> set[str]:
    """Rule ids a simulator enforced, from its event log (``Simulator.log``: ``rule_violated``)."""
    return {str(e.rule_id) for e in log
            if getattr(e, "kind", None) == "rule_violated" and getattr(e, "rule_id", None)}


def _dimension(known: list[str] | None, exercised: Iterable[str]) -> dict[str, Any]:
    seen = sorted(set(exercised))
    if known is None:
        return {"known": None, "exercised": seen, "missing": [], "extra": []}
    return {"known": known, "exercised": [s for s in seen if s in known],
            "missing": [k for k in known if k not in seen],
            "extra": [s for s in seen if s not in known]}


#: The agent-loop check that replays the whole corpus (``conformance.loops.corpus``).
CORPUS_CHECK = "loop.corpus.drives_every_conversation"


def replayed_cassettes(results: Iterable[dict[str, Any]]) -> list[Cassette]:
    """The cassettes the agent-loop checks that ran replayed (``conformance.loops`` scenarios)."""
    try:
        from conformance.loops.scenarios import BY_ID
    except Exception:  # not installed, or broken: coverage then omits these cassettes
        return []
    out: list[Cassette] = []
    seen: set[str] = set()
    ids = set()
    for r in results:
        ids.add(r["check_id"])
        scenario = BY_ID.get(r["check_id"])
        if scenario is None or scenario.cassette in seen:
            continue
        seen.add(scenario.cassette)
        with contextlib.suppress(CassetteError):
            out.append(scenario.load())
    if CORPUS_CHECK in ids:  # the check that drives every conversation of the corpus
        with contextlib.suppress(Exception):
            from conformance.loops.corpus import replayed_cassettes as corpus_cassettes

            known = {c.id for c in out}
            out += [c for c in corpus_cassettes() if c.id not in known]
    return out


def coverage_for(doc: dict[str, Any], *, corpus: Path | None = None,
                 stats: TrafficStats | None = None,
                 rules_fired: Iterable[str] = ()) -> dict[str, Any]:
    """Coverage of the run in ``doc`` (a results document): its subjects and results, the corpus
    it replayed (``corpus``), the cassettes its agent-loop checks replayed, and the rules a
    simulator reported enforcing (``rules_fired``)."""
    ran = [r for r in doc.get("results", []) if r["outcome"] != "skip"]
    if stats is None:
        stats = TrafficStats()
        if corpus is not None:
            try:
                stats = collect_corpus(corpus)
            except CassetteError:
                pass  # the report must still be written; the gap shows as missing entries
        for cassette in replayed_cassettes(ran):
            add_cassette(stats, cassette)
    tool_versions = {s["tool_type"] for s in doc.get("subjects", []) if s.get("tool_type")}
    tool_versions |= {r["tool_type"] for r in ran if r.get("tool_type")}
    tool_versions |= set(stats.tool_types)
    block_types = set(stats.block_types) | set(stats.request_block_types)
    rules = set(stats.expected_rules) | set(rules_fired)
    return {
        "tool_versions": _dimension(known_tool_versions(), tool_versions),
        "block_types": _dimension(known_block_types(), block_types),
        "error_codes": _dimension(known_error_codes(), stats.error_codes),
        "stop_reasons": _dimension(known_stop_reasons(), stats.stop_reasons),
        "rules": _dimension(known_rule_ids(), rules),
        "checks": _dimension(known_check_ids(), (r["check_id"] for r in ran)),
    }


def coverage_rows(coverage: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(dimension, "exercised/known", missing) for the renderers."""
    rows = []
    for dim in DIMENSIONS:
        c = coverage.get(dim)
        if not c:
            continue
        known = c.get("known")
        frac = (f"{len(c['exercised'])}/{len(known)}" if known is not None
                else f"{len(c['exercised'])}/? (registry not installed)")
        rows.append((dim.replace("_", " "), frac, list(c.get("missing", []))))
    return rows
