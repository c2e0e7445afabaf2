"""Protocol coverage: what a run exercised, against the full sets the simulator knows.

Dimensions: tool versions (``simulator.registry.TOOLS``), content block types, tool-result error
codes, stop reasons, simulator rules (``simulator.rules``, when installed) and catalog checks.
"Exercised" comes from the run's subjects and results plus the cassettes it replayed. Every report
shows the ``missing`` lists so a gap is visible; for tool versions it first says which the
subjects declared (``declared``), and names the others as versions not declared, not judged: a
subject that implements one version has no gap there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from conformance.catalog import CATALOG
from simulator import registry
from simulator.cassette import Cassette, CassetteError

from .traffic import TrafficStats, add_cassette, collect_corpus

DIMENSIONS = ("tool_versions", "block_types", "error_codes", "stop_reasons", "rules", "checks")

def known_tool_versions() -> list[str]:
    return sorted(registry.TOOLS)


def known_block_types() -> list[str]:
    """Every content block type the schemas know (``simulator.schemas.BLOCK_TYPES``)."""
    from simulator.schemas import BLOCK_TYPES

    return sorted(set(BLOCK_TYPES))


def known_error_codes() -> list[str]:
    codes: set[str] = set()
    for tool in registry.TOOLS.values():
        for per_tool in tool.error_codes.values():
            codes.update(per_tool)
    return sorted(codes)


def known_stop_reasons() -> list[str]:
    return sorted(registry.STOP_REASONS)


def known_rule_ids() -> list[str]:
    """Rule ids from the simulator's rule registry (``simulator.rules.RULES``)."""
    from simulator.rules import RULES

    return sorted(RULES)


def _catalog() -> dict[str, Any]:
    import conformance.checks  # noqa: F401  (registers every check of the suite)

    return dict(CATALOG)


def known_check_ids(subjects: Iterable[dict[str, Any]] | None = None) -> list[str]:
    """Every check id of the catalog; with ``subjects`` (results-file subject records), only
    those that apply to one of them (same family, the subject's tool type listed)."""
    catalog = _catalog()
    if subjects is None:
        return sorted(catalog)
    kinds = {(s.get("family"), s.get("tool_type")) for s in subjects}
    return sorted(cid for cid, chk in catalog.items()
                  if any(chk.family == fam and tt in chk.applies_to for fam, tt in kinds))


def _check_tool_types(families: set[str]) -> list[str]:
    """The tool types the catalog's checks of ``families`` are written for."""
    return sorted({t for chk in _catalog().values() if chk.family in families
                   for t in chk.applies_to})


def _dimension(known: list[str] | None, exercised: Iterable[str],
               scope: str | None = None) -> dict[str, Any]:
    seen = sorted(set(exercised))
    if known is None:
        out: dict[str, Any] = {"known": None, "exercised": seen, "missing": [], "extra": []}
    else:
        out = {"known": known, "exercised": [s for s in seen if s in known],
               "missing": [k for k in known if k not in seen],
               "extra": [s for s in seen if s not in known]}
    if scope:
        out["scope"] = scope
    return out


#: Why the traffic dimensions are left out of a run that replayed no API traffic.
NO_TRAFFIC = ("not applicable: the run replayed no API traffic (no agent-loop checks, no "
              "fixture corpus)")


def _not_applicable(why: str) -> dict[str, Any]:
    return {"known": [], "exercised": [], "missing": [], "extra": [], "applies": False,
            "scope": why}


#: The agent-loop check that replays the whole corpus (``conformance.loops.corpus``).
CORPUS_CHECK = "loop.corpus.drives_every_conversation"


def replayed_cassettes(results: Iterable[dict[str, Any]]) -> list[Cassette]:
    """The cassettes the agent-loop checks that ran replayed (``conformance.loops`` scenarios)."""
    from conformance.loops.scenarios import BY_ID

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
        from conformance.loops.corpus import replayed_cassettes as corpus_cassettes

        known = {c.id for c in out}
        out += [c for c in corpus_cassettes() if c.id not in known]
    return out


