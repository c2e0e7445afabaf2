"""A conformant bash tool whose shell lives in tmux, as terminal-based agent tools run theirs.

The reference session (seed 003's pattern: one long-lived ``/bin/bash``, a sentinel after each
command, a deadline that restarts it) with one change: the shell is the command of a tmux pane.
The tool starts its own tmux server (``tmux -L <name>``); tmux takes its socket and lock under
``/tmp/tmux-<uid>/`` whatever ``TMPDIR`` says (tmux reads ``TMUX_TMPDIR`` only), and the tool
keeps its pipes to the pane (two FIFOs) in a folder it makes in ``/tmp`` directly. So it needs a
writable system temp directory and nothing else: ``tooluse run --sandbox off`` and the default
sandbox must judge it alike (issue 36).

Run as a command: ``python bash_tmux.py`` (JSON lines in and out, tests/subjects/py_subjects.py's
protocol), or as a factory (``bash_tmux.py:factory``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.reference.bash import BashSession, BashTool  # noqa: E402


def _tmux(name: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["tmux", "-L", name, "-f", "/dev/null", *args],
                          capture_output=True, timeout=10, stdin=subprocess.DEVNULL)


class _Pane:
    """The parts of :class:`subprocess.Popen` the reference session uses, for the shell of a
    tmux pane: its pipes (FIFOs), its pid (the pane's process, a session leader: ``killpg``
    stops it and what it started), ``poll``/``wait`` (the shell's status, written by the pane)."""

    def __init__(self, folder: Path, server: str, workdir: Path) -> None:
        self.folder, self.server = folder, server
        fifo_in, fifo_out = folder / "in", folder / "out"
        os.mkfifo(fifo_in)
        os.mkfifo(fifo_out)
        # Opened before the pane starts: the write end read-write (never blocks), the read end
        # non-blocking until the shell opens it (no EOF before a writer ever came).
        self._out_fd = os.open(fifo_out, os.O_RDONLY | os.O_NONBLOCK)
        in_fd = os.open(fifo_in, os.O_RDWR)
        shell = (f"cd {_q(workdir)} && /bin/bash --noprofile --norc <{_q(fifo_in)} "
                 f">{_q(fifo_out)} 2>&1; echo $? >{_q(folder / 'status')}")
        done = _tmux(server, "new-session", "-d", "-s", "main", "-x", "200", "-y", "50",
                     "-P", "-F", "#{pane_pid}", shell)
        if done.returncode != 0:
            raise RuntimeError(f"tmux could not start: {done.stderr.decode(errors='replace')}")
        self.pid = int(done.stdout.decode().strip())
        self.stdin = os.fdopen(in_fd, "wb", buffering=0)
        ready = f"__ready_{secrets.token_hex(4)}__"
        self.stdin.write(f"echo {ready}\n".encode())
        seen, deadline = b"", time.monotonic() + 20
        while ready.encode() not in seen and time.monotonic() < deadline:
            try:
                seen += os.read(self._out_fd, 4096)
            except BlockingIOError:
                time.sleep(0.01)
        os.set_blocking(self._out_fd, True)
        self.stdout = os.fdopen(self._out_fd, "rb", buffering=0)

    def poll(self) -> int | None:
        status = self.folder / "status"
        if status.exists():
            text = status.read_text().strip()
            return int(text) if text.isdigit() else 1
        return None if _alive(self.pid) else 1

    def wait(self) -> int:
        deadline = time.monotonic() + 5
        while (code := self.poll()) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return 1 if code is None else code


def _q(p: Any) -> str:
    import shlex

    return shlex.quote(str(p))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class Session(BashSession):
    folder: Path | None = None
    server = ""

    def start(self) -> None:
        # Its own folder in the system temp directory, as the tool's library assumes.
        tag = os.environ.get("TOOLUSE_TEST_TAG", "")  # a test tells its runs' files apart
        self.folder = Path(tempfile.mkdtemp(prefix=f"tooluse-tmux-{tag}", dir="/tmp"))
        self.server = f"tooluse-{tag}{os.getpid()}-{secrets.token_hex(4)}"
        self.process = _Pane(self.folder, self.server, self.workdir)  # type: ignore[assignment]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        super().kill(sig)
        if self.server:
            _tmux(self.server, "kill-server")
            socket_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
            (socket_dir / self.server).unlink(missing_ok=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder, self.server = None, ""


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)


def main() -> None:
    tool = factory(Path.cwd(), float(os.environ.get("TOOLUSE_TIMEOUT", "30")))
    try:
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(tool(json.loads(line))), flush=True)
    finally:
        tool.close()


if __name__ == "__main__":
    main()
