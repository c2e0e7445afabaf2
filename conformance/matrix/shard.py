"""``tooluse matrix CONFIG --shard K/N``: this shard's cells, and the partial result it writes.

The units are the matrix's cells (column × check that applies to it and that the column does not
skip); a column's cells on one shard run as one ``tooluse run`` there, and a column in an
environment of its own costs that shard the environment's build (once for all the columns that
share it). :func:`conformance.shards.split` decides; why cells and not whole columns: a shard's
extra cost for a column is a start-up and an environment build, about a minute, while the two
largest columns of the committed tool matrix hold 20 and 18 minutes of check time (each more than
a quarter of the whole), so keeping columns whole leaves the largest of 4 shards 22 % over its
share (1271 s against 1046 s; cut: 1162 s, ``nox -s bench``'s shards section).

A shard writes ``shard.json`` (:data:`SHARD_FILE`) and its columns' ``runs/<name>/`` into its
``--out`` directory; ``tooluse matrix merge`` (:mod:`conformance.matrix.merge`) joins shards
into the matrix one run writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.matrix.config import MatrixConfig, SubjectEntry
from conformance.matrix.execute import ColumnRun
from conformance.matrix.model import matching, row_checks
from conformance.shards import (
    Key,
    Setup,
    Shard,
    ShardLoad,
    Unit,
    durations_of,
    estimated_cost,
    plan_digest,
    split,
)

SHARD_FILE = "shard.json"
SHARD_FORMAT = 1


def column_checks(entry: SubjectEntry, patterns: Sequence[str] = ()) -> list[str]:
    """The check ids of ``entry``'s cells that run (the column's ``skip_checks`` left out)."""
    return [c.id for c in row_checks({entry.tool_type}, patterns)
            if c.applies(entry.tool_type) and not (entry.skip_checks
                                                    and matching(c.id, entry.skip_checks))]


def env_group(entry: SubjectEntry) -> str | None:
    """What identifies the environment a column needs (None: the suite's own); the same on
    every machine (the environment's directory name also hashes local paths)."""
    if not entry.own_env:
        return None
    doc = [entry.python, list(entry.requirements), list(entry.npm),
           list(entry.program_requirements)]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:12]


def config_digest(config: MatrixConfig) -> str:
    """The config file's content, hashed (its path may differ between CI runners)."""
    return hashlib.sha256(config.path.read_bytes()).hexdigest()[:16]


def history_durations(matrix_json: Path) -> dict[Key, float]:
    """(column, check id) -> seconds, recorded by the matrix at ``matrix_json``: each column's
    ``runs/<name>/results.json`` holds its cells' durations (``matrix.json`` only the column's).
    A column whose results are gone counts its recorded duration spread over its cells."""
    doc = json.loads(matrix_json.read_text(encoding="utf-8"))
    out: dict[Key, float] = {}
    for impl in doc.get("implementations", []):
        name, runs = impl.get("name"), impl.get("runs_dir")
        found: dict[Key, float] = {}
        if isinstance(runs, str):
            try:
                results = json.loads((matrix_json.parent / runs / "results.json").read_text())
                found = {(name, c): d for (_s, c), d in
                         durations_of(results.get("results", [])).items()}
            except (OSError, ValueError):
                found = {}
        if not found and impl.get("summary") and impl.get("duration"):
            cells = [r["id"] for r in doc.get("checks", [])
                     if r["cells"].get(name, {}).get("outcome") not in (None, "n-a",
                                                                       "unavailable")]
            for c in cells:
                found[(name, c)] = float(impl["duration"]) / max(1, len(cells))
        out.update(found)
    return out


def matrix_units(config: MatrixConfig, patterns: Sequence[str],
                 history: Mapping[Key, float]) -> list[Unit]:
    import conformance.checks  # noqa: F401  (registers every check)
    from conformance.catalog import CATALOG

    units = []
    for e in config.subjects:
        env = env_group(e)
        for cid in column_checks(e, patterns):
            cost = history.get((e.name, cid))
            units.append(Unit((e.name, cid), cost if cost is not None
                              else estimated_cost(CATALOG[cid]), e.name, env))
    return units


def plan_shards(config: MatrixConfig, patterns: Sequence[str], history: Mapping[Key, float],
                n: int, setup: Setup | None = None) -> tuple[list[Unit], list[ShardLoad]]:
    units = matrix_units(config, patterns, history)
    return units, split(units, n, setup)


def shard_checks(load: ShardLoad) -> dict[str, list[str]]:
    """column name -> the check ids this shard runs in it."""
    out: dict[str, list[str]] = {}
    for u in load.units:
        out.setdefault(u.key[0], []).append(u.key[1])
    return out


def column_record(col: ColumnRun, checks: Sequence[str]) -> dict[str, Any]:
    """A column's piece as the shard ran it (what the merge needs to rebuild the column)."""
    import dataclasses

    return {"name": col.entry.name, "entry": dataclasses.asdict(col.entry),
            "checks": list(checks), "status": col.status,
            "reason": col.reason, "python": col.python, "version": col.version,
            "suite_version": col.suite_version, "duration": round(col.duration, 3),
            "exit_code": col.exit_code, "launcher": list(col.launcher),
            "env": col.env_dir.name if col.env_dir is not None else None,
            "work": round(sum(_durations(col)), 3)}


def shard_document(*, shard: Shard, config: MatrixConfig, config_shown: str,
                   patterns: Sequence[str], units: Sequence[Unit], loads: Sequence[ShardLoad],
                   columns: Sequence[ColumnRun], history: str | None, generated_at: str,
                   duration: float) -> dict[str, Any]:
    from conformance.reports.results_file import suite_metadata

    mine = loads[shard.index - 1]
    checks = shard_checks(mine)
    suite = suite_metadata()
    return {
        "format": "tooluse-matrix-shard", "format_version": SHARD_FORMAT,
        "shard": shard.to_json(),
        "config": config_shown, "config_sha256": config_digest(config),
        "columns_in_config": [e.name for e in config.subjects],
        "check_patterns": list(patterns),
        "suite": {k: suite[k] for k in ("name", "version", "python_version")},
        "plan": {"digest": plan_digest(u.key for u in units), "units": len(units),
                 "history": history,
                 "assignment": [[i + 1, [list(u.key) for u in s.units]]
                                for i, s in enumerate(loads)],
                 "planned_loads": [round(s.load, 3) for s in loads]},
        "generated_at": generated_at, "duration": round(duration, 3),
        "work": round(sum(x for c in columns for x in _durations(c)), 3),
        "columns": [column_record(c, checks.get(c.entry.name, [])) for c in columns],
    }


def _durations(col: ColumnRun) -> list[float]:
    return [float(r.get("duration") or 0.0) for r in (col.results or {}).get("results", [])]
