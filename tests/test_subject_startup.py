"""Issue 13, the subject-process side: start-up is not tool time (the readiness step), a write to
the throwaway $HOME is a note rather than a fault, a crash is reported with the end of its stderr,
and a lone surrogate in a subject's text never crashes the host or a report writer."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hostile import TOOLUSE

from conformance import runner
from conformance.catalog import Check, Severity
from conformance.results import Outcome
from conformance.session import ToolSession
from conformance.subjects import command_subject, factory_subject
from conformance.subjects.case import CaseSettings
from conformance.subjects.process import readiness_input
from simulator.sources import protocol

HOSTILE = Path(__file__).resolve().parent / "hostile" / "subjects.py"


def hostile(attr: str, family: str = "bash") -> Any:
    return factory_subject(f"{HOSTILE}:{attr}", family=family, name=attr)


def python_command(code: str) -> Any:
    return command_subject(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}", family="bash")


def make_check(func: Any) -> Check:
    """A check that is not registered in the catalog (so the catalog stays as shipped)."""
    return Check(id=f"bash.test.{func.__name__}", family="bash", severity=Severity.MUST,
                 applies_to=frozenset({"bash_20250124"}), source=protocol("4. Bash tool: Semantics"),
                 statement="test check", func=func)


def one_call(s: ToolSession) -> str:
    r = s.call({"command": "echo hi"})
    assert not r.timed_out and not r.is_error, r
    assert s.history == [{"command": "echo hi"}]  # the readiness call is not in the history
    return "answered"


#: A command subject that takes ``{delay}`` s before it reads anything, then answers every line.
SLOW_START = ("import json, sys, time\ntime.sleep({delay})\n"
              "for line in sys.stdin:\n"
              "    print(json.dumps({{'content': 'ok', 'is_error': False}}), flush=True)\n")


# --- the readiness step --------------------------------------------------------------------------

def test_the_readiness_call_per_family_cannot_change_what_a_check_sees(tmp_path: Path) -> None:
    assert readiness_input("bash_20250124", tmp_path) == {"command": "true"}
    assert readiness_input("bash_20241022", tmp_path) == {"command": "true"}
    assert readiness_input("text_editor_20250728", tmp_path) == {"command": "view",
                                                                 "path": str(tmp_path)}
    assert readiness_input("something_else", tmp_path) is None


def test_start_up_is_not_tool_time() -> None:
    # 3 s to start; the check's call has 0.5 s + 2 s grace: it passes only if start-up is apart.
    slow = python_command(SLOW_START.format(delay=3))
    r = runner.run_case(slow, make_check(one_call), timeout=0.5, startup_timeout=30)
    assert r.outcome is Outcome.PASS, r
    assert r.observed == "answered"


def test_a_slow_factory_and_a_slow_first_call_are_start_up_too() -> None:
    for attr in ("slow_factory", "slow_first_call"):
        r = runner.run_case(hostile(attr), make_check(one_call), timeout=0.5, startup_timeout=30)
        assert r.outcome is Outcome.PASS, (attr, r)


def test_not_ready_within_the_start_up_timeout_says_so() -> None:
    slow = python_command(SLOW_START.format(delay=60))
    started = time.monotonic()
    r = runner.run_case(slow, make_check(one_call), timeout=0.5, startup_timeout=1)
    assert r.outcome is Outcome.FAIL
    assert r.message.startswith("the subject did not answer its first call within the 1 s "
                                "start-up timeout"), r.message
    assert r.reproducer == []  # no call of the check was made
    assert time.monotonic() - started < 30


def test_a_subject_dying_at_start_up_is_a_start_up_failure_with_its_stderr() -> None:
    r = runner.run_case(hostile("long_traceback"), make_check(one_call), timeout=2)
    assert r.outcome is Outcome.FAIL
    assert "at start-up" in r.message and "exited while answering (status 5)" in r.message
    assert "the-last-line-of-the-traceback" in r.message, r.message[-600:]


def test_the_case_budget_starts_after_the_readiness_call() -> None:
    # A case budget of 2 s (0.05 s * 40) against a subject that takes 3 s to start.
    slow = python_command(SLOW_START.format(delay=3))
    r = runner.run_case(slow, make_check(one_call), timeout=0.05, startup_timeout=30)
    assert r.outcome is Outcome.PASS, r


# --- stderr of a crash ---------------------------------------------------------------------------

CRASH = ("import sys\nsys.stdin.readline()\n"
         "for i in range(600):\n    print('log line', i, 'x' * 60, file=sys.stderr)\n"
         "raise RuntimeError('the-last-line-of-the-traceback')\n")


def test_a_crash_is_reported_with_the_end_of_its_stderr(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A reader thread that lags behind (a busy machine): the message still waits for the end.
    from conformance.subjects import pipes

    read = pipes.gather_stderr

    def lagging(pipe: Any, chunks: Any) -> None:
        time.sleep(0.5)
        read(pipe, chunks)

    monkeypatch.setattr(pipes, "gather_stderr", lagging)
    s = python_command(CRASH).open(Path(tempfile.mkdtemp(dir=tmp_path)).resolve(),
                                CaseSettings(timeout=2))
    try:
        r = s.call({"command": "x"})
    finally:
        s.close(grace=0.5)
    assert r.is_error and s.faults
    assert "exited while answering (status 1)" in s.faults[0]
    assert s.faults[0].rstrip().endswith("RuntimeError: the-last-line-of-the-traceback"), \
        s.faults[0][-300:]


# --- $HOME ---------------------------------------------------------------------------------------

def test_a_history_file_in_home_is_a_note_not_a_fault() -> None:
    def restarts(s: ToolSession) -> None:
        assert not s.call({"command": "cd /"}).is_error
        assert not s.call({"restart": True}).is_error

    r = runner.run_case(hostile("history_in_home"), make_check(restarts), timeout=3)
    assert r.outcome is Outcome.PASS, r
    assert "throwaway $HOME: .bash_history" in r.observed, r


# --- text a subject returns with lone surrogates ------------------------------------------------

def test_lone_surrogates_reach_the_check_as_text() -> None:
    seen: list[str] = []

    def reads(s: ToolSession) -> str:
        r = s.call({"command": "echo hi"})
        seen.append(r.text)
        return f"got {r.text}"

    r = runner.run_case(hostile("odd_text"), make_check(reads), timeout=3)
    assert seen == ["hi\n\udc80"]
    assert r.outcome is Outcome.PASS, r
    assert r.observed == "got hi\n\\udc80"  # written as its escape in the result
    json.dumps(r.to_json(), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("forkserver", ["1", "0"])
def test_lone_surrogates_do_not_crash_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               forkserver: str) -> None:
    monkeypatch.setenv("TOOLUSE_FORKSERVER", forkserver)
    s = hostile("odd_text").open(Path(tempfile.mkdtemp(dir=tmp_path)).resolve(),
                               CaseSettings(timeout=3))
    try:
        r = s.call({"command": "echo hi"})
        assert r.text == "hi\n\udc80" and not r.is_error
        assert s.call({"command": "echo again"}).text == "again\n\udc80"
    finally:
        s.close(grace=0.5)
    assert s.faults == []


@pytest.mark.slow
def test_a_run_on_surrogate_text_writes_its_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [*TOOLUSE, "run", "--bash", f"{HOSTILE}:odd_text", "--editor", f"{HOSTILE}:odd_editor",
         "--check", "bash.session.*", "editor.view.*", "editor.str_replace.*", "--out", str(out)],
        capture_output=True, timeout=300, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert results and not [r for r in results if r["outcome"] == "error"], results


def test_a_trickle_of_stderr_lines_is_read_in_batches_and_kept_whole() -> None:
    """A subject printing short lines to stderr without end (read in batches: the reader pauses
    after a small read; one wake-up per line took a CPU of the harness, issue 21) loses nothing:
    every line arrives, in order, up to the end of file."""
    import io
    import os
    import threading
    from collections import deque

    from conformance.subjects.pipes import gather_stderr

    read_fd, write_fd = os.pipe()
    lines = [f"line {i}\n".encode() for i in range(60)]

    def trickle() -> None:
        with os.fdopen(write_fd, "wb", buffering=0) as w:
            for line in lines:
                w.write(line)
                time.sleep(0.002)  # slower than an unpaced reader, faster than a paced one

    writer = threading.Thread(target=trickle)
    writer.start()
    chunks: deque[bytes] = deque(maxlen=64)
    gather_stderr(io.BufferedReader(io.FileIO(read_fd, "rb")), chunks)  # returns at EOF
    writer.join()
    assert b"".join(chunks) == b"".join(lines)


def test_the_stderr_reader_pauses_after_a_small_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batching itself, without a clock: after a read smaller than STDERR_BATCH the reader
    sleeps STDERR_PAUSE (so that what comes next gathers in the pipe); after a large one it
    reads again at once. (How many reads a real trickle takes depends on the machine's load.)"""
    import threading
    import types
    from collections import deque

    from conformance.subjects import pipes

    reads = [b"a\n", b"x" * pipes.STDERR_BATCH, b"b\n", b""]

    class Pipe:
        closed = False

        def read1(self, n: int) -> bytes:
            return reads.pop(0)

        def close(self) -> None:
            self.closed = True

    slept: list[tuple[int, float]] = []
    real = pipes.time

    def sleep(seconds: float) -> None:  # recorded for this thread; others sleep as before
        if threading.get_ident() == me:
            slept.append((me, seconds))
        else:
            real.sleep(seconds)

    me = threading.get_ident()
    monkeypatch.setattr(pipes, "time", types.SimpleNamespace(sleep=sleep, monotonic=real.monotonic))
    chunks: deque[bytes] = deque(maxlen=64)
    pipe = Pipe()
    pipes.gather_stderr(pipe, chunks)
    assert list(chunks) == [b"a\n", b"x" * pipes.STDERR_BATCH, b"b\n"]
    assert slept == [(me, pipes.STDERR_PAUSE)] * 2 and pipe.closed
