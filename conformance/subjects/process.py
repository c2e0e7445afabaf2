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
answer means, close, kill); its I/O (framing the inputs as JSON
lines, reading the answers, keeping stderr's end) is :mod:`conformance.subjects.pipes`; what the
subject left behind and tried is looked for by :mod:`conformance.subjects.leftovers`.
"""

from __future__ import annotations

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
from conformance.subjects.leftovers import LeftoverWatch
from conformance.subjects.pipes import (
    EOF,
    MAX_LINE,
    SILENT,
    Pipes,
    close_quietly,
    decode_answer,
)
from conformance.subjects.timing import Miss, Patience, process_starvation, record

#: A subject still running this many times the close grace after its input was closed is a fault
#: (it would never exit); one that exits between the grace and this is a note.
NEVER_EXITS = 3


#: A subject that ends with status 0 instead of answering is most often not a command subject at
#: all: a module that defines a factory, run as a program (it defines its class and exits).
ENDED_CLEANLY_HINT = (": it ended instead of answering. A command subject reads one JSON "
                      "object per line on stdin and answers each with one line on stdout "
                      "until stdin closes; a Python file that defines a factory is judged with "
                      "--bash FILE:factory (or --editor FILE:factory), not as a command")

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


class ProcessSession(LeftoverWatch):
    """One subject process for one test case (what it left behind and tried at close:
    :class:`~conformance.subjects.leftovers.LeftoverWatch`)."""

    def __init__(self, argv: Sequence[str], *, workdir: Path, tool_type: str, timeout: float,
                 env: Mapping[str, str] | None = None, handshake: bool = False,
                 start_timeout: float = 20.0, label: str = "subject",
                 case_deadline: float | None = None,
                 options: Mapping[str, Any] | None = None,
                 fork_server: ForkServer | None = None,
                 confinement: Confinement) -> None:
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
        self._confinement = confinement
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
        self._launch = launch(LaunchSpec(
            tuple(argv), self._confinement, cwd=self.workdir, env=case_env, box=box,
            folders=Folders(writable=(self.workdir,),
                            private_in=run_root(self.workdir) or self.workdir.parent,
                            overlays_in=self.workdir.parent),
            limits="shim", label=self.label, watch=True,
            spawn=None if fork_server is None else partial(fork_server.spawn, str(self.workdir)),
            popen=dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
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

    # --- start-up ---------------------------------------------------------------------------

    def _handshake(self, wait: float) -> None:
        patience = Patience(wait, "start", process_starvation(self.proc.pid))
        line = patience.wait(self.io.next_line)
        if line is None:
            self._kill()
            raise SubjectStartError(f"{self.label} did not start within {wait:g}s (the start-up "
                                    f"timeout{_allowed(patience.allowance)}){self.io.stderr_note()}")
        if line is EOF:
            self.proc.wait(timeout=5)
            self.io.drain_stderr()
            raise SubjectStartError(f"{self.label} exited at start (status {self._status()})"
                                    f"{self._sandbox_note()}{self.io.stderr_note()}")
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
                        f"--startup-timeout){self.io.stderr_note()}")
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
            self.io.drain_stderr()
            return self._fault(f"{self.label} is not running (status {self._status()})"
                               f"{self.io.stderr_note()}")
        try:
            self.io.write(tool_input)
        except OSError as e:
            if self.proc.poll() is not None or _wait_exit(self.proc, 1.0):
                self.io.drain_stderr()
            return self._fault(f"{self.label} stopped reading its input ({e}){self.io.stderr_note()}")
        # Judged fairly: the deadline grows by the load measured while waiting (timing.py).
        patience = Patience(wait, what, process_starvation(self.proc.pid))
        line = patience.wait(self.io.watching_silence() if watch_silence else self.io.next_line)
        elapsed = time.monotonic() - start
        if line is SILENT:  # it read the input and waits for more: its answer is held back
            self._kill()
            self.io.drain_stderr(0.5)
            r = self._fault(f"{silence.HINT}{self.io.stderr_note()}")
            r.elapsed = elapsed
            return r
        if line is None:
            self._kill()
            self.io.drain_stderr(0.5)
            r = self._fault(f"no answer within {wait:g}s{_allowed(patience.allowance)}; the "
                            "subject was stopped")
            r.timed_out, r.elapsed, r.allowance = True, elapsed, patience.allowance
            return r
        if line is EOF:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
            self.io.drain_stderr()
            status = self._status()
            r = self._fault(f"{self.label} exited while answering (status {status})"
                            f"{self._sandbox_note()}{self.io.stderr_note()}"
                            f"{ENDED_CLEANLY_HINT if status == 0 else ''}")
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
            self.leaked = self._sweep_leftovers(tracked, in_group)
        close_quietly(self.proc.stdin)
        self._check_home()  # a shell writes its history file as it exits
        self._observe_escapes(net_after)
        self._remove_sandbox()
        with _live_lock:
            _live.discard(self)

    # --- escape attempts --------------------------------------------------------------------

    def _status(self) -> Any:
        """The subject's exit status; a sandboxed command's ``bwrap`` reports a signal as
        128 + its number: shown as the negative signal number, like an unsandboxed one."""
        code = self.proc.returncode
        if (self._fork_server is None and getattr(self, "_box", None) is not None
                and self._box.active and isinstance(code, int) and 128 < code < 160):
            return -(code - 128)
        return code

    def __enter__(self) -> ProcessSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _allowed(allowance: float) -> str:
    """The allowance for load in a message (nothing when there was none)."""
    return f" + {allowance:.1f}s allowed for load" if allowance >= 0.05 else ""


def _wait_exit(proc: Any, wait: float) -> bool:
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return False
    return True
