"""Issue 9: ``tooluse run`` interrupted by SIGINT or SIGTERM in the middle of a run (a subprocess
and a slow subject): the subjects are stopped (nothing of the run survives, checked in ``/proc``),
``results.json`` is left valid and marked incomplete, and the exit code says which signal
(130 for SIGINT, 143 for SIGTERM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from hostile import TOOLUSE, sigint_as_at_a_terminal, wait_no_survivors

from conformance.reports import load_results
from conformance.subjects.isolation import processes_supported

SLOW = Path(__file__).resolve().parent / "hostile" / "subjects.py"


def results_so_far(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["results"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.skipif(not processes_supported(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("sig,code,name", [(signal.SIGINT, 130, "SIGINT"),
                                           (signal.SIGTERM, 143, "SIGTERM")])
def test_an_interrupted_run_stops_subjects_and_leaves_partial_results(
        tmp_path: Path, sig: int, code: int, name: str) -> None:
    out = tmp_path / "out"
    marker = uuid.uuid4().hex
    env = {**os.environ, "TOOLUSE_TEST_RUN": marker, "TOOLUSE_TEST_MARK": str(tmp_path / "marks")}
    # The reference's cases come first (quick results), then the slow subject's (~15 s).
    proc = subprocess.Popen([*TOOLUSE, "run", "--bash", f"{SLOW}:slow", "--bash", "reference-bash",
                             "--jobs", "1",
                             "--check", "bash.session.*_persists", "bash.output.stdout_and_stderr",
                             "bash.restart.confirms", "bash.errors.failure_flagged",
                             "--out", str(out)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=sigint_as_at_a_terminal)
    try:
        deadline = time.monotonic() + 90
        while results_so_far(out / "results.json") < 1 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        assert results_so_far(out / "results.json") >= 1, "no result within 90 s"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, stderr.decode()[-2000:]
    err = stderr.decode()
    assert f"interrupted by {name}" in err and "Traceback" not in err, err[-2000:]
    assert str(out / "results.json") in err
    run = load_results(out / "results.json")  # validated against the results schema
    assert run.complete is False
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["interrupted"] is True and doc["run"]["finished_at"]
    assert 1 <= len(doc["results"]) < doc["run"]["planned"]
    # Results cut short by the interrupt are not reported as the subject's failures.
    assert all(r["outcome"] == "pass" for r in doc["results"]), doc["results"]
    assert wait_no_survivors(f"TOOLUSE_TEST_RUN={marker}") == []
    assert list(tmp_path.glob("tooluse-*")) == []


def test_the_exit_codes_are_documented() -> None:
    help_text = subprocess.run([*TOOLUSE, "run", "--help"], capture_output=True, text=True).stdout
    assert "--memory-limit" in help_text
    assert "130" in help_text and "143" in help_text
