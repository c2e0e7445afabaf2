"""Isolation: deadlines, process-group kills and leaked-process detection for subjects.

Every subject runs in a child process of its own session and process group (in-process
``module:attr`` subjects are hosted by ``python -m conformance.subjects.host``, commands run under
``/bin/sh -c``). So a subject that hangs, crashes, calls ``os._exit`` or prints forever cannot take
the suite down: the harness stops waiting at the deadline, kills the whole group and goes on.

Why a child process rather than a worker thread: a Python thread cannot be stopped, so a handler
stuck in a loop (or in ``input()``) would keep running for the rest of the run, and ``os._exit`` or
a segfault in a handler would end the harness itself. A process can always be killed, and the
process tree it leaves behind can be inspected, which is what the leak check needs.

Leak detection is Linux-only (it reads ``/proc``); elsewhere :func:`processes_supported` is False
and the leak check skips with that reason.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

PROC = Path("/proc")


@functools.cache
def processes_supported() -> bool:
    """True where the process table can be read (``/proc``; asked once per process)."""
    return (PROC / "self" / "stat").is_file()


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgrp: int
    state: str
    #: The command line when it was given (None: read from ``/proc`` when first asked for, see
    #: :attr:`cmdline`).
    given_cmdline: str | None = None
    #: Start time (clock ticks since boot): with the pid, identifies the process.
    start: int = 0

    @cached_property
    def cmdline(self) -> str:
        """The command line, read once when first asked for: a process table reads only each
        process's ``stat`` (reading every ``cmdline`` too took most of a table's time, and the
        harness reads a table several times per subject). Ask before killing a process whose
        command line will be reported."""
        return self.given_cmdline if self.given_cmdline is not None else _read_cmdline(self.pid)

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "cmdline": self.cmdline}


def read_proc(pid: int, name: str) -> bytes:
    """The bytes of ``/proc/<pid>/<name>`` (OSError when it cannot be read): plain ``os``
    calls, several times cheaper than ``Path.read_text`` (the harness reads these per call)."""
    fd = os.open(f"{PROC}/{pid}/{name}", os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def children(pid: int, tid: int | None = None) -> list[int]:
    """The pids of the children of ``pid``'s thread ``tid`` (default its main thread: a child
    belongs to the thread that forked it); none where they cannot be read."""
    try:
        return [int(c) for c in read_proc(pid, f"task/{pid if tid is None else tid}/children")
                .split()]
    except (OSError, ValueError):
        return []


def _read_cmdline(pid: int) -> str:
    try:
        raw = read_proc(pid, "cmdline")
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()


def _read_stat(pid: int) -> ProcInfo | None:
    """``pid``'s entry (None: gone or unreadable). One read of ``stat`` and the fields up to the
    start time only: a process table reads every process's (a table of 185 processes cost 3.7
    ms of CPU, parsed in full; issue 21)."""
    try:
        fd = os.open(f"{PROC}/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = os.read(fd, 4096)  # a few hundred bytes: one read
    except OSError:
        return None
    finally:
        os.close(fd)
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    rest = raw[raw.rfind(b")") + 2:].split(None, 20)
    if len(rest) < 20:
        return None
    try:
        return ProcInfo(pid, int(rest[1]), int(rest[2]), rest[0].decode("ascii", "replace"),
                        None, int(rest[19]))
    except ValueError:
        return None


def process_table() -> dict[int, ProcInfo]:
    """Every live (non-zombie) process visible to us, by pid."""
    table: dict[int, ProcInfo] = {}
    if not processes_supported():
        return table
    for name in os.listdir(PROC):
        if name.isdigit():
            info = _read_stat(int(name))
            if info is not None and info.state not in ("Z", "X"):
                table[info.pid] = info
    return table


def alive(pid: int) -> bool:
    """True when ``pid`` runs (zombies count as gone)."""
    if processes_supported():
        info = _read_stat(pid)
        return info is not None and info.state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def descendants(root: int, table: dict[int, ProcInfo] | None = None) -> list[ProcInfo]:
    """All processes below ``root`` in the process tree (not ``root`` itself), from ``table``
    when one is given. Without one, the tree is walked from ``root`` down through each thread's
    ``children`` file: a few reads of the subject's own processes, where a table reads every
    process of the machine (~2 ms for 185; issue 21). A kernel without those files: a table."""
    if table is None and _children_files():
        found: dict[int, ProcInfo] = {}
        _walk_down(root, found)
        return list(found.values())
    table = process_table() if table is None else table
    children: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    out: list[ProcInfo] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child.pid)
    return out


@functools.cache
def _children_files() -> bool:
    """True where the kernel lists a thread's children (``CONFIG_PROC_CHILDREN``)."""
    return os.path.isfile(f"{PROC}/self/task/{os.getpid()}/children")


def _thread_children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (:func:`children` of each)."""
    try:
        threads = os.listdir(f"{PROC}/{pid}/task")
    except OSError:  # gone
        return []
    return [c for tid in threads for c in children(pid, int(tid))]


def _walk_down(root: int, found: dict[int, ProcInfo]) -> None:
    """Add the live processes below ``root`` not in ``found`` yet, and those below them, read
    through each thread's ``children`` file (one known already is not descended into again)."""
    todo = [root]
    while todo:
        for pid in _thread_children(todo.pop()):
            if pid not in found:
                info = _read_stat(pid)
                if info is not None and info.state not in ("Z", "X"):
                    found[pid] = info
                    todo.append(pid)


