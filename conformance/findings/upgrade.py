"""``tooluse matrix CONFIG --out DIR --upgrade COLUMN``: move a column to the newest release of its
package and say what changed.

1. the newest release: ``pip index versions PACKAGE`` (the column's ``version_of``) or
   ``npm view PACKAGE version`` (an ``npm`` column: its last package);
2. the pin is moved in the config, in the column's own ``[[subject]]`` block only
   (``PACKAGE==OLD`` -> ``PACKAGE==NEW``, ``PACKAGE@OLD`` -> ``PACKAGE@NEW``); it is put back when
   the column does not run;
3. the column alone is run again into ``DIR/upgrade/<column>-<version>/`` (its environment is
   built there and then, as ``tooluse matrix`` builds any), and its findings are written and
   verified there;
4. the findings at the old version (``DIR/findings/<column>/``) are compared by check: **fixed
   upstream** (failed before, not now; the old reproducer is run in the new environment, and
   exit 0 confirms it), **still there**, **new**; written as ``UPGRADE.md`` and
   ``upgrade.json`` beside the new run.

The committed ``DIR/matrix.json`` is not rewritten: the new column's run is a matrix of its own,
for whoever regenerates or merges the matrix.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["compare", "newest_version", "render_upgrade", "rewrite_pin", "upgrade"]

Runner = Callable[[list[str]], str]


def _run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines() or ["(nothing)"]
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {said[-1][-300:]}")
    return done.stdout


def newest_version(package: str, *, npm: bool = False, run: Runner = _run) -> str:
    """The newest release of ``package`` on PyPI (``pip index versions``) or npm."""
    if npm:
        return run(["npm", "view", package, "version"]).strip().splitlines()[-1].strip()
    import importlib.util
    import shutil

    # this interpreter's pip, else the pip on PATH (a venv made by uv has none of its own)
    pip = ([sys.executable, "-m", "pip"] if importlib.util.find_spec("pip") is not None
           else [shutil.which("pip") or "pip"])
    out = run([*pip, "index", "versions", package])
    m = re.search(r"^\S+ \(([^)]+)\)", out, re.MULTILINE)
    if m is None:
        raise RuntimeError(f"pip index versions {package}: no version in {out[:200]!r}")
    return m.group(1)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def current_pin(entry: Any, package: str) -> str | None:
    """The version ``entry`` pins ``package`` at (``==`` in its requirements, ``@`` in npm)."""
    for req in (*entry.requirements, *entry.program_requirements):
        m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^\s;,]+)$", req)
        if m and _norm(m.group(1)) == _norm(package):
            return m.group(3)
    for spec in entry.npm:
        name, _, version = spec.rpartition("@")
        if name == package:
            return version
    return None


def rewrite_pin(text: str, column: str, package: str, old: str, new: str) -> tuple[str, int]:
    """``text`` (a matrix config) with ``package``'s pin moved from ``old`` to ``new`` in the
    ``[[subject]]`` block named ``column`` only; and how many pins moved."""
    blocks = re.split(r"(?m)^(?=\[\[subject\]\])", text)
    named = re.compile(rf'(?m)^name\s*=\s*"{re.escape(column)}"\s*$')
    pin = re.compile(rf'(?i)(["\s]{re.escape(package)}(?:\[[^\]]*\])?)(==|@){re.escape(old)}(?=")')
    moved = 0
    for i, block in enumerate(blocks):
        if block.startswith("[[subject]]") and named.search(block):
            blocks[i], moved = pin.subn(lambda m: f"{m.group(1)}{m.group(2)}{new}", block)
    return "".join(blocks), moved


def compare(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Findings by check: fixed upstream, still there, new."""
    before, after = {r["check_id"] for r in old}, {r["check_id"] for r in new}
    return {"fixed upstream": sorted(before - after), "still there": sorted(before & after),
            "new": sorted(after - before)}


def render_upgrade(doc: dict[str, Any]) -> str:
    lines = [f"# {doc['column']}: {doc['package']} {doc['old']} -> {doc['new']}", "",
             f"Run again alone at {doc['new']} (`{doc['matrix']}`); the findings before are "
             f"those of `{doc['before']}`.", ""]
    confirmed = doc.get("old_repro_exit_codes") or {}
    for what, checks in doc["diff"].items():
        lines.append(f"## {what} ({len(checks)})")
        lines.append("")
        for check in checks:
            note = ""
            if what == "fixed upstream" and check in confirmed:
                code = confirmed[check]
                note = (" (the old reproducer exits 0 at the new version)" if code == 0 else
                        f" (the old reproducer exits {code} at the new version)")
            lines.append(f"- `{check}`{note}")
        if not checks:
            lines.append("- none")
        lines.append("")
    return "\n".join(lines)


