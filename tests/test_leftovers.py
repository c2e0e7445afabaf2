"""Issue 14, point 4: a run leaves nothing behind.

No ``.hypothesis/`` in the working directory of ``tooluse run``, no temporary directory left on
any path (a subject that cannot start, or whose factory fails, included), reports written with
the user's umask; and a subject that exited before its first call is reported with the end of
its stderr (the cause of the flaky ``test_a_command_subject_is_memory_bounded_too``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import TOOLUSE

from conformance import runner
from conformance.catalog import Check, Severity
from conformance.reports.results_file import write_atomic
from conformance.session import ToolSession
from conformance.subjects import command_subject, factory_subject
from conformance.subjects.launch import Confinement
from conformance.subjects.process import ProcessSession, SubjectNotReady, SubjectStartError
from simulator.sources import protocol


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def one_call(s: ToolSession) -> None:
    s.call({"command": "echo hi"})


CHECK = Check(id="bash.test.leftovers", family="bash", severity=Severity.MUST,
              applies_to=frozenset({"bash_20250124"}), source=protocol("4. Bash tool: Semantics"),
              statement="test check", func=one_call)


# --- reports and the umask ----------------------------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077, 0o002])
def test_reports_are_written_with_the_users_umask(tmp_path: Path, umask: None, mask: int) -> None:
    os.umask(mask)
    path = tmp_path / "out" / "report.md"
    write_atomic(path, "# report\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    write_atomic(path, "# again\n")  # replacing keeps the mode the umask gives
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert path.read_text() == "# again\n"
    assert [p.name for p in path.parent.iterdir()] == ["report.md"]  # no temporary file left


# --- temporary directories on every path --------------------------------------------------------

def test_a_command_that_cannot_be_started_leaves_no_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_MEMORY_LIMIT", "0")  # no /bin/sh wrapper: exec fails in Popen
    workdir = tmp_path / "case"
    workdir.mkdir()
    with pytest.raises(SubjectStartError, match="cannot start"):
        ProcessSession(confinement=Confinement.from_environ(os.environ), argv=[str(tmp_path / "no-such-program")], workdir=workdir,
                       tool_type="bash_20250124", timeout=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case"]


def test_a_factory_that_fails_leaves_no_temporary_directory(tmp_path: Path) -> None:
    module = tmp_path / "failing_factory.py"
    module.write_text("def factory(workdir, timeout=3.0):\n"
                      "    raise RuntimeError('the factory refuses (planted by the test)')\n")
    root = tmp_path / "run"
    root.mkdir()
    subject = factory_subject(f"{module}:factory", family="bash", name="failing")
    r = runner.run_case(subject, CHECK, confinement=Confinement.from_environ(os.environ), timeout=1, tmp_root=root, startup_timeout=10)
    assert r.outcome.value == "fail" and "did not start" in r.message, r
    assert "refuses" in r.message, r
    assert list(root.iterdir()) == []  # neither the case's directory nor its tooluse-home-*


def test_a_subject_that_is_never_ready_leaves_no_temporary_directory(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    subject = command_subject(f"{sys.executable} -c 'import sys; sys.exit(4)'", family="bash")
    r = runner.run_case(subject, CHECK, confinement=Confinement.from_environ(os.environ), timeout=1, tmp_root=root, startup_timeout=5)
    assert r.outcome.value == "fail", r
    assert list(root.iterdir()) == []


# --- the flaky memory test: its cause -----------------------------------------------------------

def test_a_subject_that_exited_before_its_first_call_is_reported_with_its_stderr(
        tmp_path: Path) -> None:
    """A subject that dies at start-up (a ``MemoryError`` under the memory limit) may be gone
    before the readiness call is written. That call used to say only "is not running (status
    1)", without the stderr that names the error: the memory test failed whenever the subject
    lost that race. Here the race is lost every time (the call is made after it exited)."""
    code = "import sys; sys.stderr.write('MemoryError: planted\\n'); sys.exit(1)"
    s = ProcessSession(confinement=Confinement.from_environ(os.environ), argv=[sys.executable, "-c", code], workdir=tmp_path, tool_type="bash_20250124",
                       timeout=1)
    s.proc.wait(timeout=10)
    with pytest.raises(SubjectNotReady) as e:
        s.wait_ready(5)
    assert "is not running (status 1)" in str(e.value)
    assert "MemoryError: planted" in str(e.value)
    s.close()


# --- a whole run from the command line ----------------------------------------------------------

@pytest.mark.slow
def test_tooluse_run_leaves_nothing_in_the_working_directory_or_tmpdir(tmp_path: Path) -> None:
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["TMPDIR"] = str(tmp)
    # Property checks (hypothesis), a subject that cannot start, reports in the working directory.
    argv = [*TOOLUSE, "run", "--bash", "reference-bash",
            "--bash-cmd", f"{sys.executable} -c 'import sys; sys.exit(4)'",
            "--check", "bash.output.*", "--startup-timeout", "5", "--out", "out"]
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=300,
                          preexec_fn=lambda: os.umask(0o027))
    # The command subject never starts: one line, exit 2 (the run and its reports still done).
    assert proc.returncode == 2, proc.stderr.decode()[-2000:]
    assert b"did not start, so no check ran" in proc.stderr
    results = json.loads((cwd / "out" / "results.json").read_text())["results"]
    assert {r["subject"] for r in results if r["outcome"] == "pass"} == {"reference-bash"}
    assert sorted(p.name for p in cwd.iterdir()) == ["out"]  # no .hypothesis/
    assert list(tmp.iterdir()) == []  # run, case, home and hypothesis directories removed
    for report in (cwd / "out").iterdir():
        assert stat.S_IMODE(report.stat().st_mode) == 0o640, report
