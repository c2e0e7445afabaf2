"""A :class:`~conformance.session.ToolSession` over a child process speaking JSON lines.

Used for both kinds of subject: out-of-process commands (any language) and in-process
``module:attr`` factories hosted by :mod:`conformance.subjects.host`. Every call has a deadline;
when it passes, the whole process group is killed and the call returns an error result with
``timed_out=True``. What the subject did wrong on the harness's side (hung, exited, wrote something
that is not a JSON result) is collected in :attr:`ProcessSession.faults`; the runner fails a check
whose session has faults even when the check itself passed.

Start-up is not tool time: :meth:`ProcessSession.wait_ready` (the runner's readiness step) makes
one harmless call (:func:`readiness_input`) under a start-up timeout of its own, outside the
history and before the case's clock starts. Writes into the throwaway ``$HOME`` are
:attr:`ProcessSession.notes`, not faults.

This module is the subject's life cycle (start, readiness, each call's deadline and what a missing
answer means, close, kill, what the subject left behind); its I/O (framing the inputs as JSON
lines, reading the answers, keeping stderr's end) is :mod:`conformance.subjects.pipes`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from conformance.session import ToolResult
from conformance.subjects import sandbox, silence
from conformance.subjects.forkserver import ForkServer, run_root
from conformance.subjects.isolation import (
    Deadline,
    ProcInfo,
    case_processes,
    descendants,
    grace_for,
    group_members,
    kill_group,
    kill_pids,
    proc_info,
    process_table,
    processes_supported,
    still_alive,
    subtree_table,
)
from conformance.subjects.launch import Confinement, SubjectStartError, launch
from conformance.subjects.pipes import (
    EOF,
    MAX_LINE,
    SILENT,
    Pipes,
    close_quietly,
    decode_answer,
)
from conformance.subjects.timing import Miss, Patience, process_starvation, record

#: A subject with this many processes at once is reported as a fork bomb.
FORK_BOMB_PROCESSES = 128
#: A subject still running this many times the close grace after its input was closed is a fault
#: (it would never exit); one that exits between the grace and this is a note.
NEVER_EXITS = 3


class SubjectNotReady(SubjectStartError):
    """The subject started but did not answer its first (readiness) call; the message says so."""


def readiness_input(tool_type: str, workdir: Path) -> dict[str, Any] | None:
    """The harmless call that tells the harness a subject is ready (None: no such call).

    It must not change anything a check can observe: bash runs ``true`` (no output, exit status 0
    as at start, no change to the working directory, the environment, files or processes); the
    text editor views the case's working directory, which is still empty (a read; nothing to
    undo). The answer itself is not judged: an error result is an answer too."""
    if tool_type.startswith("bash"):
        return {"command": "true"}
    if tool_type.startswith("text_editor"):
        return {"command": "view", "path": str(workdir)}
    return None


_live: set[ProcessSession] = set()
_live_lock = threading.Lock()
_stopping = False


def stop_all_subjects() -> None:
    """An interrupted run: kill every running subject now and refuse to start new ones (until
    :func:`allow_subjects`). The sessions' own ``close()`` still sweeps what they leaked."""
    global _stopping
    with _live_lock:
        _stopping = True
        sessions = list(_live)
    for s in sessions:
        s._kill_group()  # only while the group id is still that subject's


def allow_subjects() -> None:
    global _stopping
    with _live_lock:
        _stopping = False


