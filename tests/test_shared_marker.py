"""Issue 14, point 6: every test that needs ``../shared`` carries the ``shared`` marker (the
conftest marks each test using the ``shared_dir`` fixture, directly or through another fixture),
so ``-m 'not shared'`` runs exactly the tests a fresh clone can run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nested_pytest_args

ROOT = Path(__file__).resolve().parent.parent


#: Loaded into the collecting pytest: writes the node ids ``-m`` deselected, one a line.
PROBE = """
import os


def pytest_deselected(items):
    with open(os.environ["SHARED_MARKER_DESELECTED"], "a") as f:
        f.writelines(item.nodeid + "\\n" for item in items)
"""


def collected_and_deselected(tmp_path: Path, *args: str) -> tuple[set[str], set[str]]:
    """One ``--collect-only`` run (issue 21: was two, one per ``-m``): what it selected and what
    its ``-m`` deselected."""
    (tmp_path / "shared_marker_probe.py").write_text(PROBE)
    out = tmp_path / "deselected.txt"
    env = {**os.environ, "SHARED_MARKER_DESELECTED": str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                       os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "pytest", *nested_pytest_args(tmp_path),
                           "-p", "shared_marker_probe", "--collect-only", "-q", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode in (0, 5), proc.stdout[-2000:] + proc.stderr[-2000:]
    deselected = set(out.read_text().splitlines()) if out.exists() else set()
    return {line for line in proc.stdout.splitlines() if "::" in line}, deselected


@pytest.mark.slow  # collects in a subprocess
def test_tests_using_shared_dir_are_marked_shared(tmp_path: Path) -> None:
    files = ["tests/test_bash_checks.py", "tests/test_validation_seeds.py"]
    rest, shared = collected_and_deselected(tmp_path, "-m", "not shared", *files)
    # Directly through the fixture, and through a fixture that uses it (``examples``).
    assert "tests/test_bash_checks.py::test_check_sources_are_headings_of_the_seed" in shared
    assert any(t.startswith("tests/test_validation_seeds.py::") for t in shared)
    # A test that does not read ../shared is not marked.
    assert rest and not rest & shared
    assert not any("headings_of_the_seed" in t for t in rest)