def upgrade(config_path: Path, column: str, out: Path, *,
            lookup: Callable[[str, bool], str] | None = None,
            run_column: Callable[[Path, str, Path, Sequence[str]], int],
            checks: Sequence[str] = (), say: Callable[[str], None] = print) -> dict[str, Any] | None:
    """Move ``column`` to its package's newest release (the module docstring); None when it is
    at the newest already. ``run_column(config, column, matrix_dir, checks)`` runs the column
    alone (``tooluse matrix CONFIG --subject COLUMN --out MATRIX_DIR``: the command passes it)."""
    from conformance.errors import UsageError
    from conformance.findings import generate
    from conformance.findings.verify import python_of, verify
    from conformance.findings.write import load_records
    from conformance.matrix.config import load_config

    config = load_config(config_path)
    entry = next((s for s in config.subjects if s.name == column), None)
    if entry is None:
        raise UsageError(f"--upgrade {column!r} is not a column of {config_path}")
    npm = bool(entry.npm)
    package = entry.npm[-1].rpartition("@")[0] if npm else entry.version_of
    if not package:
        raise UsageError(f"--upgrade {column}: the column names no package (version_of or npm)")
    old = current_pin(entry, package)
    if old is None:
        raise UsageError(f"--upgrade {column}: {config_path} pins no version of {package} for it")
    try:
        new = (lookup or (lambda p, n: newest_version(p, npm=n)))(package, npm)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"--upgrade {column}: cannot find the newest release of {package} "
                         f"(the registry its client uses): {e}") from None
    if new == old:
        say(f"tooluse matrix --upgrade: {column} is at the newest {package} ({old})")
        return None
    text = config_path.read_text()
    moved, count = rewrite_pin(text, column, package, old, new)
    if count == 0:
        raise UsageError(f"--upgrade {column}: the pin {package}=={old} is not written in the "
                         f"column's block of {config_path}")
    config_path.write_text(moved)
    matrix_dir = out / "upgrade" / f"{column}-{new}"
    say(f"tooluse matrix --upgrade: {column}: {package} {old} -> {new}; running it into "
        f"{matrix_dir}")
    if not checks and (out / "matrix.json").exists():  # the checks the matrix was made with
        checks = json.loads((out / "matrix.json").read_text()).get("check_patterns") or []
    code = run_column(config_path, column, matrix_dir, checks)
    doc_path = matrix_dir / "matrix.json"
    if not doc_path.exists():
        config_path.write_text(text)  # the column did not run: the pin goes back
        raise UsageError(f"--upgrade {column}: the column did not run at {new} (exit {code}); "
                         f"{config_path} left at {old}")
    mdoc = json.loads(doc_path.read_text())
    impls = {i["name"]: i for i in mdoc["implementations"]}
    findings_dir, _ = generate(matrix_dir)
    new_records = verify(findings_dir, impls, title=f"{column} at {new}")
    before = out / "findings"
    old_records = [r for r in load_records(before) if r["column"] == column] \
        if before.exists() else []
    diff = compare(old_records, new_records)
    # a fix upstream is confirmed by the old reproducer, run at the new version
    python = python_of(impls.get(column, {}))
    confirmed: dict[str, int | None] = {}
    for rec in old_records:
        if rec["check_id"] in diff["fixed upstream"] and rec.get("repro") and python:
            folder = before / column / rec["check_id"]
            done = subprocess.run([str(python), rec["repro"]], cwd=folder, capture_output=True,
                                  timeout=600, check=False, stdin=subprocess.DEVNULL)
            confirmed[rec["check_id"]] = done.returncode
    doc = {"column": column, "package": package, "old": old, "new": new,
           "matrix": matrix_dir.as_posix(), "before": before.as_posix(), "diff": diff,
           "old_repro_exit_codes": confirmed, "run_exit_code": code}
    (matrix_dir / "upgrade.json").write_text(json.dumps(doc, indent=1) + "\n")
    (matrix_dir / "UPGRADE.md").write_text(render_upgrade(doc))
    say(f"  fixed upstream {len(diff['fixed upstream'])}, still there "
        f"{len(diff['still there'])}, new {len(diff['new'])}: {matrix_dir / 'UPGRADE.md'}")
    return doc

