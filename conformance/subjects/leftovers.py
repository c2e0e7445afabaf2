"""What a subject did beyond its answers, found when its session closes.

:class:`LeftoverWatch` is the part of :class:`~conformance.subjects.process.ProcessSession` that
looks for it: the processes the subject left running (:meth:`~LeftoverWatch._sweep_leftovers`:
below it, in its group, marked as its case's by their environment or directories, a forked
subject's orphans under the fork server) and its escape attempts (a fork bomb, a process
outliving its case, what the sandbox saw: :meth:`~LeftoverWatch._observe_escapes`), and where a
subject's process is seen from the harness (:meth:`~LeftoverWatch.host_pid`). The session's life
cycle (start, calls, close, kill) stays in :mod:`conformance.subjects.process`; the attributes
below are the ones it sets up for this watch.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from conformance.subjects import sandbox
from conformance.subjects.forkserver import ForkServer
from conformance.subjects.isolation import (
    ProcInfo,
    case_processes,
    descendants,
    kill_pids,
    process_table,
    processes_supported,
    still_alive,
    subtree_table,
)
from conformance.subjects.launch import Confinement, Launch
from conformance.subjects.pipes import Pipes

#: A subject with this many processes at once is reported as a fork bomb.
FORK_BOMB_PROCESSES = 128


class LeftoverWatch:
    """Leftovers and escape attempts of one subject process (a base of
    :class:`~conformance.subjects.process.ProcessSession`, which sets these attributes)."""

    workdir: Path
    proc: Any
    io: Pipes
    leaked: list[ProcInfo] | None
    escapes: list[str]
    _launch: Launch
    _box: sandbox.Status
    _fork_server: ForkServer | None
    _confinement: Confinement
    _home: Path | None
    _sandbox: Path | None
    _leftovers: str | None
    _leader_start: int | None
    _start_ticks: int | None
    _pipes: set[str]
    _net_before: dict[str, int]

    def _sweep_leftovers(self, tracked: list[ProcInfo], in_group: list[ProcInfo]
                         ) -> list[ProcInfo]:
        """At close, after the group kill: the processes that outlived the subject (they are
        killed), with their command lines. ``tracked``: what was below it before closing;
        ``in_group``: those of them the group kill reached."""
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
        leaked = still_alive(list(seen.values()), wait=0.3)
        for p in leaked:  # their command lines, read while they still run (reported)
            _ = p.cmdline
        kill_pids([p.pid for p in still_alive(leaked)])  # same start time: still them
        return leaked

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
            self.io.drain_stderr(1.0)
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
