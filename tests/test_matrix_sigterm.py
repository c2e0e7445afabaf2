"""SIGTERM sent to `tooluse matrix` alone (not its process group, as a CI runner's timeout or
`kill PID` does) reaches the column runs: they stop their subjects, nothing of the run is left,
and the command exits 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hostile import TOOLUSE

#: A JSON-lines bash subject that never answers (each column run waits on it).
SILENT = "import sys, time\nfor _ in sys.stdin:\n    time.sleep(3600)\n"


def _alive(marker: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            found.append(int(d.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_sigterm_reaches_the_column_runs(tmp_path: Path) -> None:
    marker = f"silent_{os.getpid()}_{int(time.time())}.py"
    (tmp_path / marker).write_text(SILENT)
    cfg = tmp_path / "matrix.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [matrix]
        timeout = 30.0
        startup_timeout = 60.0

        [[subject]]
        name = "silent-a"
        tool_type = "bash_20250124"
        command = "{sys.executable} {marker}"

        [[subject]]
        name = "silent-b"
        tool_type = "bash_20250124"
        command = "{sys.executable} {marker} b"
        """))
    proc = subprocess.Popen([*TOOLUSE, "matrix", str(cfg),
                             "--out", str(tmp_path / "out"), "--envs", str(tmp_path / "envs"),
                             "--check", "bash.session.cwd_persists"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # a group of its own: only it gets the signal
    try:
        deadline = time.monotonic() + 60
        while len(_alive(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        if len(_alive(marker)) < 2:
            proc.kill()
            pytest.fail("the subjects never started: " + proc.communicate()[0].decode(errors="replace"))
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 143, out.decode(errors="replace")
        deadline = time.monotonic() + 15
        while _alive(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(marker) == [], "a subject of a column run outlived tooluse matrix"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _alive(marker):
            os.kill(pid, signal.SIGKILL)


def test_no_column_run_starts_once_the_matrix_is_stopping(tmp_path: Path) -> None:
    """The race the test above lost once under load: SIGTERM came while a column was about to
    start; that column then ran its whole course unsignalled and the matrix waited for it. Once
    stop_columns ran, a column is not started at all."""
    from conformance.matrix.config import parse_config
    from conformance.matrix.execute import run_column, start_columns, stop_columns

    marker = f"silent_never_{os.getpid()}_{int(time.time())}.py"
    (tmp_path / marker).write_text(SILENT)
    config = parse_config({"subject": [{"name": "silent", "tool_type": "bash_20250124",
                                        "command": f"{sys.executable} {marker}"}]},
                          tmp_path / "matrix.toml")
    try:
        assert stop_columns() == 0
        col = run_column(config.subjects[0], config, tmp_path / "out", tmp_path / "envs",
                         jobs=None, checks=["bash.session.cwd_persists"])
    finally:
        start_columns()
    assert col.status == "error" and "not started" in (col.reason or "")
    assert _alive(marker) == [] and col.exit_code is None
