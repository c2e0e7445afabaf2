"""``tooluse matrix CONFIG.toml --out DIR``: the suite on several implementations, compared.

Every implementation the config names is run and one comparison report written (matrix.json,
matrix.md, matrix.html).

Each subject runs in its own ``tooluse run`` (its own process, environment and output directory
``DIR/runs/<name>/``), several at once. A column that cannot run (its Python is missing, its
environment does not build) says so in the report; the rest of the matrix still runs. Exit 0 when
the matrix is written and every column that could run ran to the end, 1 when a column's run
failed to start or to finish, 2 on a bad config or option. Failures of the implementations do
not change the exit status: they are what the matrix reports.

``--shard K/N`` runs only that shard's cells and writes ``shard.json`` and ``runs/``;
``tooluse matrix merge DIR... --out DIR`` joins the shards (conformance/matrix/shard.py,
merge.py; docs/ci.md "Shards").
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.cli import EXIT_FAIL, EXIT_OK
from conformance.errors import UsageError

if TYPE_CHECKING:
    from conformance.matrix.execute import ColumnRun


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help="run the suite on several implementations and compare them (a matrix)",
        description=__doc__.splitlines()[0],
        epilog="CONFIG is TOML: [matrix] defaults and one [[subject]] per implementation (name, "
               "tool_type, factory or command, and optionally python, requirements, timeout, "
               "startup_timeout, jobs, env, version_of, max_characters, npm, program_requirements, "
               "skip_checks). See docs/matrix.md. "
               "Exit codes: 0 the matrix is written (failures of the implementations are what it "
               "reports), 1 a column's run failed to start or finish, 2 a bad config or option.")
    p.add_argument("config", type=Path, metavar="CONFIG.toml", help="the matrix config")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="write matrix.json, matrix.md, matrix.html (and runs/<name>/) into DIR")
    p.add_argument("--envs", type=Path, default=None, metavar="DIR",
                   help="where the subjects' own environments are built and reused (default "
                        "~/.cache/tooluse/matrix)")
    p.add_argument("--parallel", type=int, default=None, metavar="N",
                   help="columns run at once (default: one per CPU)")
    p.add_argument("--subject", dest="subjects", action="extend", nargs="+", default=[],
                   metavar="NAME", help="only these columns of the config (by name)")
    p.add_argument("--check", dest="checks", action="extend", nargs="+", default=[],
                   metavar="ID", help="only these check ids (globs allowed), in every column")
    p.add_argument("--upgrade", default=None, metavar="COLUMN",
                   help="move COLUMN to the newest release of its package (the pin in CONFIG), "
                        "run it again into DIR/upgrade/COLUMN-VERSION/ with its findings, and "
                        "write what was fixed upstream, is still there, or is new (UPGRADE.md)")
    from conformance.options import add_shard_options

    add_shard_options(p, "a matrix.json (with its runs/)", "cells (column x check)",
                      "tooluse matrix merge")
    return p


def run(args: argparse.Namespace) -> int:
    from conformance import runner
    from conformance.matrix import write_matrix
    from conformance.matrix.config import load_config
    from conformance.matrix.envs import default_envs_dir
    from conformance.matrix.execute import run_matrix
    from conformance.matrix.model import build_matrix

    if args.upgrade is not None:
        from conformance.findings.upgrade import upgrade

        def run_column(config: Path, column: str, out: Path, checks: Sequence[str]) -> int:
            from conformance.cli import main as cli_main

            return cli_main(["matrix", str(config), "--out", str(out), "--subject", column,
                             *(["--check", *checks] if checks else [])])

        upgrade(args.config, args.upgrade, args.out, checks=args.checks, run_column=run_column)
        return EXIT_OK
    config = load_config(args.config)
    if args.subjects:
        names = [s.name for s in config.subjects]
        unknown = [n for n in args.subjects if n not in names]
        if unknown:
            raise UsageError(f"--subject {unknown[0]!r} is not in {args.config}; its subjects: "
                             f"{', '.join(names)}")
        config = replace(config, subjects=tuple(s for s in config.subjects
                                                if s.name in args.subjects))
    if args.parallel is not None and args.parallel < 1:
        raise UsageError(f"--parallel {args.parallel}: give at least 1")
    bad = runner.unmatched_patterns(args.checks)
    if bad:
        raise UsageError(f"--check {' '.join(bad)} matches no check; see `tooluse checks` for "
                         "the ids")
    out = args.out.resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot create the directory ({e.strerror})") from None
    envs = (args.envs or default_envs_dir()).resolve()
    if args.shard is not None:
        return _run_shard(args, config, out, envs)
    if args.history is not None:
        raise UsageError("--history only balances --shard K/N; give --shard too")
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    print(f"tooluse matrix: {len(config.subjects)} implementations from {args.config}; "
          f"environments in {envs}", flush=True)

    columns = _run_forwarding_sigterm(
        lambda: run_matrix(config, out, envs, parallel=args.parallel, checks=args.checks,
                           on_column=_progress, say=lambda line: print(line, flush=True)))
    duration = time.monotonic() - t0
    doc = build_matrix(columns, out_root=out, config=_shown(args.config), generated_at=started,
                       duration=duration, patterns=args.checks)
    paths = write_matrix(doc, out)
    flagged = [r["id"] for r in doc["checks"] if r["review"]]
    print(f"{len(doc['checks'])} checks x {len(columns)} implementations in {duration:.1f}s; "
          f"flagged for review: {', '.join(flagged) or 'none'}")
    print(f"reports: {', '.join(str(p) for p in paths)}")
    return EXIT_FAIL if any(c.status == "error" for c in columns) else EXIT_OK


def _run_shard(args: argparse.Namespace, config: Any, out: Path, envs: Path) -> int:
    """``--shard K/N``: this shard's cells, then ``shard.json`` (conformance/matrix/shard.py)."""
    from conformance.matrix.execute import default_parallel, run_matrix
    from conformance.matrix.shard import (
        SHARD_FILE,
        history_durations,
        plan_shards,
        shard_checks,
        shard_document,
    )
    from conformance.shards import parse_shard

    shard = parse_shard(args.shard)
    history_path = args.history
    if history_path is None and (out / "matrix.json").is_file():
        history_path = out / "matrix.json"
    history: dict[tuple[str, str], float] = {}
    if history_path is not None and not history_path.exists():  # a CI's first run
        print(f"tooluse matrix: --history {history_path} does not exist: the split uses "
              "estimated costs", flush=True)
        history_path = None
    if history_path is not None:
        try:
            history = history_durations(history_path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            if args.history is not None:
                raise UsageError(f"--history {history_path}: not a readable matrix.json ({e})"
                                 ) from None
            history_path = None
    units, loads = plan_shards(config, args.checks, history, shard.count)
    mine = shard_checks(loads[shard.index - 1])
    # every shard runs its columns with the --jobs a single run of the whole matrix gives them
    parallel = args.parallel or default_parallel(len(config.subjects))
    part = replace(config, subjects=tuple(s for s in config.subjects if s.name in mine))
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    print(f"tooluse matrix: shard {shard}: {sum(len(v) for v in mine.values())} of {len(units)} "
          f"cells in {len(part.subjects)} columns (balanced by "
          f"{_shown(history_path) if history_path else 'estimated costs'}); environments in "
          f"{envs}", flush=True)

    columns = _run_forwarding_sigterm(
        lambda: run_matrix(part, out, envs, parallel=parallel, checks_by_column=mine,
                           on_column=_progress, say=lambda line: print(line, flush=True)))
    doc = shard_document(shard=shard, config=config, config_shown=_shown(args.config),
                         patterns=args.checks, units=units, loads=loads, columns=columns,
                         history=_shown(history_path) if history_path else None,
                         generated_at=started, duration=time.monotonic() - t0)
    import json

    (out / SHARD_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"shard {shard} in {doc['duration']:.1f}s; join the shards with `tooluse matrix merge "
          f"DIR... --out DIR`: {out / SHARD_FILE}")
    return EXIT_FAIL if any(c.status == "error" for c in columns) else EXIT_OK


def _shown(path: Path) -> str:
    try:
        rel = os.path.relpath(path.resolve())
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path.resolve())


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - convenience
    from conformance.cli import main as cli_main

    return cli_main(["matrix", *(argv or sys.argv[1:])])


def _progress(col: ColumnRun) -> None:
    """A column's line as it ends: its counts, or why it did not run."""
    s = (col.results or {}).get("summary")
    what = (f"{s['pass']} pass, {s['fail']} fail, {s['skip']} skip, {s['error']} error"
            if s else f"{col.status}: {col.reason}")
    print(f"  {col.entry.name}: {what} ({col.duration:.1f}s)", flush=True)


def _run_forwarding_sigterm(body: Callable[[], list[Any]]) -> list[Any]:
    """Run ``body`` with SIGTERM passed on to the column runs (Ctrl-C reaches them through the
    terminal's process group; a SIGTERM sent to ``tooluse matrix`` alone would not): they stop
    their subjects, then this exits 143 with no matrix written."""
    import signal

    from conformance.matrix.execute import start_columns, stop_columns

    start_columns()

    def on_term(signum: int, _frame: object) -> None:
        stop_columns(signal.SIGTERM)
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (an embedding caller): nothing to forward from
        return body()
    try:
        return body()
    finally:
        signal.signal(signal.SIGTERM, previous)
