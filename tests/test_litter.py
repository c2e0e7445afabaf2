"""Issue 26, point 7: the session-wide litter check (tests/conftest.py) fails the session on
anything left in its temporary directory, whatever its name, and names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nested_pytest_args

ROOT = Path(__file__).resolve().parent.parent
PLANT = ROOT / "tests" / "data" / "litter" / "plant.py"


def _session(tmp_path: Path, plant: str) -> subprocess.CompletedProcess[str]:
    """A pytest session under the suite's conftest (it is in PLANT's parents) running PLANT."""
    env = {**os.environ, "TOOLUSE_PLANT": plant}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0",
                           *nested_pytest_args(tmp_path), str(PLANT)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["pytest-of-planted", "tmpplanted"])
def test_a_leftover_fails_the_session_by_name(tmp_path: Path, name: str) -> None:
    proc = _session(tmp_path, name)
    out = proc.stdout + proc.stderr
    assert "1 passed" in out, out[-2000:]
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out[-2000:]
    assert f"litter: the test run left {name} in its temporary directory" in out, out[-2000:]


def test_a_clean_session_passes(tmp_path: Path) -> None:
    proc = _session(tmp_path, "")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    assert "litter" not in proc.stdout + proc.stderr