class ProcessSession:
    """One subject process for one test case."""

    def __init__(self, argv: Sequence[str], *, workdir: Path, tool_type: str, timeout: float,
                 env: Mapping[str, str] | None = None, handshake: bool = False,
                 start_timeout: float = 20.0, label: str = "subject",
                 case_deadline: float | None = None,
                 options: Mapping[str, Any] | None = None,
                 fork_server: ForkServer | None = None,
                 confinement: Confinement | None = None) -> None:
        self.workdir, self.tool_type, self.timeout, self.label = workdir, tool_type, timeout, label
        self.history: list[dict[str, Any]] = []
        #: Subject faults seen by the harness (hang, exit, bad answer), in order.
        self.faults: list[str] = []
        #: What the harness saw that is not a fault but worth reporting (writes into $HOME).
        self.notes: list[str] = []
        #: Processes the subject left running after close (pid and command line).
        self.leaked: list[ProcInfo] | None = None
        #: What the subject tried outside its sandbox (or did, without one): the escape checks'
        #: findings, filled at close.
        self.escapes: list[str] = []
        #: The subject's tool-definition options; each is also an attribute (``max_characters``).
        self.options = dict(options or {})
        for key, value in self.options.items():
            if key.isidentifier() and not hasattr(self, key):
                setattr(self, key, value)
        self._case_seconds = case_deadline
        self._case = Deadline(case_deadline)
        self._closed = self._wrote_home = False
        self._stderr: deque[bytes] = deque(maxlen=64)
        self._net_before: dict[str, int] = {}
        self._confinement = confinement or Confinement.from_environ()
        self._start(argv, env or {}, fork_server)
        self._enlist()
        if handshake:
            try:
                self._handshake(start_timeout)
            except BaseException:  # never started: nobody will close it
                self._abandon()
                raise

    def _start(self, argv: Sequence[str], env: Mapping[str, str],
               fork_server: ForkServer | None) -> None:
        """Start the subject through :func:`~conformance.subjects.launch.launch`, confined as the
        run says: a HOME and TMPDIR of its own next to the working directory, removed at close
        (writes to ~ or $TMPDIR never reach the user's files; ``TOOLUSE_SANDBOX_HOME=0`` keeps
        them), the limits, and under the sandbox its ``bwrap`` line. A factory's case is forked
        by the run's fork server instead, when the server can serve this working directory."""
        try:
            box = self._confinement.status()
        except sandbox.SandboxUnavailable as e:
            raise SubjectStartError(str(e)) from None
        if fork_server is not None and box.active and not fork_server.can_serve(self.workdir):
            fork_server = None  # not under a run directory: one sandboxed host for this case
        case_env = {**env, "TOOLUSE_WORKDIR": str(self.workdir),
                    "TOOLUSE_TIMEOUT": f"{self.timeout:g}"}
        # The private HOME and TMPDIR go in the run directory (beside the case's), also for a
        # fresh subject a check starts inside its case (the bash model check's examples): a TMPDIR
        # as short as every case's (OpenHands' tmux falls back to a read-only /tmp when the
        # socket path under a deeper one passes the 107-byte limit of a Unix socket path).
        self._launch = launch(
            argv, cwd=self.workdir, env=case_env, confinement=self._confinement, box=box,
            writable=[self.workdir], private_in=run_root(self.workdir) or self.workdir.parent,
            overlays_in=self.workdir.parent, limits="shim", label=self.label, watch=True,
            spawn=None if fork_server is None else partial(fork_server.spawn, str(self.workdir)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._box, self._fork_server = box, fork_server
        self._sandbox, self._home = self._launch.private, self._launch.home
        self._leftovers = self._launch.leftovers  # the shim's tag for its report on stderr
        self.proc: Any = self._launch.proc
        self.pgid = self.proc.pid
        if fork_server is not None and box.active:
            # Shared by every case of this subject: what it did since its sandbox started (a
            # factory acts before the case could take a snapshot).
            self._launch.hidden = fork_server.hidden
            self._launch.decoys = fork_server.decoy_atimes
            self._launch.uppers = fork_server.uppers
        leader = proc_info(self.proc.pid)
        self._leader_start = leader.start if leader is not None else None
        started = proc_info(self.proc.pid) if fork_server is not None else None
        self._start_ticks = started.start if started is not None else None
        self._pipes = {f"pipe:[{os.fstat(f.fileno()).st_ino}]"
                       for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr)
                       if f is not None}

    def _enlist(self) -> None:
        """Count the session among the live ones (an interrupted run kills them all) and start
        reading its output; refused, the subject killed, once the run is stopping."""
        with _live_lock:
            stopping = _stopping
            if not stopping:
                _live.add(self)
        if stopping:
            self._kill()
            self._remove_sandbox()
            raise SubjectStartError("the run is stopping (interrupted)")
        self.io = Pipes(self.proc, self._stderr, self._leftovers)

    def _abandon(self) -> None:
        """A subject that never got through start-up: nobody will close it."""
        self._kill()
        self._remove_sandbox()
        with _live_lock:
            _live.discard(self)

    def _remove_sandbox(self) -> None:
        self._launch.cleanup()

    # --- the pipes (conformance.subjects.pipes) -------------------------------------------

    @property
    def stderr_tail(self) -> str:
        return self.io.stderr_tail

    def _drain_stderr(self, wait: float = 2.0) -> None:
        self.io.drain_stderr(wait)

    def _stderr_note(self) -> str:
        return self.io.stderr_note()

    # --- start-up ---------------------------------------------------------------------------

    def _handshake(self, wait: float) -> None:
        patience = Patience(wait, "start", process_starvation(self.proc.pid))
        line = patience.wait(self.io.next_line)
        if line is None:
            self._kill()
            raise SubjectStartError(f"{self.label} did not start within {wait:g}s (the start-up "
                                    f"timeout{_allowed(patience.allowance)}){self._stderr_note()}")
        if line is EOF:
            self.proc.wait(timeout=5)
            self._drain_stderr()
            raise SubjectStartError(f"{self.label} exited at start (status {self._status()})"
                                    f"{self._sandbox_note()}{self._stderr_note()}")
        try:
            hello = json.loads(line)
        except ValueError:
            hello = {"ready": False, "error": f"unexpected first line {line[:200]!r}"}
        if not hello.get("ready"):
            self._kill()
            raise SubjectStartError(f"the subject factory failed: {hello.get('error')}")

    def _sandbox_note(self) -> str:
        """Why the sandbox stopped this subject, if it did (the process-limit watchdog)."""
        box = getattr(self, "_box", None)
        if box is None or not box.active:
            return ""
        if self._launch.watched:
            said = sandbox.WATCHDOG.tripped(self.proc.pid)
        else:
            said = self._fork_server.bomb if self._fork_server is not None else ""
        return f"; the sandbox stopped it: fork bomb: {said}" if said else ""

    # --- readiness --------------------------------------------------------------------------

    def wait_ready(self, timeout: float) -> None:
        """The readiness step: one harmless call (:func:`readiness_input`) answered within
        ``timeout`` s, not recorded in :attr:`history`; the case's clock starts after it.
        Raises :class:`SubjectNotReady` (the subject is then stopped) with a message saying it
        was start-up that failed."""
        probe = readiness_input(self.tool_type, self.workdir)
        if probe is not None:
            seen = len(self.faults)
            r = self._send(probe, timeout, what="readiness", watch_silence=True)
            faults = self.faults[seen:]
            del self.faults[seen:]
            if faults:
                self._kill()
                what = json.dumps(probe)
                if r.timed_out:
                    raise SubjectNotReady(
                        f"the subject did not answer its first call within the {timeout:g} s "
                        f"start-up timeout{_allowed(r.allowance)}; it was stopped (the readiness call {what}, made "
                        f"before the check's clock starts; a slower start needs a longer "
                        f"--startup-timeout){self._stderr_note()}")
                raise SubjectNotReady(f"the subject failed its first call, at start-up (the "
                                      f"readiness call {what}): {'; '.join(faults)}")
        self.start_case()

    def start_case(self) -> None:
        """The case's clock (its budget of calls) starts now: after the readiness call, or when
        a case takes a subject made ready ahead of it (:mod:`conformance.subjects.pool`)."""
        self._case = Deadline(self._case_seconds)

    # --- calls ------------------------------------------------------------------------------

    def _fault(self, message: str) -> ToolResult:
        self.faults.append(message)
        return ToolResult(content=f"harness: {message}", is_error=True)

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> ToolResult:
        self.history.append(tool_input)
        wait = deadline if deadline is not None else self.timeout + grace_for(self.timeout)
        case_left = self._case.remaining()
        if case_left is not None:
            wait = min(wait, case_left)
        return self._send(tool_input, wait)

    def _send(self, tool_input: dict[str, Any], wait: float, what: str = "call",
              watch_silence: bool = False) -> ToolResult:
        start = time.monotonic()
        if self._closed:
            return self._fault(f"{self.label} is not running (closed)")
        if self.proc.poll() is not None:  # it exited before this call (e.g. at start-up)
            self._drain_stderr()
            return self._fault(f"{self.label} is not running (status {self._status()})"
                               f"{self._stderr_note()}")
        try:
            self.io.write(tool_input)
        except OSError as e:
            if self.proc.poll() is not None or _wait_exit(self.proc, 1.0):
                self._drain_stderr()
            return self._fault(f"{self.label} stopped reading its input ({e}){self._stderr_note()}")
        # Judged fairly: the deadline grows by the load measured while waiting (timing.py).
        patience = Patience(wait, what, process_starvation(self.proc.pid))
        line = patience.wait(self.io.watching_silence() if watch_silence else self.io.next_line)
        elapsed = time.monotonic() - start
        if line is SILENT:  # it read the input and waits for more: its answer is held back
            self._kill()
            self._drain_stderr(0.5)
            r = self._fault(f"{silence.HINT}{self._stderr_note()}")
            r.elapsed = elapsed
            return r
        if line is None:
            self._kill()
            self._drain_stderr(0.5)
            r = self._fault(f"no answer within {wait:g}s{_allowed(patience.allowance)}; the "
                            "subject was stopped")
            r.timed_out, r.elapsed, r.allowance = True, elapsed, patience.allowance
            return r
        if line is EOF:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
            self._drain_stderr()
            r = self._fault(f"{self.label} exited while answering (status {self._status()})"
                            f"{self._sandbox_note()}{self._stderr_note()}")
            r.elapsed = elapsed
            return r
        if len(line) > MAX_LINE:
            self._kill()
            return self._fault(f"answer longer than {MAX_LINE} bytes; the subject was stopped")
        result, fault = decode_answer(line)
        if result is None:
            return self._fault(str(fault))
        if fault:
            self.faults.append(fault)
        result.elapsed, result.allowance = elapsed, patience.allowance
        self._check_home()
        return result

    def _check_home(self) -> None:
        if self._wrote_home or self._home is None:
            return
        try:
            written = sorted(p.name for p in self._home.iterdir())
        except OSError:
            return
        if written:  # not a fault: HOME is a throwaway directory here, the user's files are safe
            self._wrote_home = True
            self.notes.append(f"wrote into its throwaway $HOME: {', '.join(written[:5])}"
                              f"{', ...' if len(written) > 5 else ''} (not a fault)")

    # --- teardown ---------------------------------------------------------------------------

    def _group_is_ours(self) -> bool:
        """Is the group id still this subject's? Only while its leader is not reaped: a reaped
        pid is soon reused (pid_max may be 32768), and killpg would then hit another case."""
        if isinstance(self.proc, subprocess.Popen):
            return self.proc.returncode is None
        now = proc_info(self.proc.pid)  # a zombie still has its /proc entry
        return now is not None and now.start == self._leader_start

    def _kill_group(self) -> None:
        if self._group_is_ours():
            kill_group(self.pgid)

    def _kill(self) -> None:
        """Stop the subject now: its group and everything below it (in any group or session)."""
        below = descendants(self.proc.pid) if processes_supported() else []
        self._kill_group()
        kill_pids([p.pid for p in still_alive(below)])
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
            pass

    def _await_exit(self, grace: float, never: float) -> None:
        """The subject's input is closed: wait for it to exit. ``grace`` (plus the allowance for
        measured load) is what an exit may take; a later exit is a note, not a fault (it did
        exit: a slow machine is not the subject's defect). Only a subject still running
        ``never`` s after its input was closed is a fault (it would never exit), killed."""
        start = time.monotonic()
        starved = process_starvation(self.proc.pid)
        patience = Patience(grace, "close", starved)
        if patience.wait(lambda t: True if _wait_exit(self.proc, t) else None,
                         record_miss=False):
            return
        if _wait_exit(self.proc, max(0.0, never - (time.monotonic() - start))):
            self.notes.append(f"took {time.monotonic() - start:.1f}s to exit after its input was "
                              f"closed (more than the {grace:g}s grace"
                              f"{_allowed(patience.allowance)}; not a fault: it did exit)")
            return
        waited = time.monotonic() - start
        record(Miss("close", never, waited, patience.allowance))
        self.faults.append(f"{self.label} did not exit within {waited:.1f}s of closing its "
                           f"input ({grace:g}s grace{_allowed(patience.allowance)}, then up to "
                           f"{never:g}s in all); it was killed")

    def close(self, grace: float = 5.0, never_exits: float | None = None) -> None:
        """Close stdin, let the subject shut down, then kill what is left and note the leaks.
        An exit later than ``grace`` is a note; only a subject still running ``never_exits`` s
        (default :data:`NEVER_EXITS` times the grace) after its input closed is a fault."""
        if self._closed:
            return
        self._closed = True
        tracked: list[ProcInfo] = []
        if processes_supported():
            table = self._table()
            tracked = descendants(self.proc.pid, table) + group_members(self.pgid, table)
            # Daemons (double fork + setsid) left the tree and the group: found by environment.
            tracked += case_processes(self._markers(), [], since=self._leader_start, table=table)
            self._count_processes(tracked)
        net_after = self._network()
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            self._await_exit(grace, NEVER_EXITS * grace if never_exits is None else never_exits)
        self._kill_group()
        # What the group kill reaches even when the leader is already reaped (its id may be
        # someone else's by now): the members seen before closing, still in the group.
        in_group = [p for p in still_alive(tracked) if p.pgrp == self.pgid]
        kill_pids([p.pid for p in in_group])
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        if processes_supported():
            # Everything below the subject before it closed that escaped its group (own session
            # or group), or that is marked as the case's, still running now.
            seen = {p.pid: p for p in tracked if p.pid != self.proc.pid}
            for p in in_group:
                seen.pop(p.pid, None)
            # One table for both (a table costs a read of every process's stat): read while no
            # subject is forked, as _orphans needs.
            server = self._fork_server
            with server.lock if server is not None else contextlib.nullcontext():
                table = self._table()
            seen.update((p.pid, p) for p in case_processes(self._markers(), self._dirs(),
                                                            since=self._leader_start, table=table))
            seen.update((p.pid, p) for p in self._orphans(table))
            seen.pop(self.proc.pid, None)
            self.leaked = still_alive(list(seen.values()), wait=0.3)
            for p in self.leaked:  # their command lines, read while they still run (reported)
                _ = p.cmdline
            kill_pids([p.pid for p in still_alive(self.leaked)])  # same start time: still them
        close_quietly(self.proc.stdin)
        self._check_home()  # a shell writes its history file as it exits
        self._observe_escapes(net_after)
        self._remove_sandbox()
        with _live_lock:
            _live.discard(self)

    def _table(self) -> dict[int, ProcInfo]:
        """The processes a close looks through for what the subject left: for a forked subject
        the fork server's tree (a subreaper: nothing its subjects start can leave it, daemons
        included), for a sandboxed command its ``bwrap``'s (its own PID namespace: the same),
        else the machine's whole table, where an orphan lands below init (issue 21: reading
        every process's ``stat`` at each close was the harness's largest cost per case on a
        busy machine)."""
        server = self._fork_server
        root = (server.proc.pid if server is not None and server.proc is not None
                else self.proc.pid if self._box.active else None)
        table = subtree_table(root) if root is not None else None
        return process_table() if table is None else table

    def host_pid(self, pid: int) -> int | None:
        """The harness's pid of the subject's process ``pid`` as the subject sees it (in the
        sandbox, its own PID namespace's); None when no process of the subject has it."""
        if not self._box.active:
            return pid
        for p in descendants(self.proc.pid):
            try:
                status = Path(f"/proc/{p.pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:"):
                    ids = line.split()[1:]
                    if len(ids) > 1 and ids[-1] == str(pid):
                        return p.pid
        return None

    # --- escape attempts --------------------------------------------------------------------

    def _status(self) -> Any:
        """The subject's exit status; a sandboxed command's ``bwrap`` reports a signal as
        128 + its number: shown as the negative signal number, like an unsandboxed one."""
        code = self.proc.returncode
        if (self._fork_server is None and getattr(self, "_box", None) is not None
                and self._box.active and isinstance(code, int) and 128 < code < 160):
            return -(code - 128)
        return code

    def _network(self) -> dict[str, int]:
        if not self._box.active:
            return {}
        if self._fork_server is not None:
            return self._fork_server.network()
        inside = descendants(self.proc.pid) if processes_supported() else []
        return sandbox.network_counters(inside[0].pid) if inside else {}

    def _count_processes(self, tracked: list[ProcInfo]) -> None:
        mine = {p.pid for p in tracked if p.pid != self.proc.pid}
        limit = self._confinement.processes if self._box.active else None
        if len(mine) >= min(FORK_BOMB_PROCESSES, max(8, limit - 4) if limit else 1 << 30):
            self.escapes.append(f"fork bomb: {len(mine)} processes running at once"
                                + (f" (held at the sandbox's process limit, {limit})"
                                   if limit else " (no process limit without the sandbox)"))

    @property
    def unseen_escapes(self) -> frozenset[str]:
        """Kinds of escape this session cannot see (without the sandbox, a read of a credential
        file already read since it last changed: :meth:`sandbox.Watch.unseen`)."""
        watch = self._launch.outside
        return watch.unseen() if watch is not None else frozenset()

    def _observe_escapes(self, net_after: dict[str, int]) -> None:
        """Fill :attr:`escapes` (called at close)."""
        stopped = ""
        if self._launch.watched:
            stopped = sandbox.WATCHDOG.unwatch(self.proc.pid)
        elif self._fork_server is not None and self._box.active:
            stopped = self._fork_server.bomb
        if stopped and not any(e.startswith("fork bomb") for e in self.escapes):
            self.escapes.append(f"fork bomb: {stopped}")
        if self._leftovers is not None and self.proc.poll() is not None:
            # A sandboxed command's namespace as it exited, listed by the shim on stderr.
            self._drain_stderr(1.0)
            left = [line.decode("utf-8", "replace").split(" ", 1)
                    for line in self.io.shim_report()]
            inside = [ProcInfo(int(p[0]), 0, 0, "S", p[1].strip() if len(p) > 1 else "")
                      for p in left if p[0].isdigit()]
            if inside:
                self.leaked = [*(self.leaked or []), *inside]
        if self.leaked:
            shown = ", ".join(f"{p.cmdline or p.pid}"[:80] for p in self.leaked[:3])
            self.escapes.append(f"process outliving its case: {len(self.leaked)} left running "
                                f"after close ({shown}); killed"
                                + (" with the sandbox" if self._box.active else ""))
        self.escapes.extend(self._launch.escapes(self._net_before, net_after))

    def _orphans(self, table: dict[int, ProcInfo]) -> list[ProcInfo]:
        """Daemons of a forked subject that never exec'd: the fork server is a subreaper, so they
        are its children now (started since this subject, not a subject); this subject's are
        those holding one of its pipes. One that closed every descriptor is stopped with the
        fork server at the end of the run. ``table``: a process table read under the server's
        lock (no subject is forked while it is read)."""
        server = self._fork_server
        if server is None or self._start_ticks is None:
            return []
        orphans = [p for p in table.values() if p.ppid == server.reaper_pid
                   and p.pid not in server.spawned and p.start >= self._start_ticks]
        return [p for p in orphans if self._pipes & _open_pipes(p.pid)]

    def _markers(self) -> list[str]:
        return [f"TOOLUSE_WORKDIR={self.workdir}"] + ([f"HOME={self._home}"] if self._home else [])

    def _dirs(self) -> list[Path]:
        return [self.workdir] + ([self._sandbox] if self._sandbox is not None else [])

    def __enter__(self) -> ProcessSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_pipes(pid: int) -> set[str]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return set()
    links = set()
    for fd in fds:
        try:
            links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return links


def _allowed(allowance: float) -> str:
    """The allowance for load in a message (nothing when there was none)."""
    return f" + {allowance:.1f}s allowed for load" if allowance >= 0.05 else ""


def _wait_exit(proc: Any, wait: float) -> bool:
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return False
    return True
