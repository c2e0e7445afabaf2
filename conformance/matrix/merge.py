"""``tooluse matrix merge DIR... --out DIR``: shards of one ``tooluse matrix --shard K/N`` joined
into the ``matrix.json``, ``matrix.md``, ``matrix.html`` and ``runs/`` one run writes.

A column whose cells ran on several shards is joined into one ``runs/<name>/`` (its
``results.json`` as one ``tooluse run`` would write it, the reports rendered from it, the shards'
``run.log`` one after the other) and one :class:`~conformance.matrix.execute.ColumnRun`; the
matrix is then built as a single run builds it (:func:`~conformance.matrix.model.build_matrix`).

Refused, naming the shards: another config (its content hashed), another suite version, other
``--check``/``--subject`` selections or another split (``--history``), a shard missing or given
twice, a cell two shards ran or none did, and a column whose environment differs between shards
(its Python, its package version, the suite's version in it).

:func:`critical_path` says which shard was slowest, and what a split by the durations the shards
just recorded would have put on the largest shard.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from conformance.errors import UsageError
from conformance.matrix.config import SubjectEntry, dir_name
from conformance.matrix.execute import ColumnRun
from conformance.matrix.shard import SHARD_FILE, column_checks
from conformance.shards import (
    Key,
    Setup,
    ShardLoad,
    Unit,
    coverage,
    first_few,
    shard_set_problem,
    split,
)


class MatrixMergeRefused(UsageError):
    """The shards cannot be joined into one matrix: which, and why."""


@dataclass(frozen=True)
class MatrixShard:
    where: Path
    doc: dict[str, Any]

    @property
    def index(self) -> int:
        return int(self.doc["shard"]["index"])

    @property
    def count(self) -> int:
        return int(self.doc["shard"]["count"])

    @property
    def label(self) -> str:
        return f"{self.where} (shard {self.index}/{self.count})"

    def cells(self) -> list[Key]:
        return [(c["name"], cid) for c in self.doc["columns"] for cid in c["checks"]]


def load_matrix_shard(where: Path) -> MatrixShard:
    path = where / SHARD_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MatrixMergeRefused(f"{where}: no {SHARD_FILE}; give the --out directory of a "
                                 "`tooluse matrix --shard K/N` run") from None
    except (OSError, ValueError) as e:
        raise MatrixMergeRefused(f"{path}: cannot be read ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != "tooluse-matrix-shard":
        raise MatrixMergeRefused(f"{path}: not a matrix shard record")
    return MatrixShard(where, doc)


def _same(shards: Sequence[MatrixShard], key: str, what: str, fix: str) -> None:
    first = shards[0]
    for s in shards[1:]:
        if s.doc[key] != first.doc[key]:
            raise MatrixMergeRefused(f"{s.label} and {first.label} {what}; {fix}")


def check_matrix_shards(shards: Sequence[MatrixShard]) -> list[Key]:
    """Raise :class:`MatrixMergeRefused` unless ``shards`` are every shard of one split, each
    once, covering every cell once, with one environment per column; returns the plan."""
    if not shards:
        raise MatrixMergeRefused("give the shards' directories")
    first = shards[0]
    _same(shards, "config_sha256", f"were run from different configs ({first.doc['config']} "
          "differs)", "run every shard from the same config file")
    for s in shards[1:]:
        if s.doc["suite"]["version"] != first.doc["suite"]["version"]:
            raise MatrixMergeRefused(
                f"{s.label} was run by tooluse-conformance {s.doc['suite']['version']}, "
                f"{first.label} by {first.doc['suite']['version']}; run every shard with one "
                "version of the suite")
    _same(shards, "check_patterns", "ran different --check selections",
          "give every shard the same options")
    _same(shards, "columns_in_config", "ran different columns (--subject)",
          "give every shard the same options")
    for s in shards[1:]:
        if s.doc["plan"]["assignment"] != first.doc["plan"]["assignment"]:
            raise MatrixMergeRefused(
                f"{s.label} and {first.label} split the matrix differently (N, or the --history "
                f"that balanced them: {s.doc['plan']['history']} and "
                f"{first.doc['plan']['history']}); give every shard the same --history")
    problem = shard_set_problem([(s.index, s.label, str(s.where)) for s in shards], first.count)
    if problem:
        raise MatrixMergeRefused(problem)
    plan = [(str(a), str(b)) for _i, units in first.doc["plan"]["assignment"]
            for a, b in units]
    got = coverage([(s.label, s.cells()) for s in sorted(shards, key=lambda s: s.index)], plan)
    if got.overlap:
        (a, b), one, other = got.overlap
        raise MatrixMergeRefused(f"overlapping shards: the cell {a} × {b} is in {one} and in "
                                 f"{other}")
    if got.missing:
        raise MatrixMergeRefused("missing cells: no shard ran "
                                 + first_few([f"{a} × {b}" for a, b in got.missing]))
    _same_environments(shards)
    return plan


#: What a column's environment is known by in each shard (its fingerprint).
ENV_FINGERPRINT = ("python", "version", "suite_version")


def _same_environments(shards: Sequence[MatrixShard]) -> None:
    seen: dict[str, tuple[MatrixShard, tuple[Any, ...]]] = {}
    for s in sorted(shards, key=lambda s: s.index):
        for c in s.doc["columns"]:
            if c["status"] != "ran":
                continue
            fp = tuple(c.get(k) for k in ENV_FINGERPRINT)
            other = seen.setdefault(c["name"], (s, fp))
            if other[1] != fp:
                diff = ", ".join(f"{k} {a} / {b}" for k, a, b in
                                 zip(ENV_FINGERPRINT, other[1], fp, strict=True) if a != b)
                raise MatrixMergeRefused(f"the column {c['name']} ran in different environments "
                                         f"in {other[0].label} and {s.label} ({diff}); pin them "
                                         "alike, or rebuild the environments")


def _entry(record: dict[str, Any]) -> SubjectEntry:
    kw = {f.name: record[f.name] for f in fields(SubjectEntry) if f.name in record}
    for k, v in kw.items():
        if isinstance(v, list):
            kw[k] = tuple(v)
    return SubjectEntry(**kw)


def _argv(argv: Sequence[str], entry: SubjectEntry, checks: Sequence[str],
          patterns: Sequence[str], out: Path) -> list[str]:
    """A piece's ``tooluse run`` argv as the whole column's run would have it: the piece's
    run (:class:`~conformance.run.Run`, read by ``tooluse run``'s parser) with the column's
    checks and ``out``."""
    from dataclasses import replace

    from conformance.run import Run

    run = Run.from_argv(list(argv))
    chosen = tuple(checks) if entry.skip_checks else tuple(patterns)
    return ["run", *replace(run, checks=chosen, out=out).words()]


def merge_column(name: str, pieces: Sequence[tuple[MatrixShard, dict[str, Any]]],
                 patterns: Sequence[str], out: Path) -> ColumnRun:
    """One column of its pieces; writes ``out/runs/<name>/``."""
    from conformance.reports import ResultsFileError, load_results, write_reports
    from conformance.reports.merge import join_documents
    from conformance.reports.results_file import dumps, write_atomic

    entry = _entry(pieces[0][1]["entry"])
    checks = column_checks(entry, patterns)
    out_dir = out / "runs" / dir_name(name)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    docs = []
    logs = []
    for s, rec in pieces:
        piece_dir = s.where / "runs" / dir_name(name)
        try:
            logs.append(f"--- shard {s.index}/{s.count} ({s.where}) ---\n"
                        + (piece_dir / "run.log").read_text(errors="replace"))
        except OSError:
            pass
        if rec["status"] == "ran":
            try:
                docs.append(load_results(piece_dir / "results.json").doc)
            except ResultsFileError as e:
                raise MatrixMergeRefused(f"{s.label}: column {name}: {e}") from None
    (out_dir / "run.log").write_text("\n".join(logs))
    bad = next((rec for _s, rec in pieces if rec["status"] != "ran"), None)
    ran = next((rec for _s, rec in pieces if rec["status"] == "ran"), pieces[0][1])
    exits = [rec["exit_code"] for _s, rec in pieces if rec["exit_code"] is not None]
    col = ColumnRun(entry, bad["status"] if bad else "ran", bad["reason"] if bad else "",
                    python=ran["python"], version=ran["version"],
                    suite_version=ran["suite_version"],
                    duration=sum(float(rec["duration"]) for _s, rec in pieces),
                    exit_code=max(exits) if exits else None, out_dir=out_dir,
                    launcher=list(ran["launcher"]))
    if docs:
        argv = _argv(docs[0]["run"].get("argv") or [], entry, checks, patterns, out_dir)
        col.results = join_documents(docs, [(name, c) for c in checks], argv)
        write_atomic(out_dir / "results.json", dumps(col.results))
        write_reports(col.results, out_dir)
    return col


def merge_matrix(shards: Sequence[MatrixShard], out: Path) -> tuple[dict[str, Any],
                                                                    list[ColumnRun]]:
    """The matrix document of ``shards`` (and its columns), with ``out/runs/`` written."""
    from conformance.matrix.execute import clean_runs
    from conformance.matrix.model import build_matrix

    check_matrix_shards(shards)
    shards = sorted(shards, key=lambda s: s.index)
    first = shards[0].doc
    patterns = list(first["check_patterns"])
    columns = []
    for name in first["columns_in_config"]:
        pieces = [(s, rec) for s in shards for rec in s.doc["columns"] if rec["name"] == name]
        if pieces:
            columns.append(merge_column(name, pieces, patterns, out))
    clean_runs(out, {dir_name(c.entry.name) for c in columns})
    doc = build_matrix(columns, out_root=out, config=first["config"],
                       generated_at=min(s.doc["generated_at"] for s in shards),
                       duration=max(float(s.doc["duration"]) for s in shards),
                       patterns=patterns)
    return doc, columns


def critical_path(shards: Sequence[MatrixShard], columns: Sequence[ColumnRun],
                  setup: Setup | None = None) -> list[str]:
    """Lines: each shard's wall time and check time, the slowest, and what a split by the
    durations the shards recorded (``--history`` the merged matrix.json) would save."""
    setup = setup or Setup()
    shards = sorted(shards, key=lambda s: s.index)
    n = shards[0].count
    cost: dict[Key, float] = {}
    env: dict[str, str | None] = {}
    from conformance.matrix.shard import env_group

    for c in columns:
        env[c.entry.name] = env_group(c.entry)
        for r in (c.results or {}).get("results", []):
            cost[(c.entry.name, r["check_id"])] = float(r.get("duration") or 0.0)
    lines = []
    actual: list[ShardLoad] = []
    for s in shards:
        load = ShardLoad()
        for rec in s.doc["columns"]:
            piece = [Unit((rec["name"], cid), cost.get((rec["name"], cid), 0.0), rec["name"],
                          env.get(rec["name"])) for cid in rec["checks"]]
            if piece:
                load.take(piece, setup)
        actual.append(load)
        lines.append(f"  shard {s.index}/{n}: {float(s.doc['duration']):.1f}s wall, "
                     f"{load.work:.1f}s of checks in {len(s.doc['columns'])} column runs")
    slowest = max(shards, key=lambda s: (float(s.doc["duration"]), -s.index))
    units = [Unit(k, v, k[0], env.get(k[0])) for k, v in sorted(cost.items())]
    total = sum(u.cost for u in units)
    now = max(s.load for s in actual)
    better = max(s.load for s in split(units, n, setup)) if units else 0.0
    lines.insert(0, f"critical path: shard {slowest.index}/{n} "
                    f"({float(slowest.doc['duration']):.1f}s wall); ideal share "
                    f"{total / n:.1f}s of checks per shard")
    if now > 0 and better < now:
        lines.append(f"  a split by these recorded times (--history <this merge>/matrix.json) "
                     f"puts at most {better:.1f}s on one shard instead of {now:.1f}s (checks, "
                     f"start-ups, builds): {100 * (now - better) / now:.0f}% off the critical "
                     "path")
    else:
        lines.append("  this split is as good as a split by these recorded times gives "
                     f"({now:.1f}s on the largest shard)")
    return lines
