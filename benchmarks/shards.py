"""The committed tool matrix (reports/matrix) split over 1, 2 and 4 shards (issue 42).

- the split's balance, from the durations the committed matrix recorded (each column's
  ``runs/<name>/results.json``): each shard's check time (``work``) and what it adds (``setup``:
  a start-up per column run, a build per environment, the estimates of conformance/shards.py),
  the ideal speed-up (N) against the real one (total check time / the largest shard's load), the
  lower bound no split beats, and the largest shard when columns are kept whole. These are the
  shards' workloads, not runs on this machine: they show the balance, not its core count;
- the merge: synthetic shards cut from the committed matrix (its results, split as
  ``--shard K/N`` would), merged for real by ``tooluse matrix merge``'s code; its seconds, and
  whether every cell came out as committed;
- one more shard's cost: a ``tooluse run`` of one tiny check (the suite's start-up and a subject's
  start), and finding a column's environment ready in the cache (when one is there).

``--smoke``: the same computation (it takes well under a second), a merge of 2 shards.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .suite import CLI, ROOT

MATRIX = ROOT / "reports" / "matrix"
CONFIG = ROOT / "matrix.toml"
TINY = ["run", "--editor", "conformance.reference.editor:text_editor_20250728",
        "--check", "editor.view.returns_file_content", "-q"]


def _balance(config: Any, history: dict[tuple[str, str], float], n: int) -> dict[str, Any]:
    from conformance.matrix.shard import matrix_units
    from conformance.shards import lower_bound, split, split_whole

    units = matrix_units(config, [], history)
    loads = split(units, n)
    total = sum(u.cost for u in units)
    largest = max(s.load for s in loads)
    whole = max(s.load for s in split_whole(units, n))
    return {"section": "shards", "shards": n, "cells": len(units),
            "total_work_seconds": round(total, 1),
            "work_seconds": [round(s.work, 1) for s in loads],
            "setup_seconds": [round(s.setup, 1) for s in loads],
            "columns": [len(s.groups) for s in loads],
            "max_load_seconds": round(largest, 1),
            "lower_bound_seconds": round(lower_bound(units, n), 1),
            "whole_columns_max_load_seconds": round(whole, 1),
            "ideal_speedup": n, "real_speedup": round(total / largest, 3)}


def _synthetic_shards(config: Any, history: dict[tuple[str, str], float], n: int,
                      root: Path) -> list[Path]:
    """The committed matrix cut into ``n`` shard directories as ``--shard K/N`` runs write them."""
    from conformance.matrix.shard import SHARD_FORMAT, config_digest, plan_shards, shard_checks
    from conformance.shards import plan_digest

    committed = json.loads((MATRIX / "matrix.json").read_text())
    impls = {i["name"]: i for i in committed["implementations"]}
    units, loads = plan_shards(config, [], history, n)
    entries = {e.name: e for e in config.subjects}
    dirs = []
    for k, load in enumerate(loads, 1):
        d = root / f"shard-{k}"
        columns = []
        for name, checks in shard_checks(load).items():
            impl = impls[name]
            src = json.loads((MATRIX / impl["runs_dir"] / "results.json").read_text())
            src["results"] = [r for r in src["results"] if r["check_id"] in checks]
            out = d / "runs" / Path(impl["runs_dir"]).name
            out.mkdir(parents=True)
            (out / "results.json").write_text(json.dumps(src))
            (out / "run.log").write_text("")
            columns.append({"name": name, "entry": dataclasses.asdict(entries[name]),
                            "checks": checks, "status": impl["status"], "reason": impl["reason"],
                            "python": impl["python"], "version": impl["version"],
                            "suite_version": impl["suite_version"],
                            "duration": sum(r["duration"] for r in src["results"]),
                            "exit_code": impl["exit_code"],
                            "launcher": impl["launcher"].split(), "env": None})
        doc = {"format": "tooluse-matrix-shard", "format_version": SHARD_FORMAT,
               "shard": {"index": k, "count": n}, "config": "matrix.toml",
               "config_sha256": config_digest(config),
               "columns_in_config": [e.name for e in config.subjects], "check_patterns": [],
               "suite": committed["suite"],
               "plan": {"digest": plan_digest(u.key for u in units), "units": len(units),
                        "history": "reports/matrix/matrix.json",
                        "assignment": [[i + 1, [list(u.key) for u in s.units]]
                                       for i, s in enumerate(loads)],
                        "planned_loads": [round(s.load, 3) for s in loads]},
               "generated_at": committed["generated_at"], "duration": load.load,
               "work": load.work, "columns": columns}
        (d / "shard.json").write_text(json.dumps(doc))
        dirs.append(d)
    return dirs


def _merge(config: Any, history: dict[tuple[str, str], float], n: int) -> dict[str, Any]:
    from conformance.matrix import write_matrix
    from conformance.matrix.merge import load_matrix_shard, merge_matrix

    root = Path(tempfile.mkdtemp(prefix="tooluse-bench-shards-"))
    try:
        dirs = _synthetic_shards(config, history, n, root)
        t0 = time.perf_counter()
        shards = [load_matrix_shard(d) for d in dirs]
        doc, _columns = merge_matrix(shards, root / "merged")
        write_matrix(doc, root / "merged")
        seconds = time.perf_counter() - t0
        committed = json.loads((MATRIX / "matrix.json").read_text())
        want = {(r["id"], c): cell["outcome"] for r in committed["checks"]
                for c, cell in r["cells"].items()}
        got = {(r["id"], c): cell["outcome"] for r in doc["checks"]
               for c, cell in r["cells"].items()}
        return {"section": "shards", "merge_shards": n, "merge_seconds": round(seconds, 3),
                "cells": len(got), "cells_equal_committed": got == want}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _extra_shard() -> dict[str, Any]:
    """One more shard's fixed cost: the suite's start-up and one subject's, and a ready
    environment found in the cache."""
    from conformance.matrix.config import load_config
    from conformance.matrix.envs import default_envs_dir, ensure_env, env_dir_of, is_ready

    with tempfile.TemporaryDirectory(prefix="tooluse-bench-tiny-") as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CLI, *TINY, "--out", tmp], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        tiny = time.perf_counter() - t0
    env_seconds = None
    envs = default_envs_dir()
    for e in load_config(CONFIG).subjects:
        where = env_dir_of(e, envs) if e.own_env else None
        if where is not None and is_ready(where):
            t0 = time.perf_counter()
            ensure_env(e, envs)
            env_seconds = round(time.perf_counter() - t0, 3)
            break
    return {"section": "shards", "extra_shard": "tooluse run of one tiny check",
            "run_seconds": round(tiny, 3), "exit": proc.returncode,
            "env_ready_seconds": env_seconds}


def measure(*, smoke: bool = False) -> list[dict[str, Any]]:
    from conformance.matrix.config import load_config
    from conformance.matrix.shard import history_durations

    config = load_config(CONFIG)
    history = history_durations(MATRIX / "matrix.json")
    rows = [_balance(config, history, n) for n in (1, 2, 4)]
    rows += [_merge(config, history, n) for n in ((2,) if smoke else (2, 4))]
    rows.append(_extra_shard())
    return rows
