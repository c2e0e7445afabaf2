"""Isolation: hostile subjects (hang, exit, abort, endless output, leaks) are stopped, reported
and cleaned up, and the run goes on."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG
from conformance.results import Outcome
from conformance.subjects import command_subject, factory_subject
from conformance.subjects.case import CaseSettings
from conformance.subjects.isolation import (
    Deadline,
    alive,
    descendants,
    grace_for,
    processes_supported,
    still_alive,
)
from conformance.subjects.launch import Confinement

PY = Path(__file__).resolve().parent / "subjects" / "py_subjects.py"
needs_proc = pytest.mark.skipif(not processes_supported(), reason="needs /proc (Linux)")


def subject(attr: str):
    return factory_subject(f"{PY}:{attr}", family="bash", name=attr)


@pytest.fixture
def unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test reads pids the subject wrote: under the sandbox they are its own PID namespace's
    (the sandboxed equivalents are in tests/test_sandbox.py)."""
    monkeypatch.setenv("TOOLUSE_SANDBOX", "off")


@pytest.fixture
def session_of(tmp_path: Path):
    opened = []

    def start(sub, timeout: float = 1.0):
        s = sub.open(Path(tempfile.mkdtemp(dir=tmp_path)).resolve(), CaseSettings(confinement=Confinement.from_environ(os.environ), timeout=timeout))
        opened.append(s)
        return s

    yield start
    for s in opened:
        s.close(grace=0.5)


def test_a_hanging_call_is_cut_at_the_deadline_and_the_subject_killed(session_of) -> None:
    s = session_of(subject("hangs"))
    assert s.call({"command": "fine"}).text == "ok"
    r = s.call({"command": "hang"}, deadline=0.5)
    assert r.timed_out and r.is_error
    assert s.faults and "no answer within 0.5s" in s.faults[0]
    assert s.proc.poll() is not None  # killed, not left running
    again = s.call({"command": "fine"})  # answered at once, as a fault
    assert again.is_error and not again.timed_out and "not running" in again.text


@needs_proc
def test_a_hang_kills_what_the_subject_started_in_other_sessions_too(session_of, unsandboxed) -> None:
    s = session_of(subject("hangs_with_child"))
    assert s.call({"command": "x"}, deadline=1.0).timed_out
    pid = int((s.workdir / "child.pid").read_text())
    deadline = time.monotonic() + 2
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)


@pytest.mark.parametrize("attr, words", [("exits", "exited while answering (status 3)"),
                                         ("aborts", "exited while answering"),
                                         ("system_exit", "exited while answering (status 4)")])
def test_a_subject_that_dies_is_a_fault(session_of, attr: str, words: str) -> None:
    s = session_of(subject(attr))
    r = s.call({"command": "x"})
    assert r.is_error and not r.timed_out
    assert s.faults and words in s.faults[0]


def test_endless_printing_does_not_corrupt_or_block_the_harness(session_of) -> None:
    s = session_of(subject("endless_print"))
    r = s.call({"command": "x"}, deadline=0.5)
    assert r.timed_out
    assert "spam" in s.stderr_tail  # prints went to stderr, drained in bounded memory


def test_endless_non_json_output_from_a_command(session_of) -> None:
    s = session_of(command_subject("yes", family="bash"))
    r = s.call({"command": "x"})
    assert r.is_error and "not JSON" in s.faults[0]


@needs_proc
def test_leaked_processes_are_reported_and_killed(session_of, unsandboxed) -> None:
    s = session_of(subject("leaks"))
    pid = int(s.call({"command": "x"}).text.split("=")[1])
    assert alive(pid)
    s.close()
    assert s.leaked is not None and [p.pid for p in s.leaked] == [pid]
    assert "sleep" in s.leaked[0].cmdline
    assert not still_alive(s.leaked, wait=2.0)


def test_a_factory_that_hangs_is_a_start_error(tmp_path: Path) -> None:
    from conformance.subjects import SubjectStartError

    with pytest.raises(SubjectStartError, match="did not start within 0.5s"):
        subject("hangs_at_start").open(tmp_path.resolve(),
                                       CaseSettings(confinement=Confinement.from_environ(os.environ), timeout=1.0, startup_timeout=0.5))


def test_a_subject_that_does_not_exit_on_close_is_killed(session_of) -> None:
    s = session_of(subject("hangs_on_close"))
    assert s.call({}).text == "ok"
    s.close(grace=0.3)
    assert s.proc.poll() is not None
    assert any("did not exit" in f for f in s.faults)


@needs_proc
def test_command_subject_process_group_is_killed(session_of, unsandboxed) -> None:
    # The command starts a background sleep in its own group and never exits on EOF.
    code = "sleep 3600 & echo $! > pid; while read -r l; do echo '{\"content\": \"ok\"}'; done; sleep 3600"
    s = session_of(command_subject(f"bash -c {shlex.quote(code)}", family="bash"))
    assert s.call({"command": "x"}).text == "ok"
    pid = int((s.workdir / "pid").read_text())
    s.close(grace=0.3)
    deadline = time.monotonic() + 2
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)


