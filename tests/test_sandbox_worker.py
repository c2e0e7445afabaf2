"""A ``--worker-cmd`` worker runs like a tool subject: the allow-listed environment (no
credential of the user's, only the environment key it is given), a private HOME, and under the
sandbox a read-only root (its working directory writable) while it still reaches the simulation
on loopback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.subjects import sandbox
from conformance.subjects.launch import Confinement
from conformance.workers.run import WorkerRun

PROBE = ('env > "$TOOLUSE_WORKDIR/env.txt"; '
         'touch "$OUTSIDE/written" 2>/dev/null; echo $? > "$TOOLUSE_WORKDIR/outside.rc"; '
         'touch "$HOME/ok" && echo home-ok > "$TOOLUSE_WORKDIR/home.txt"')


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> tuple[dict[str, str], Path]:
    monkeypatch.setenv("TOOLUSE_SANDBOX", mode)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-not-a-real-key")
    monkeypatch.setenv("DEPLOY_TOKEN", "t0ken")
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("OUTSIDE", str(outside))
    monkeypatch.setenv("TOOLUSE_PASS_ENV", "OUTSIDE")
    workdir = tmp_path / "case"
    workdir.mkdir()
    run = WorkerRun(scenarios=[], workdir=workdir, tool_timeout=3.0,
                    confinement=Confinement.from_environ(os.environ))
    proc, home = run._start(PROBE, {})
    try:
        assert proc.wait(60) == 0, proc.stderr.read() if proc.stderr else b""
        seen = dict(line.split("=", 1) for line in
                    (workdir / "env.txt").read_text().splitlines() if "=" in line)
        assert (workdir / "home.txt").read_text().strip() == "home-ok"
        assert seen["HOME"] == str(home)
    finally:
        if proc.stderr is not None:
            proc.stderr.close()
        if home is not None:
            import shutil
            shutil.rmtree(home, ignore_errors=True)
    return seen, outside


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_a_worker_command_gets_no_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             mode: str) -> None:
    seen, _ = _run(tmp_path, monkeypatch, mode)
    assert "ANTHROPIC_API_KEY" not in seen and "DEPLOY_TOKEN" not in seen
    assert seen["TOOLUSE_TOOL_TIMEOUT"] == "3"


def test_a_sandboxed_worker_command_cannot_write_outside_its_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_SANDBOX", "auto")
    if not sandbox.status("auto").active:
        pytest.skip(f"no sandbox here: {sandbox.status('auto').reason}")
    _, outside = _run(tmp_path, monkeypatch, "auto")
    assert not (outside / "written").exists()
    assert (tmp_path / "case" / "outside.rc").read_text().strip() != "0"


def test_without_the_sandbox_the_same_write_lands(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _, outside = _run(tmp_path, monkeypatch, "off")
    assert (outside / "written").exists()  # the probe is able to write: the test above means it
