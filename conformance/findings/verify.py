"""``tooluse findings --verify``: run every ``repro.py`` in its column's pinned environment.

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


def python_of(impl: dict[str, Any]) -> Path | None:
    """The interpreter of the column's pinned environment (None: not on this machine)."""
    words = str(impl.get("launcher") or "tooluse").split()
    launcher = next((w for w in words if "=" not in w), "tooluse")
    if launcher == "tooluse":
        return Path(sys.executable)
    python = Path(os.path.expanduser(launcher)).parent / "python"
    return python if python.exists() else None


def verify(out: Path, impls: dict[str, dict[str, Any]], *, title: str,
           columns: Sequence[str] = (),
           progress: Callable[[str], None] = lambda _: None) -> list[dict[str, Any]]:
    """Run the reproducers under ``out`` (of ``columns``, or all); record their exit codes in each
    ``finding.json`` and rewrite the index."""
    records = load_records(out)
    for rec in records:
        if not rec.get("repro") or (columns and rec["column"] not in columns):
            continue
        impl = impls.get(rec["column"], {})
        python = python_of(impl)
        folder = out / rec["column"] / rec["check_id"]
        entry: dict[str, Any] = {"version": rec.get("version"), "exit_code": None}
        if python is None:
            entry["note"] = "the column's environment is not built on this machine"
        else:
            env = dict(os.environ, **{str(k): str(v) for k, v in (impl.get("env") or {}).items()})
            try:
                done = subprocess.run([str(python), rec["repro"]], cwd=folder, env=env,
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
