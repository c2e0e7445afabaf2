"""Issue 17: the subject sandbox (bubblewrap), the environment allow-list and the limits.

Tests that need a working sandbox skip with the reason where there is none (no user namespaces,
no bwrap): ``nox -s tests`` passes on such a machine. The hostile subjects' escape attempts, with
the sandbox on and off, are in ``tests/test_hostile_subjects.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import nested_pytest_args
from hostile import TOOLUSE, survivors, wait_no_survivors

from conformance.subjects import command_subject, sandbox
from conformance.subjects.case import CaseSettings
from conformance.subjects.isolation import processes_supported
from conformance.subjects.launch import Confinement
from conformance.subjects.process import ProcessSession, SubjectStartError

ROOT = Path(__file__).resolve().parents[1]
NODE_SUBJECT = ROOT / "tests" / "subjects" / "bash_tool.mjs"
HOSTILE = ROOT / "tests" / "hostile" / "subjects.py"
_STATUS = sandbox.status("required")
needs_sandbox = pytest.mark.skipif(
    not _STATUS.active or not processes_supported(),
    reason=f"no sandbox here: {_STATUS.reason or 'needs /proc'}")


@pytest.fixture
def sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_SANDBOX", "required")


def run_tooluse(args: list[str], *, cwd: Path, env: dict[str, str] | None = None,
                timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLUSE, "run", *args], capture_output=True, text=True, cwd=cwd,
                          env=env or dict(os.environ), timeout=timeout)


# --- the environment allow-list ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "MY_SECRET",
                                  "AWS_ACCESS_KEY_ID", "AWS_REGION", "GOOGLE_APPLICATION_CREDENTIALS",
                                  "GCP_PROJECT", "TOOLUSE_TEST_SECRET_TOKEN", "DB_PASSWORD"])
def test_credentials_never_reach_a_subject(name: str) -> None:
    assert sandbox.is_credential(name)
    env = sandbox.subject_env({name: "value", "PATH": "/bin"}, {name: "again"}, pass_env=[name])
    assert name not in env and env["PATH"] == "/bin"


def test_the_environment_is_an_allow_list() -> None:
    outer = {"PATH": "/bin", "LANG": "C.UTF-8", "HOME": "/home/u", "TMPDIR": "/tmp",
             "TOOLUSE_X": "1", "EDITOR": "vim", "PYTHONPATH": "/src", "LD_PRELOAD": "/x.so"}
    env = sandbox.subject_env(outer, {"HOME": "/private"}, pass_env=["PYTHONPATH"])
    assert env == {"PATH": "/bin", "LANG": "C.UTF-8", "HOME": "/private", "TMPDIR": "/tmp",
                   "TOOLUSE_X": "1", "PYTHONPATH": "/src"}


def test_a_subject_gets_only_the_allowed_environment(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-planted")
    monkeypatch.setenv("TOOLUSE_PASS_ENV", "MY_SETTING")
    monkeypatch.setenv("MY_SETTING", "kept")
    monkeypatch.setenv("OTHER_SETTING", "dropped")
    code = "import json, os, sys; sys.stdin.readline(); print(json.dumps({'content': json.dumps(dict(os.environ))}), flush=True)"
    s = ProcessSession(confinement=Confinement.from_environ(os.environ), argv=[sys.executable, "-c", code], workdir=tmp_path.resolve(),
                       tool_type="bash_20250124", timeout=5)
    try:
        env = json.loads(s.call({"command": "env"}).text)
    finally:
        s.close()
    assert "ANTHROPIC_API_KEY" not in env and "OTHER_SETTING" not in env
    assert env["MY_SETTING"] == "kept" and env["TOOLUSE_WORKDIR"] == str(tmp_path.resolve())
    assert "PATH" in env and env["HOME"] != os.environ.get("HOME")


def test_pass_env_refuses_a_credential(tmp_path: Path) -> None:
    proc = run_tooluse(["--bash", "reference-bash", "--pass-env", "ANTHROPIC_API_KEY"],
                       cwd=tmp_path)
    assert proc.returncode == 2
    assert "--pass-env ANTHROPIC_API_KEY: a credential never reaches a subject" in proc.stderr


# --- modes ---------------------------------------------------------------------------------------

def test_required_without_a_sandbox_is_a_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLUSE_BWRAP": str(tmp_path / "no-bwrap")}
    proc = run_tooluse(["--sandbox", "required", "--bash", "reference-bash"], cwd=tmp_path,
                       env=env)
    assert proc.returncode == 2, proc.stderr
    assert "--sandbox required:" in proc.stderr and "no-bwrap" in proc.stderr


def test_auto_without_a_sandbox_says_why_once_and_runs(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLUSE_BWRAP": str(tmp_path / "no-bwrap")}
    proc = run_tooluse(["--bash", "reference-bash", "--check", "bash.output.roundtrip",
                        "bash.session.cwd_persists"], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    notices = [line for line in proc.stderr.splitlines() if "without the sandbox" in line]
    assert len(notices) == 1 and "no-bwrap" in notices[0], proc.stderr


# --- the sandbox ---------------------------------------------------------------------------------

@needs_sandbox
def test_the_out_of_process_node_subject_passes_in_the_sandbox(tmp_path: Path) -> None:
    """node, its script in the checkout and the installation it reads are outside the case
    directory: the read-only root makes them readable wherever they are."""
    proc = run_tooluse(["--sandbox", "required", "--bash-cmd", f"node {NODE_SUBJECT}",
                        "--check", "bash.session.*", "bash.output.*", "bash.restart.*",
                        "bash.sandbox.*", "--out", str(tmp_path / "out")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())["results"]
    assert len(results) >= 10 and all(r["outcome"] in ("pass", "skip") for r in results)
    assert "without the sandbox" not in proc.stderr


@needs_sandbox
def test_a_sandboxed_command_sees_a_read_only_root_and_no_network(tmp_path: Path,
                                                                  sandboxed: None) -> None:
    probe = ("import json, os, socket, sys\n"
             "sys.stdin.readline()\n"
             "said = []\n"
             "for path in (os.environ['TOOLUSE_TEST_OUTSIDE'], 'inside.txt'):\n"
             "    try:\n"
             "        open(path, 'w').write('x'); said.append('wrote ' + path)\n"
             "    except OSError as e: said.append(f'{path}: {e.strerror}')\n"
             "try:\n"
             "    socket.create_connection(('192.0.2.1', 80), timeout=1); said.append('connected')\n"
             "except OSError as e: said.append(f'network: {e.strerror}')\n"
             "said.append('pid ' + str(os.getpid()))\n"
             "print(json.dumps({'content': '; '.join(said)}), flush=True)\n")
    script = tmp_path / "probe.py"
    script.write_text(probe)
    outside = tmp_path / "outside.txt"
    work = tmp_path / "case"
    work.mkdir()
    s = ProcessSession(confinement=Confinement.from_environ(os.environ), argv=[sys.executable, str(script)], workdir=work.resolve(),
                       tool_type="bash_20250124", timeout=5,
                       env={"TOOLUSE_TEST_OUTSIDE": str(outside)})
    try:
        text = s.call({"command": "x"}).text
    finally:
        s.close()
    assert f"{outside}: Read-only file system" in text, text
    assert "wrote inside.txt" in text and (work / "inside.txt").read_text() == "x"
    assert "network: Network is unreachable" in text, text
    assert not outside.exists()
    assert int(text.rsplit("pid ", 1)[1]) < 10, text  # its own PID namespace


@needs_sandbox
def test_what_a_sandboxed_command_leaves_running_is_reported(tmp_path: Path,
                                                             sandboxed: None) -> None:
    code = "setsid sleep 600 & while read -r l; do echo '{\"content\": \"ok\"}'; done"
    s = command_subject(f"sh -c {json.dumps(code)}", family="bash").open(
        tmp_path.resolve(), CaseSettings(confinement=Confinement.from_environ(os.environ), timeout=2))
    assert s.call({"command": "x"}).text == "ok"
    s.close()
    assert s.leaked and "sleep 600" in s.leaked[0].cmdline
    assert any(e.startswith("process outliving its case") for e in s.escapes), s.escapes


@needs_sandbox
def test_file_size_and_cpu_limits(tmp_path: Path, sandboxed: None,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_FSIZE_LIMIT", str(1024 * 1024))
    monkeypatch.setenv("TOOLUSE_CPU_LIMIT", "1")
    code = ("read -r l; head -c 3000000 /dev/zero > big; echo \"{\\\"content\\\": \\\"size "
            "$(wc -c < big)\\\"}\"; read -r l; while :; do :; done")
    s = command_subject(f"sh -c '{code}'", family="bash").open(
        tmp_path.resolve(), CaseSettings(confinement=Confinement.from_environ(os.environ), timeout=30))
    try:
        assert s.call({"command": "x"}).text == f"size {1024 * 1024}"
        r = s.call({"command": "spin"}, deadline=60)  # 1 s of CPU, however loaded the machine
    finally:
        s.close()
    assert not r.timed_out and "exited while answering" in r.text, r.text  # SIGXCPU at 1 s


@needs_sandbox
def test_a_subject_that_cannot_start_in_the_sandbox_is_a_start_error(tmp_path: Path,
                                                                   sandboxed: None) -> None:
    with pytest.raises(SubjectStartError, match="no such program"):
        ProcessSession(confinement=Confinement.from_environ(os.environ), argv=[str(tmp_path / "absent")], workdir=tmp_path.resolve(),
                       tool_type="bash_20250124", timeout=1)


# --- nothing survives kill -9 ----------------------------------------------------------------------

DAEMONS = ("sleep 600 >/dev/null 2>&1 & "
           "(setsid sh -c 'sleep 600 >/dev/null 2>&1 &' &) ; "
           "while read -r l; do sleep 30; done")


@needs_sandbox
@pytest.mark.parametrize("kind", ["command", "factory"])
def test_nothing_survives_kill_9_of_the_run(tmp_path: Path, kind: str) -> None:
    """``tooluse run`` killed by SIGKILL in the middle of a bash case whose subject left
    background processes and a double-forked daemon: the sandboxes die with it."""
    marker = uuid.uuid4().hex
    # A run killed by SIGKILL cannot remove its run and overlay directories: they go to a
    # TMPDIR of this test's own (removed with tmp_path), not to the session's, where they are litter.
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TOOLUSE_TEST_RUN": marker, "TMPDIR": str(tmp_path / "tmp")}
    subject = (["--bash-cmd", f"sh -c {json.dumps(DAEMONS)}"] if kind == "command"
               else ["--bash", f"{HOSTILE}:daemons_then_slow"])
    proc = subprocess.Popen([*TOOLUSE, "run", "--sandbox", "required", "--timeout", "30",
                             *subject, "--check", "bash.session.cwd_persists"],
                            env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        def daemons() -> list[tuple[int, str]]:
            return [(pid, cmd) for pid, cmd in survivors(f"TOOLUSE_TEST_RUN={marker}")
                    if cmd.startswith("sleep 600")]

        while len(daemons()) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.1)
        time.sleep(0.5)  # in the middle of the case: the subject answers 30 s late
        assert len(daemons()) >= 2, survivors(f"TOOLUSE_TEST_RUN={marker}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert wait_no_survivors(f"TOOLUSE_TEST_RUN={marker}", timeout=10) == []


# --- the pytest plugin -----------------------------------------------------------------------------

def run_pytest(tmp_path: Path, *args: str,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", *nested_pytest_args(tmp_path),
                           "--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"),
                           "--tooluse-bash", "reference-bash", "--tooluse-check",
                           "bash.output.roundtrip", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env or dict(os.environ), timeout=300)


def test_the_pytest_plugin_refuses_what_tooluse_run_refuses(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLUSE_BWRAP": str(tmp_path / "no-bwrap")}
    proc = run_pytest(tmp_path, "--tooluse-sandbox", "required", env=env)
    assert proc.returncode == 4 and "tooluse: --sandbox required:" in proc.stderr, proc.stderr
    proc = run_pytest(tmp_path, "--tooluse-pass-env", "GITHUB_TOKEN")
    assert proc.returncode == 4 and "a credential never reaches a subject" in proc.stderr


@needs_sandbox
def test_the_pytest_plugin_runs_subjects_in_the_sandbox(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, "--tooluse-sandbox", "required", "--tooluse-check",
                      "bash.sandbox.*")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout, proc.stdout[-1000:]


def test_what_is_written_through_an_overlay(tmp_path: Path) -> None:
    """Files and new empty folders count; the folders overlayfs copies up above a written file
    and Python's bytecode cache do not."""
    up = tmp_path / "up"
    (up / "pkg" / "__pycache__").mkdir(parents=True)
    (up / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
    (up / "src" / "deep").mkdir(parents=True)
    (up / "src" / "deep" / "owned.txt").write_text("x")
    (up / "made-empty").mkdir()
    got = sandbox.overlay_listing({up: Path("/checkout")})
    assert got == {"/checkout/src/deep/owned.txt", "/checkout/made-empty"}


@needs_sandbox
def test_a_starting_sandbox_is_not_counted_with_the_machines_processes() -> None:
    """The watchdog (root: RLIMIT_NPROC does not hold) counts a sandbox's processes in its own
    ``/proc``. For its first milliseconds bubblewrap's child still has the machine's root, and a
    count there was the machine's: on a CI runner with more processes than the limit, conformant
    subjects were stopped at start as fork bombs. Polled as fast as it goes through many starts,
    every count the watchdog gets is the sandbox's own (one or two processes), never the
    machine's."""
    bwrap, why = sandbox.find_bwrap()
    assert bwrap, why
    machine = sum(1 for n in os.listdir("/proc") if n.isdigit())
    counts: list[int] = []
    for _ in range(15):
        proc = subprocess.Popen([bwrap, *sandbox.base_options(), "sleep", "0.2"])
        try:
            while proc.poll() is None:
                kids = sandbox.children(proc.pid)
                count = sandbox.sandbox_process_count(kids[0]) if kids else None
                if count is not None:
                    counts.append(count)
        finally:
            proc.kill()
            proc.wait()
    assert counts, "the sandbox's own /proc was never seen"
    assert max(counts) <= 3, f"counted {max(counts)} (the machine has {machine})"