def coverage_for(doc: dict[str, Any], *, corpus: Path | None = None,
                 stats: TrafficStats | None = None) -> dict[str, Any]:
    """Coverage of the run in ``doc`` (a results document): its subjects and results, the corpus
    it replayed (``corpus``) and the cassettes its agent-loop checks replayed."""
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
    subjects = list(doc.get("subjects") or [])
    tool_versions = {s["tool_type"] for s in subjects if s.get("tool_type")}
    tool_versions |= {r["tool_type"] for r in ran if r.get("tool_type")}
    tool_versions |= set(stats.tool_types)
    block_types = set(stats.block_types) | set(stats.request_block_types)
    rules = set(stats.expected_rules)
    checks = (r["check_id"] for r in ran)
    if not subjects:  # no subject records: measured against everything the suite knows
        known_checks, check_scope = known_check_ids(), None
    else:
        families = sorted({str(s.get("family")) for s in subjects})
        known_checks = known_check_ids(subjects)
        check_scope = f"the checks that apply to the run's subjects ({', '.join(families)})"
    traffic = corpus is not None or stats.exchanges > 0 or bool(rules)
    declared = sorted({s["tool_type"] for s in subjects if s.get("tool_type")})
    if traffic:
        versions = _dimension(known_tool_versions(), tool_versions)
    else:  # the tool versions of the subjects' families, not every tool of the API
        families = sorted({str(s.get("family")) for s in subjects})
        known = sorted(set(_check_tool_types(set(families))) | tool_versions)
        versions = _dimension(known, tool_versions, f"the tool types the suite checks for "
                                                    f"{', '.join(families) or 'no subject'}")
    versions["declared"] = declared or versions["exercised"]
    return {
        "tool_versions": versions,
        "block_types": (_dimension(known_block_types(), block_types) if traffic
                        else _not_applicable(NO_TRAFFIC)),
        "error_codes": (_dimension(known_error_codes(), stats.error_codes) if traffic
                        else _not_applicable(NO_TRAFFIC)),
        "stop_reasons": (_dimension(known_stop_reasons(), stats.stop_reasons) if traffic
                         else _not_applicable(NO_TRAFFIC)),
        "rules": (_dimension(known_rule_ids(), rules) if traffic
                  else _not_applicable(NO_TRAFFIC)),
        "checks": _dimension(known_checks, checks, check_scope),
    }


#: How the reports name the tool versions no subject declared: a subject implements the versions
#: it declares, so the others are not a gap in it, and no check judged them.
NOT_DECLARED = "other versions, not declared (not judged)"


class CoverageRow(NamedTuple):
    """One dimension of coverage as the reports show it."""

    dimension: str
    #: ``exercised/known``
    fraction: str
    missing: list[str]
    #: Tool versions only: the versions the run's subjects declared (None for the others).
    declared: list[str] | None = None

    def missing_text(self, code: Callable[[str], str] = str, limit: int | None = None) -> str:
        """The "not exercised" cell: for tool versions, which ones the subjects declared first,
        then the others as versions not declared (never as a defect); else the missing ones.
        ``code`` marks each name up (Markdown, HTML); past ``limit`` names, how many more."""
        def names(xs: list[str]) -> str:
            shown = ", ".join(code(x) for x in xs[:limit] if x)
            more = len(xs) - limit if limit is not None and len(xs) > limit else 0
            return shown + (f", … {more} more" if more else "")

        if self.declared is None:
            return names(self.missing) or "—"
        head = f"declared: {names(self.declared) or 'none'}"
        if not self.missing:
            return head
        return f"{head}; {NOT_DECLARED}: {names(self.missing)}"


def coverage_rows(coverage: dict[str, Any]) -> list[CoverageRow]:
    """One :class:`CoverageRow` per dimension for the renderers; dimensions that do not apply
    to the run are left out (:func:`coverage_notes` says which and why)."""
    rows = []
    for dim in DIMENSIONS:
        c = coverage.get(dim)
        if not c or c.get("applies") is False:
            continue
        known = c.get("known")
        frac = (f"{len(c['exercised'])}/{len(known)}" if known is not None
                else f"{len(c['exercised'])}/? (registry not installed)")
        declared = None
        if dim == "tool_versions":  # a results.json before "declared": what was exercised
            declared = list(c.get("declared", c.get("exercised", [])))
        rows.append(CoverageRow(dim.replace("_", " "), frac, list(c.get("missing", [])),
                                declared))
    return rows


def coverage_notes(coverage: dict[str, Any]) -> list[str]:
    """One sentence per distinct scope: what a dimension was measured against, or why it does
    not apply to the run (e.g. "block types, rules: not applicable: ...")."""
    by_scope: dict[str, list[str]] = {}
    for dim in DIMENSIONS:
        c = coverage.get(dim)
        if c and c.get("scope"):
            by_scope.setdefault(str(c["scope"]), []).append(dim.replace("_", " "))
    return [f"{', '.join(dims)}: {scope}" for scope, dims in by_scope.items()]
