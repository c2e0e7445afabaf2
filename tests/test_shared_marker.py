"""Issue 14, point 6: every test that needs ``../shared`` carries the ``shared`` marker (the
conftest marks each test using the ``shared_dir`` fixture, directly or through another fixture),
so ``-m 'not shared'`` runs exactly the tests a fresh clone can run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nested_pytest_args

ROOT = Path(__file__).resolve().parent.parent


def collected(tmp_path: Path, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", *nested_pytest_args(tmp_path),
                           "--collect-only", "-q", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode in (0, 5), proc.stdout[-2000:] + proc.stderr[-2000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}


@pytest.mark.slow  # collects in subprocesses
def test_tests_using_shared_dir_are_marked_shared(tmp_path: Path) -> None:
    files = ["tests/test_bash_checks.py", "tests/test_validation_seeds.py"]
    shared = collected(tmp_path, "-m", "shared", *files)
    # Directly through the fixture, and through a fixture that uses it (``examples``).
    assert "tests/test_bash_checks.py::test_check_sources_are_headings_of_the_seed" in shared
    assert any(t.startswith("tests/test_validation_seeds.py::") for t in shared)
    # A test that does not read ../shared is not marked.
    rest = collected(tmp_path, "-m", "not shared", *files)
    assert rest and not rest & shared
    assert not any("headings_of_the_seed" in t for t in rest)
