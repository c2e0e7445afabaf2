"""Issue 9: hostile subjects through ``tooluse run`` (a real subprocess, as a user runs it).

Subjects that hang, crash, call ``os._exit``, print without end, leave daemons (double fork and
``setsid``, exec'd or not) or take all the memory they can are each reported under a failing check
(one that writes into its throwaway HOME is noted, not failed); the run finishes, no process of the run survives (checked
in ``/proc``), and the user's files outside the working directory are untouched (subjects get a
throwaway HOME and TMPDIR; canary files in the real ones are compared byte for byte). That first
run is with ``--sandbox off``; the escape attempts of issue 17 (writing into the checkout and
HOME, a network connection, reading a planted credential file, a fork bomb, a daemon) run with
the sandbox on and off, and the table of docs/reliability.md is asserted here.

Single-subject behaviour (deadlines, group kills, leak detection of a plain child) is covered in
``tests/test_isolation.py``; this file adds what needs the whole run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hostile import TOOLUSE, wait_no_survivors

from conformance.subjects import sandbox
from conformance.subjects.isolation import PROC, processes_supported

HOSTILE = Path(__file__).resolve().parent / "hostile" / "subjects.py"
pytestmark = pytest.mark.skipif(not processes_supported(), reason="needs /proc (Linux)")
CHECKS = ["bash.session.cwd_persists", "bash.session.no_processes_left_after_close"]




@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("hostile")
    home, tmp, out = base / "real-home", base / "real-tmp", base / "out"
    for d in (home, tmp):
        d.mkdir()
        (d / "canary").write_bytes(b"the user's file\n")
    marker = f"TOOLUSE_TEST_RUN={uuid.uuid4().hex}"
    mark = base / "marks.txt"
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "TOOLUSE_TEST_MARK": str(mark),
           marker.split("=")[0]: marker.split("=")[1]}
    names = ["slow", "daemon_exec", "daemon_fork", "writes_outside", "hogs_memory",
             "prints_forever", "exits_hard", "crashes"]
    # The sandbox off: what the plain isolation does (the sandboxed runs are below).
    argv = [*TOOLUSE, "run", "--sandbox", "off", "--timeout", "1", "--startup-timeout", "5",
            "--memory-limit", "256M", "--out", str(out), "--bash", "reference-bash"]
    for n in names:
        argv += ["--bash", f"{HOSTILE}:{n}"]
    # An out-of-process subject is limited too (8 GiB asked, 256 MiB allowed).
    argv += ["--bash-cmd", "python3 -c 'x = bytearray(1 << 33); input()'"]
    for c in CHECKS:
        argv += ["--check", c]
    started = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=180, cwd=base)
    return {"proc": proc, "home": home, "tmp": tmp, "out": out, "marker": marker,
            "mark": mark, "seconds": time.monotonic() - started,
            "results": {(r["subject"], r["check_id"]): r for r in
                        json.loads((out / "results.json").read_text())["results"]}}


def result(run: dict[str, Any], subject: str, check: str) -> dict[str, Any]:
    return run["results"][(f"subjects.py:{subject}", check)]


@pytest.mark.slow(25)  # the first to use hostile_run: it pays for the run
def test_the_run_finishes_with_a_verdict(hostile_run: dict[str, Any]) -> None:
    proc = hostile_run["proc"]
    # Four never answer their first call (they hang, exit or crash on it, or run out of memory
    # in a command): each is one line on stderr and the run exits 2 (issue 26); the run itself
    # finished and its reports hold every verdict. hogs_memory answers its calls with the
    # MemoryError it raises (an exception is an error result), so it started; only where the
    # memory limit takes its host down at the readiness call is it a start failure too: both
    # are accepted (test_each_hostile_subject_fails_the_check_it_runs holds its verdict).
    assert proc.returncode == 2, proc.stderr.decode()[-2000:]
    lines = [ln for ln in proc.stderr.decode().splitlines() if "did not start" in ln]
    named = sorted(ln.split()[4] for ln in lines)
    assert [n for n in named if n != "subjects.py:hogs_memory"] == [
        "cmd:python3", "subjects.py:crashes", "subjects.py:exits_hard",
        "subjects.py:prints_forever"], lines
    assert not any(ln.startswith("Traceback") for ln in proc.stderr.decode().splitlines())
    doc = json.loads((hostile_run["out"] / "results.json").read_text())
    assert doc["run"]["complete"] is True
    assert len(hostile_run["results"]) == 10 * len(CHECKS)
    for check in CHECKS:
        assert hostile_run["results"][("reference-bash", check)]["outcome"] == "pass"


@pytest.mark.parametrize("subject,words", [
    ("prints_forever", "did not answer its first call within the 5 s start-up timeout"),
    ("exits_hard", "exited while answering (status 3)"),
    ("crashes", "exited while answering (status -11)"),
    ("hogs_memory", "MemoryError"),
])
def test_each_hostile_subject_fails_the_check_it_runs(hostile_run: dict[str, Any], subject: str,
                                                      words: str) -> None:
    r = result(hostile_run, subject, "bash.session.cwd_persists")
    # One that never gets through start-up in any case: its checks never ran (issue 36), with
    # the reason; hogs_memory answers (a failure), or its host dies at the readiness call.
    wanted = {"fail", "not-run"} if subject == "hogs_memory" else {"not-run"}
    assert r["outcome"] in wanted, r
    text = json.dumps(r)
    assert words in text, text[:1500]


def test_a_write_into_the_throwaway_home_is_a_note_not_a_fault(hostile_run: dict[str, Any]) -> None:
    r = result(hostile_run, "writes_outside", "bash.session.cwd_persists")
    assert r["outcome"] == "pass", r
    assert "wrote into its throwaway $HOME: canary, owned-by-subject" in r["observed"], r


@pytest.mark.parametrize("subject", ["daemon_exec", "daemon_fork"])
def test_daemons_are_reported_as_leaked_processes(hostile_run: dict[str, Any], subject: str) -> None:
    r = result(hostile_run, subject, "bash.session.no_processes_left_after_close")
    assert r["outcome"] == "fail", r
    assert "still running after close" in r["message"]
    # The daemon does its work fine otherwise: the other check passes.
    assert result(hostile_run, subject, "bash.session.cwd_persists")["outcome"] == "pass"


def test_a_slow_subject_passes(hostile_run: dict[str, Any]) -> None:
    for check in CHECKS:
        assert result(hostile_run, "slow", check)["outcome"] == "pass"


def test_nothing_of_the_run_is_left_running(hostile_run: dict[str, Any]) -> None:
    left = wait_no_survivors(hostile_run["marker"])
    assert left == [], left
    daemons = [int(line.split()[1]) for line in hostile_run["mark"].read_text().splitlines()
               if line.startswith("daemon ")]
    assert len(daemons) >= 4, hostile_run["mark"].read_text()  # two cases of each daemon kind
    assert not [pid for pid in daemons if (PROC / str(pid)).exists()
                and "Z" not in (PROC / str(pid) / "stat").read_text().split(")")[-1][:3]]


def test_the_users_files_are_untouched(hostile_run: dict[str, Any]) -> None:
    marks = hostile_run["mark"].read_text()
    assert "wrote " in marks  # the subject did write: into its throwaway HOME and TMPDIR
    for d in (hostile_run["home"], hostile_run["tmp"]):
        assert (d / "canary").read_bytes() == b"the user's file\n"
        assert not (d / "owned-by-subject").exists()
    # Nothing of the run is left in the user's TMPDIR either (run and case directories removed).
    assert sorted(p.name for p in hostile_run["tmp"].iterdir()) == ["canary"]


def test_a_command_subject_is_memory_bounded_too(hostile_run: dict[str, Any]) -> None:
    r = hostile_run["results"][("cmd:python3", "bash.session.cwd_persists")]
    # It dies of its memory limit at start-up in every case: its checks never ran (issue 36).
    assert r["outcome"] == "not-run" and "MemoryError" in r["message"], r


def test_memory_was_bounded(hostile_run: dict[str, Any]) -> None:
    marks = hostile_run["mark"].read_text()
    got = [int(line.split()[2]) for line in marks.splitlines() if line.startswith("MemoryError")]
    assert got and max(got) <= 256, marks


# --- escape attempts, the sandbox on and off (issue 17) ---------------------------------------------

ESCAPES = ["writes_checkout", "connects", "reads_credentials", "fork_bomb", "daemon_exec"]
ESCAPE_CHECKS = ["bash.sandbox.stays_in_its_case", "bash.session.no_processes_left_after_close"]
_BOX = sandbox.status("required")


@pytest.fixture(scope="module", params=["off", "on"])
def escape_run(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mode = request.param
    if mode == "on" and not _BOX.active:
        pytest.skip(f"no sandbox here: {_BOX.reason}")
    base = tmp_path_factory.mktemp(f"escape-{mode}")
    home, checkout, tmp, out = base / "home", base / "checkout", base / "tmp", base / "out"
    for d in (home / ".aws", checkout, tmp):
        d.mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = PLANTED-SECRET-17\n")
    (checkout / "canary").write_text("the user's file\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    accepted: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    accepted.append(conn.recv(100))
                except OSError:
                    accepted.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    marker = f"TOOLUSE_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "TOOLUSE_TEST_HOME": str(home),
           "TOOLUSE_TEST_CHECKOUT": str(checkout), "TOOLUSE_TEST_MARK": str(base / "marks"),
           "TOOLUSE_TEST_PORT": str(listener.getsockname()[1]),
           marker.split("=")[0]: marker.split("=")[1]}
    # --jobs 1: without the sandbox a write or a read is seen after the fact, so one case at a
    # time keeps each attributed to its subject.
    argv = [*TOOLUSE, "run", "--sandbox", "required" if mode == "on" else "off", "--jobs", "1",
            "--process-limit", "150", "--out", str(out), "--bash", "reference-bash"]
    for n in ESCAPES:
        argv += ["--bash", f"{HOSTILE}:{n}"]
    for c in ESCAPE_CHECKS:
        argv += ["--check", c]
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, timeout=300, cwd=checkout)
    finally:
        stop.set()
        thread.join()
        listener.close()
    return {"mode": mode, "proc": proc, "home": home, "checkout": checkout, "marker": marker,
            "connections": accepted,
            "results": {(r["subject"], r["check_id"]): r for r in
                        json.loads((out / "results.json").read_text())["results"]}}


def escape(run: dict[str, Any], subject: str,
           check: str = "bash.sandbox.stays_in_its_case") -> dict[str, Any]:
    key = ("reference-bash", check) if subject == "reference-bash" else (
        f"subjects.py:{subject}", check)
    return run["results"][key]


def test_the_reference_stays_in_its_case(escape_run: dict[str, Any]) -> None:
    proc = escape_run["proc"]  # both checks are SHOULD: the run passes without --strict
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr
    for check in ESCAPE_CHECKS:
        assert escape(escape_run, "reference-bash", check)["outcome"] == "pass"


def test_writes_into_the_checkout_and_home(escape_run: dict[str, Any]) -> None:
    r = escape(escape_run, "writes_checkout")
    assert r["outcome"] == "fail", r
    assert "wrote outside its case directory" in r["message"], r["message"]
    for d in (escape_run["checkout"], escape_run["home"]):
        assert str(d) in r["message"] and "owned-by-subject" in r["message"]
        # On: kept out of the real folders (an overlay the harness lists); off: it got through.
        assert (d / "owned-by-subject").exists() is (escape_run["mode"] == "off")
    assert (escape_run["checkout"] / "canary").read_text() == "the user's file\n"


def test_a_network_connection(escape_run: dict[str, Any]) -> None:
    r = escape(escape_run, "connects")
    if escape_run["mode"] == "on":
        assert r["outcome"] == "fail" and "TCP connection(s) opened" in r["message"], r
        assert escape_run["connections"] == []  # nothing reached the listener
    else:  # without the sandbox a connection is not seen by the harness: it gets through
        assert r["outcome"] == "pass", r
        assert b"hello from a subject\n" in escape_run["connections"]


def test_reading_a_planted_credential_file(escape_run: dict[str, Any]) -> None:
    r = escape(escape_run, "reads_credentials")
    assert r["outcome"] == "fail", r
    assert f"{escape_run['home']}/.aws/credentials" in r["message"], r["message"]
    assert ("the sandbox gave it a decoy" in r["message"]) is (escape_run["mode"] == "on")


def test_a_fork_bomb(escape_run: dict[str, Any]) -> None:
    r = escape(escape_run, "fork_bomb")
    assert r["outcome"] == "fail", r
    assert "fork bomb" in r["message"], r["message"]
    if escape_run["mode"] == "on":  # held at --process-limit 150
        assert "process limit (150)" in r["message"] or "limit, 150" in r["message"], r
    else:
        assert "no process limit without the sandbox" in r["message"], r


def test_a_process_outliving_its_case(escape_run: dict[str, Any]) -> None:
    """One defect, one check: a bash subject's daemon is no_processes_left_after_close's."""
    left = escape(escape_run, "daemon_exec", "bash.session.no_processes_left_after_close")
    assert left["outcome"] == "fail" and "still running after close" in left["message"], left
    assert escape(escape_run, "daemon_exec")["outcome"] == "pass"
    assert wait_no_survivors(escape_run["marker"]) == []