@pytest.mark.slow
def test_hostile_subjects_fail_their_checks_and_the_run_goes_on() -> None:
    hostile = [subject("hangs_always"), subject("exits"), subject("endless_print")]
    reference = factory_subject("conformance.reference.bash:factory", family="bash",
                                name="reference")
    before = {p.pid for p in descendants(os.getpid())} if processes_supported() else set()
    summary = runner.run([*hostile, reference], checks=["bash.session.cwd_persists",
                                                       "bash.input.invalid_rejected"],
                         timeout=1.0, startup_timeout=3.0)
    by = {(r.subject, r.check_id): r for r in summary.results}
    assert len(by) == 8
    for h in ("hangs_always", "exits", "endless_print"):
        for chk in ("bash.session.cwd_persists", "bash.input.invalid_rejected"):
            # none of them ever got through start-up: their cases never ran (issue 36)
            assert by[(h, chk)].outcome is Outcome.NOT_RUN, by[(h, chk)]
    # Each fails its first call, the runner's readiness call: the message says it was start-up.
    assert by[("exits", "bash.input.invalid_rejected")].message.startswith(
        "the subject failed its first call, at start-up")
    assert "exited while answering (status 3)" in by[("exits", "bash.input.invalid_rejected")].message
    assert "start-up timeout" in by[("hangs_always", "bash.input.invalid_rejected")].message
    assert all(by[("reference", c)].outcome is Outcome.PASS
               for c in ("bash.session.cwd_persists", "bash.input.invalid_rejected"))
    assert summary.exit_code == 1
    if processes_supported():
        left = [p for p in descendants(os.getpid()) if p.pid not in before]
        assert left == []


# --- helpers --------------------------------------------------------------------------------------

@needs_proc
def test_descendants_and_still_alive() -> None:
    p = subprocess.Popen([sys.executable, "-c", "import subprocess, time; "
                          "subprocess.Popen(['sleep', '30']); time.sleep(30)"])
    try:
        deadline = time.monotonic() + 5
        kids: list = []
        while time.monotonic() < deadline and len(kids) < 1:
            kids = [k for k in descendants(p.pid) if "sleep" in k.cmdline]
            time.sleep(0.02)
        assert kids, "the grandchild should be found below the child"
        # the same processes (pid and start time); their state is as it is now (a sleep just
        # started can be read running, then sleeping: comparing whole records was flaky)
        assert [(k.pid, k.start) for k in still_alive(kids)] == [(k.pid, k.start) for k in kids]
    finally:
        for k in descendants(p.pid):
            os.kill(k.pid, 9)
        p.kill()
        p.wait()
    assert still_alive(kids, wait=2.0) == []


#: A subreaper (as the fork server is) whose child double-forks a daemon and exits: the daemon
#: is re-parented to the subreaper. It prints the daemon's pid, then waits.
SUBREAPER = """
import ctypes, os, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    os.write(w, str(pid).encode())
    os._exit(0)
print(os.read(r, 32).decode(), flush=True)
time.sleep(60)
"""


@needs_proc
def test_the_subtree_of_a_subreaper_holds_the_daemons_below_it() -> None:
    """What a forked subject's close reads instead of the whole process table (issue 21): the
    fork server's tree, where a double-forked daemon of a subject lands."""
    from conformance.subjects.isolation import process_table, subtree_table

    p = subprocess.Popen([sys.executable, "-c", SUBREAPER], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        daemon = int(p.stdout.readline())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the daemon's parent exits: re-parented to p
            mine = subtree_table(p.pid)
            if mine is None:
                pytest.skip("a kernel without /proc/PID/task/TID/children")
            if daemon in mine and mine[daemon].ppid == p.pid:
                break
            time.sleep(0.02)
        assert daemon in mine and mine[daemon].ppid == p.pid, mine
        assert set(mine) == {p.pid, daemon}  # the subreaper and its tree, nothing else
        whole = process_table()
        assert {q.pid for q in descendants(p.pid, whole)} == {daemon}
        assert (mine[daemon].pid, mine[daemon].start) == (whole[daemon].pid, whole[daemon].start)
    finally:
        for q in descendants(p.pid):
            os.kill(q.pid, 9)
        p.kill()
        p.wait()
    assert subtree_table(p.pid) == {}  # gone: an empty tree, not an error


def test_deadline_and_grace() -> None:
    assert Deadline(None).remaining() is None and not Deadline(None).expired
    assert Deadline(0).expired
    assert 0 < (Deadline(10).remaining() or 0) <= 10
    assert grace_for(1) == 2.0 and grace_for(10) == 5.0


def test_catalog_is_loaded_by_the_runner() -> None:
    assert "bash.timeout.returns_error_in_time" in CATALOG
