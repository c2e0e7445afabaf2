"""``tooluse findings --verify``: run every ``repro.py`` (a ``repro.mjs`` with ``node`` and the
environment's npm packages) in its column's pinned environment.

The environment is the one ``tooluse matrix`` ran the column in (its ``launcher`` in
``matrix.json``: ``~/.cache/tooluse/matrix/<env>/bin/tooluse``, so ``<env>/bin/python``; the
suite's own interpreter for a column without one). A column whose environment is not on this
machine is recorded as not verified, never rebuilt here. Exit 1 means the defect is still there;
0 marks the finding "no longer reproduces at <version>"; 2 the reproducer could not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conformance.findings.write import FINDING_FILE, INDEX, load_records, render_index

__all__ = ["python_of", "verify"]

#: The reproducer's temporary directories, as its output names them.
_TEMP = re.compile(r"/[^\s'\"]*/repro-[A-Za-z0-9_]+(?P<work>/work|/memories)?")


def placeholders(line: str) -> str:
    """``line`` with the reproducer's temporary directories as ``$TOOLUSE_WORKDIR`` (its working
    directory) and ``$REPRO_BASE`` (the folder around it), so a record does not change with them."""
    return _TEMP.sub(lambda m: "$TOOLUSE_WORKDIR" if m.group("work") else "$REPRO_BASE", line)


#: Seconds one reproducer may run (a hang is caught inside it, per step).
REPRO_LIMIT = 600.0


def python_of(impl: dict[str, Any], config: Path | None = None) -> Path | None:
    """The interpreter of the column's pinned environment (None: not on this machine): the one
    its run used (``launcher``), else where ``config``'s entry puts it today (an environment
    built again since, under a new key); a loop program with ``program_requirements`` runs in
    that environment's ``program/`` venv."""
    words = str(impl.get("launcher") or "tooluse").split()
    launcher = next((w for w in words if "=" not in w), "tooluse")
    if launcher == "tooluse":
        return Path(sys.executable)
    env_dir: Path | None = Path(os.path.expanduser(launcher)).parent.parent
    if not (Path(os.path.expanduser(launcher)).parent / "python").exists() \
            and config is not None and config.is_file():
        from conformance.matrix.config import load_config
        from conformance.matrix.envs import default_envs_dir, env_dir_of

        entry = next((s for s in load_config(config).subjects if s.name == impl.get("name")),
                     None)
        env_dir = env_dir_of(entry, default_envs_dir()) if entry is not None else None
    if (env_dir is None or not (env_dir / "bin" / "python").exists()) and impl.get("version"):
        env_dir = _env_with(str(impl.get("version_of") or ""), str(impl["version"]))
    if env_dir is None:
        return None
    program = env_dir / "program" / "bin" / "python"
    python = program if impl.get("program_requirements") or program.exists() else \
        env_dir / "bin" / "python"
    return python if python.exists() else None


def _env_with(package: str, version: str) -> Path | None:
    """An environment of the cache with ``package==version`` installed (in it, or in its
    ``program/`` venv): one built by another checkout of the suite has another key."""
    from conformance.matrix.envs import default_envs_dir

    name = re.sub(r"[-.]+", "_", package).lower()
    for dist in sorted(default_envs_dir().glob(f"*/**/site-packages/{name}-{version}.dist-info")):
        env = dist.parents[3]
        env = env.parent if env.name == "program" else env
        if (env / "bin" / "python").exists():
            return env
    return None


def node_modules_of(python: Path) -> Path | None:
    """The npm packages of the environment ``python`` belongs to (``node/node_modules``; a
    ``repro.mjs`` finds them through ``TOOLUSE_NODE_MODULES``), None when it has none."""
    from conformance.matrix.envs import node_dir

    env_dir = python.parents[1]
    env_dir = env_dir.parent if env_dir.name == "program" else env_dir
    modules = node_dir(env_dir) / "node_modules"
    return modules if modules.is_dir() else None


def suite_tooluse() -> str:
    """The suite's own ``tooluse`` (a loop reproducer starts ``tooluse serve`` with it)."""
    mine = Path(sys.executable).parent / "tooluse"
    return str(mine) if mine.exists() else (shutil.which("tooluse") or "tooluse")


def verify(out: Path, impls: dict[str, dict[str, Any]], *, title: str,
           columns: Sequence[str] = (), config: Path | None = None,
           progress: Callable[[str], None] = lambda _: None) -> list[dict[str, Any]]:
    """Run the reproducers under ``out`` (of ``columns``, or all); record their exit codes in each
    ``finding.json`` and rewrite the index."""
    records = load_records(out)
    for rec in records:
        if not rec.get("repro") or (columns and rec["column"] not in columns):
            continue
        impl = impls.get(rec["column"], {})
        python = python_of(impl, config)
        folder = out / rec["column"] / rec["check_id"]
        entry: dict[str, Any] = {"version": rec.get("version"), "exit_code": None}
        command: list[str] | None = [str(python), rec["repro"]] if python is not None else None
        env = dict(os.environ, **{str(k): str(v) for k, v in (impl.get("env") or {}).items()})
        if python is not None and str(rec["repro"]).endswith(".mjs"):
            # a Node framework's reproducer: node, with the environment's npm packages
            modules, node = node_modules_of(python), shutil.which("node")
            command = [node, rec["repro"]] if modules is not None and node else None
            env["TOOLUSE_NODE_MODULES"] = str(modules)
        if command is None:
            entry["note"] = ("node is not on PATH" if python is not None and not shutil.which(
                "node") else "the column's environment is not built on this machine")
        else:
            env.setdefault("TOOLUSE", suite_tooluse())
            try:
                done = subprocess.run(command, cwd=folder, env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=REPRO_LIMIT, check=False)
                entry["exit_code"] = done.returncode
                tail = done.stdout.decode(errors="replace").strip().splitlines()[-3:]
                entry["output"] = [placeholders(line) for line in tail]
                if done.returncode not in (0, 1):
                    entry["note"] = (done.stdout + done.stderr).decode(
                        errors="replace").strip().splitlines()[-1:] or ["(no output)"]
                    entry["note"] = placeholders(entry["note"][0][:300])
            except subprocess.TimeoutExpired:
                entry["note"] = f"the reproducer ran past {REPRO_LIMIT:.0f} s"
        rec["exit_codes"] = [e for e in rec.get("exit_codes") or []
                             if e.get("version") != entry["version"]] + [entry]
        (folder / FINDING_FILE).write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
        progress(f"{rec['column']} / {rec['check_id']}: exit {entry['exit_code']}"
                 + (f" ({entry['note']})" if entry.get("note") else ""))
    (out / INDEX).write_text(render_index(records, title))
    return records
