"""A fork server per in-process subject: import the subject's module once, fork per test case.

Starting a Python interpreter and importing the subject costs tens of milliseconds of CPU per
test case; forking a process that has already imported it costs about one. The server
(``python -m conformance.subjects.host --fork-server FD``) is single-threaded, so forking it is
safe. Each request carries the case's working directory and the whole environment (as the
harness has it at that moment, so it matches a fresh start) plus three pipe ends
(``SCM_RIGHTS``); the forked child starts a new session, takes the pipes as stdin/stdout/stderr
and runs the ordinary host loop, so the child is isolated exactly like a freshly started host
(own process group, killed at the deadline, leaks detected below it).

Used where it can be (Linux: ``/proc`` and ``socket.send_fds``); ``TOOLUSE_FORKSERVER=0`` turns
it off, and the harness then starts one interpreter per case.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

from conformance.errors import ToolUseError
from conformance.subjects import sandbox
from conformance.subjects.isolation import (
    alive,
    children_of,
    descendants,
    kill_group,
    kill_pids,
    processes_supported,
    still_alive,
)
from conformance.subjects.launch import (
    Confinement,
    Folders,
    LaunchSpec,
    SubjectStartError,
    launch,
)
from conformance.subjects.timing import Patience, process_starvation


def run_root(workdir: Path) -> Path | None:
    """The run directory (``tooluse-run-*``) holding ``workdir``, if any."""
    return next((p for p in workdir.parents if p.name.startswith("tooluse-run-")), None)


def available() -> bool:
    """Whether this platform can fork cases from a warm host (the run may still say no:
    :attr:`~conformance.subjects.case.CaseSettings.fork_server`)."""
    return processes_supported() and hasattr(socket, "send_fds")


class ForkServerError(ToolUseError):
    pass


class ForkedProcess:
    """The parts of :class:`subprocess.Popen` a :class:`ProcessSession` uses, for a forked child."""

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes],
                 server: ForkServer) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.returncode: int | None = None
        self._server = server
        #: The pid in the server's PID namespace (the same as ``pid`` without the sandbox).
        self.inner_pid = pid

    def poll(self) -> int | None:
        if self.returncode is None and (not self.pid or not alive(self.pid)):
            status = self._server.status(self.inner_pid)
            self.returncode = -1 if status is None else status
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
            time.sleep(0.005)
        return cast(int, self.returncode)


class ForkServer:
    """One fork server process. Under the sandbox (:mod:`conformance.subjects.sandbox`) the server
    runs in ``bwrap`` with the run directory (which holds every case directory and private HOME)
    writable; it is then started at its first :meth:`spawn`, when that directory is known."""

    def __init__(self, argv: list[str], env: Mapping[str, str], start_timeout: float,
                 box: sandbox.Status | None = None, *, confinement: Confinement) -> None:
        self.lock = threading.Lock()
        #: Every subject pid forked so far (what is below the server and not in here is an
        #: orphan a subject left: the server is a subreaper).
        self.spawned: set[int] = set()
        self._argv, self._env, self._start_timeout = list(argv), dict(env), start_timeout
        self._confinement = confinement
        self.box = box if box is not None and box.active else None
        #: The run directory a sandboxed server may write in (None: not started yet).
        self.root: Path | None = None
        #: Decoys hiding the user's credential files in a sandboxed server: {decoy: real path}.
        self.hidden: dict[Path, Path] = {}
        self.decoy_atimes: dict[Path, float] = {}
        #: Overlays on the checkout and HOME of a sandboxed server: {upper folder: real one}.
        self.uppers: dict[Path, Path] = {}
        self.scratch: Path | None = None
        #: The server process itself (inside the sandbox: below ``bwrap``), the subreaper.
        self.reaper_pid = 0
        self.proc: Any = None
        if self.box is None:
            self._start()

    def can_serve(self, workdir: Path) -> bool:
        """Can a case in ``workdir`` be forked here? Always without the sandbox; with it, only
        cases of one run directory (``tooluse-run-*``, the one the server was started for)."""
        if self.box is None:
            return True
        root = run_root(Path(workdir))
        if self.root is None:
            return root is not None
        return root == self.root and self.running

    def _start(self, root: Path | None = None) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [*self._argv, "--fork-server", str(theirs.fileno())]
        boxed = self.box is not None and root is not None
        # Under the sandbox: the run directory is writable, the decoys live in it and the
        # overlays beside it; the host applies the limits to itself (and so to every case).
        try:
            started = launch(LaunchSpec(
                tuple(argv), self._confinement, env=self._env,
                box=self.box if boxed else sandbox.Status(self._confinement.mode, False),
                folders=Folders(writable=(root,) if root is not None else (), chdir=root,
                                decoys_in=root,
                                overlays_in=root.parent if root is not None else None,
                                tmp_in=root),
                limits="shell" if boxed else "none", memory=False, label="the fork server",
                watchdog=False,
                popen=dict(pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
        except SubjectStartError as e:
            theirs.close()
            raise ForkServerError(str(e)) from None
        if boxed:
            self.root = root
            self.hidden, self.decoy_atimes = started.hidden, started.decoys
            self.uppers, self.scratch = started.uppers, started.scratch
        self.proc = started.proc
        theirs.close()
        self._buf = b""

        def attempt(seconds: float) -> dict[str, Any] | None:
            self.sock.settimeout(max(seconds, 0.001))
            try:
                return self._recv()
            except TimeoutError:
                return None

        # The start-up timeout grows by the load measured meanwhile (timing.py).
        patience = Patience(self._start_timeout, "start", process_starvation(self.proc.pid))
        try:
            hello = patience.wait(attempt)
            if hello is None:
                raise OSError(f"no answer within {self._start_timeout:g}s (the start-up timeout"
                              + (f" + {patience.allowance:.1f}s allowed for load)"
                                 if patience.allowance >= 0.05 else ")"))
        except (OSError, ValueError) as e:
            self.close()
            raise ForkServerError(f"the subject host did not start: {e}") from None
        if not hello.get("ready"):
            self.close()
            raise ForkServerError(f"the subject factory failed: {hello.get('error')}")
        self.sock.settimeout(30.0)
        self.reaper_pid = self.proc.pid
        if self.box is not None and sandbox.WATCHDOG.needed(self._confinement.processes):
            # root: RLIMIT_NPROC does not hold; watched once the server is up
            sandbox.WATCHDOG.watch(self.proc.pid, self._confinement.processes)
        if self.box is not None:
            server = [p for p in descendants(self.proc.pid) if "--fork-server" in p.cmdline]
            if server:
                self.reaper_pid = server[-1].pid

    @property
    def bomb(self) -> str:
        """What the process-limit watchdog did to this server's sandbox ("" for nothing)."""
        return sandbox.WATCHDOG.tripped(self.proc.pid) if self.proc is not None else ""

    def network(self) -> dict[str, int]:
        """The sandbox's network counters (:func:`.sandbox.network_counters`)."""
        if self.box is None or not self.reaper_pid:
            return {}
        return sandbox.network_counters(self.reaper_pid)

    def _recv(self) -> dict[str, Any]:
        while b"\n" not in self._buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                err = b""
                if self.proc.stderr is not None and self.proc.poll() is not None:
                    err = self.proc.stderr.read()[-500:]
                raise ValueError(f"the fork server exited{': ' + err.decode() if err else ''}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return cast(dict[str, Any], json.loads(line))

    @property
    def running(self) -> bool:
        return self.proc is None or self.proc.poll() is None

    def spawn(self, workdir: str, env: Mapping[str, str]) -> ForkedProcess:
        if self.proc is None:
            with self.lock:
                if self.proc is None:
                    if not self.can_serve(Path(workdir)):
                        raise ForkServerError(f"{workdir} is not in a run directory")
                    self._start(run_root(Path(workdir)))
        r0, w0 = os.pipe()
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        try:
            with self.lock:
                msg = json.dumps({"op": "fork", "workdir": workdir, "env": dict(env)}).encode()
                socket.send_fds(self.sock, [msg + b"\n"], [r0, w1, w2])
                reply = self._recv()
                inner = int(reply["pid"])
                pid = inner if self.box is None else self._outer_pid(inner)
                if not pid:
                    raise ValueError(f"the forked subject (pid {inner} in the sandbox) is not "
                                     "below the server")
                self.spawned.add(pid)
        except (OSError, ValueError) as e:
            for fd in (w0, r1, r2):
                os.close(fd)
            raise ForkServerError(f"cannot fork the subject: {e}") from None
        finally:
            for fd in (r0, w1, w2):
                os.close(fd)
        proc = ForkedProcess(pid, os.fdopen(w0, "wb"), os.fdopen(r1, "rb"), os.fdopen(r2, "rb"),
                             self)
        proc.inner_pid = inner
        return proc

    def _outer_pid(self, inner: int) -> int:
        """The pid, as the harness sees it, of the child the sandboxed server forked as ``inner``
        (its pid inside the sandbox's PID namespace); 0 when it is already gone."""
        for child in children_of(self.reaper_pid):
            try:
                status = Path(f"/proc/{child}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:") and line.split()[-1] == str(inner):
                    return child
        return 0

    def status(self, pid: int) -> int | None:
        try:
            with self.lock:
                self.sock.sendall(json.dumps({"op": "status", "pid": pid}).encode() + b"\n")
                return cast("int | None", self._recv().get("status"))
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        if self.proc is None:
            return
        sandbox.WATCHDOG.unwatch(self.proc.pid)
        # The server is a subreaper: daemons its subjects left behind are below it now.
        leftovers = descendants(self.proc.pid) if processes_supported() else []
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            kill_group(self.proc.pid)
            self.proc.wait()
        kill_pids([p.pid for p in still_alive(leftovers)])
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        if self.scratch is not None:
            sandbox.remove_tree(self.scratch)


_servers: dict[str, ForkServer] = {}
_servers_lock = threading.Lock()


def server_for(key: str, argv: list[str], env: Mapping[str, str],
               start_timeout: float, confinement: Confinement) -> ForkServer:
    """The running fork server for ``key`` and ``confinement`` (started, or restarted if it
    died). Under the sandbox it is started at its first case (:class:`ForkServer`)."""
    box = confinement.status(notice=False)
    key = f"{key} {confinement!r}"
    with _servers_lock:
        server = _servers.get(key)
        if server is None or not server.running:
            server = ForkServer(argv, env, start_timeout, box=box, confinement=confinement)
            _servers[key] = server
        return server


def shutdown() -> None:
    """Stop every fork server (also at interpreter exit)."""
    with _servers_lock:
        servers = list(_servers.values())
        _servers.clear()
    for s in servers:
        s.close()


atexit.register(shutdown)


# --- the server side (runs in the host process) -------------------------------------------------

def serve(fd: int, child_main: Any) -> int:
    """Loop: fork a subject per request; answer exit statuses. Returns at end of input."""
    sock = socket.socket(fileno=fd)
    statuses: dict[int, int] = {}

    def send(obj: dict[str, Any]) -> None:
        sock.sendall(json.dumps(obj).encode() + b"\n")

    def reap() -> None:
        while True:
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            statuses[pid] = os.waitstatus_to_exitcode(st)
            if len(statuses) > 10_000:
                statuses.pop(next(iter(statuses)))

    buf = b""
    pending_fds: list[list[int]] = []
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, 65536, 3)
        except OSError:
            break
        if fds:
            pending_fds.append(fds)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, _, buf = buf.partition(b"\n")
            req = json.loads(line)
            reap()
            if req.get("op") == "status":
                pid = int(req["pid"])
                if pid not in statuses:
                    try:
                        got, st = os.waitpid(pid, os.WNOHANG)
                        if got:
                            statuses[pid] = os.waitstatus_to_exitcode(st)
                    except ChildProcessError:
                        pass
                send({"status": statuses.get(pid)})
                continue
            stdin, stdout, stderr = pending_fds.pop(0)
            pid = os.fork()
            if pid == 0:  # the subject
                code = 70
                try:
                    sock.close()
                    os.setsid()
                    for i, f in enumerate((stdin, stdout, stderr)):
                        os.dup2(f, i)
                        os.close(f)
                    os.chdir(req["workdir"])
                    os.environ.clear()  # the harness's environment as it is now
                    os.environ.update(req["env"])
                    code = child_main()
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else 1
                except BaseException:  # noqa: B036 - report, then exit 70
                    import traceback

                    traceback.print_exc()
                finally:
                    for stream in (sys.stdout, sys.stderr):
                        try:
                            stream.flush()
                        except Exception:
                            pass
                    os._exit(code)
            for f in (stdin, stdout, stderr):
                os.close(f)
            send({"pid": pid})
    reap()
    return 0