def subtree_table(root: int) -> dict[int, ProcInfo] | None:
    """A process table of ``root`` and what is below it, walked down its threads' ``children``
    files; None on a kernel without those files (read a whole :func:`process_table` then).

    Where ``root`` is a subreaper (the fork server), nothing a subject starts can leave this
    tree: an orphan, a double-forked daemon included, is re-parented to ``root``. The close of
    a forked subject reads this instead of the machine's whole table (every process's ``stat``:
    hundreds while a test suite runs; the most expensive thing a case did, issue 21). Processes
    re-parented to ``root`` during the walk are caught by reading ``root``'s children again
    until nothing new appears (what is below them is walked then too)."""
    if not _children_files():
        return None
    table: dict[int, ProcInfo] = {}
    info = _read_stat(root)
    if info is not None and info.state not in ("Z", "X"):
        table[root] = info
    _walk_down(root, table)
    for _ in range(5):  # orphans re-parented to root while the tree was walked
        before = len(table)
        _walk_down(root, table)
        if len(table) == before:
            break
    return table


def children_of(pid: int) -> list[int]:
    """The pids of ``pid``'s children (zombies included)."""
    if _children_files():
        return children(pid)
    return [p.pid for p in process_table().values() if p.ppid == pid]  # no CONFIG_PROC_CHILDREN


def group_members(pgrp: int, table: dict[int, ProcInfo] | None = None) -> list[ProcInfo]:
    table = process_table() if table is None else table
    return [p for p in table.values() if p.pgrp == pgrp]


def kill_group(pgrp: int, sig: int = signal.SIGKILL) -> None:
    """Signal a whole process group; a group that is already gone is fine."""
    try:
        os.killpg(pgrp, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_pids(pids: list[int], sig: int = signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def still_alive(candidates: list[ProcInfo], wait: float = 0.0) -> list[ProcInfo]:
    """Those of ``candidates`` still running after up to ``wait`` s (same pid and start time;
    returned as they are now: a process may have exec'd since)."""
    end = time.monotonic() + wait
    while True:
        left = []
        for c in candidates:
            now = _read_stat(c.pid)
            if now is not None and now.state not in ("Z", "X") and now.start == c.start:
                left.append(now)
        if not left or time.monotonic() >= end:
            return left
        time.sleep(0.02)


class Deadline:
    """An absolute point in time (monotonic clock)."""

    def __init__(self, seconds: float | None) -> None:
        self.at = None if seconds is None else time.monotonic() + seconds

    def remaining(self) -> float | None:
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at


def grace_for(timeout: float) -> float:
    """How long past the subject's own command timeout the harness waits for an answer."""
    return max(2.0, timeout * 0.5)


def case_processes(env_markers: list[str], dirs: list[Path],
                   since: int | None = None,
                   table: dict[int, ProcInfo] | None = None) -> list[ProcInfo]:
    """Processes that belong to a test case even after they left its process tree and group
    (a double fork and ``setsid``): an environment entry from ``env_markers`` (inherited across
    ``exec``), or a working directory under one of ``dirs``. Our own process is never included.
    ``since`` (start ticks of the case's subject) skips every older process unread; ``table``
    is a process table already read (:func:`process_table`)."""
    found: list[ProcInfo] = []
    if not processes_supported():
        return found
    wanted = [m.encode() for m in env_markers]
    roots = [str(d) for d in dirs]
    for info in (process_table() if table is None else table).values():
        if info.pid == os.getpid() or (since is not None and info.start < since):
            continue
        try:
            environ = read_proc(info.pid, "environ").split(b"\0")
            cwd = os.readlink(f"{PROC}/{info.pid}/cwd")
        except OSError:  # gone, or not ours
            continue
        if any(m in environ for m in wanted) or any(cwd == r or cwd.startswith(r + "/")
                                                     for r in roots):
            found.append(info)
    return found


#: Address space a subject process may take (``RLIMIT_AS``) unless ``TOOLUSE_MEMORY_LIMIT``
#: (bytes; ``0``: no limit) or ``tooluse run --memory-limit`` says otherwise.
DEFAULT_MEMORY_LIMIT = 2 * 1024**3


def memory_limit() -> int | None:
    """The subject memory limit in bytes (None: unlimited)."""
    raw = os.environ.get("TOOLUSE_MEMORY_LIMIT", "")
    try:
        value = int(raw) if raw else DEFAULT_MEMORY_LIMIT
    except ValueError:
        value = DEFAULT_MEMORY_LIMIT
    return value if value > 0 else None


def limit_memory() -> None:
    """Apply :func:`memory_limit` to this process (and so to what it starts)."""
    limit = memory_limit()
    if limit is None:
        return
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):  # not on this platform
        pass


def proc_info(pid: int) -> ProcInfo | None:
    """The process ``pid`` as it is now (None when gone or unreadable)."""
    return _read_stat(pid)
