"""Bash steps starting background jobs in the forms models write (seed 003 "Implement the bash
tool": the command is answered, not held until the job ends), and how the machine tells whether a
job still runs (by its pid on the host where known, else by its heartbeat file growing)."""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.properties.bash_model import Job
from conformance.properties.bash_step import Ctx, Disagreement, Op, short
from conformance.session import ToolSession
from conformance.subjects.isolation import alive, processes_supported

#: Background jobs as models write them: (form, stays in the shell's process group). ``{job}``
#: is a job that appends to a heartbeat file while it runs, ``{log}`` a log file, ``{dir}`` a
#: directory.
BACKGROUND_FORMS = (
    ("{job} &", True),
    ("nohup {job} > /dev/null 2>&1 &", True),
    ("{job} > {log} 2>&1 &", True),
    ("({job} &)", True),
    ("{job} & disown", True),
    ("nohup {job} &", True),
    ("(cd {dir} && {job}) &", True),
    ("setsid {job} > /dev/null 2>&1 &", False),
    ("python3 -m http.server 0 --bind 127.0.0.1 > {log} 2>&1 &", False),
    ("{job} & echo started", True),
)


@dataclass
class Background(Op):
    """Starts a background job: answered in time, without an error, the session in step."""

    form: int
    kind = "background"

    def run(self, ctx: Ctx) -> None:
        m = ctx.m
        n = len(ctx.inputs)
        heartbeat = os.path.join(m.base, f"heartbeat-{n}")
        # The job writes its pid, then a heartbeat while it runs (for 60 s at most: a job that
        # leaves the shell's group, as setsid's does, ends by itself wherever no sweep stops it).
        job = (f"sh -c 'echo $$ > {shlex.quote(heartbeat + '.pid')}; "
               f"for i in $(seq 300); do echo . >> {shlex.quote(heartbeat)}; sleep 0.2; done'")
        template, in_group = BACKGROUND_FORMS[self.form]
        command = template.format(job=job, log=shlex.quote(os.path.join(m.base, f"job-{n}.log")),
                                  dir=shlex.quote(m.subdirs()[0]))
        r = ctx.send({"command": command}, self.kind)
        if r.is_error and ctx.settled:
            raise Disagreement("hang:background", f"`{command[:80]}` (a background job) was "
                               "answered with an error (held until the tool's timeout?)",
                               short(r), {"is_error": False})
        ctx.expect_status(r, "ok", f"`{command[:80]}`")
        ctx.disturbed(self.kind)
        watched = "{job}" in template and in_group and _appears(heartbeat + ".pid")
        m.jobs.append(Job(template.format(job="JOB", log="LOG", dir="DIR"),
                          heartbeat if watched else None, in_group))


def job_pids(s: ToolSession, heartbeats: list[str]) -> dict[str, int | None]:
    """Each job's pid on the host (mapped from a sandboxed subject's own), None where unknown.
    Taken before the restart: a process already gone has no mapping."""
    host_pid = getattr(s, "host_pid", None)
    out: dict[str, int | None] = {}
    for hb in heartbeats:
        try:
            pid: int | None = int(Path(hb + ".pid").read_text().strip())
            if callable(host_pid):
                pid = host_pid(pid)  # None: not among the subject's processes
        except (OSError, ValueError, TypeError):
            pid = None
        out[hb] = pid if processes_supported() else None
    return out


def still_running(pids: dict[str, int | None]) -> list[str]:
    """The jobs (by heartbeat file) still running: by their pid where known, else by whether
    their heartbeat keeps growing."""
    known = {hb: p for hb, p in pids.items() if p}
    end = time.monotonic() + 2.0
    while time.monotonic() < end and any(alive(p) for p in known.values()):
        time.sleep(0.02)
    running = [hb for hb, p in known.items() if alive(p)]
    unknown = [hb for hb, p in pids.items() if not p]
    return sorted(running + (_still_beating(unknown) if unknown else []))


def _still_beating(paths: list[str], quiet: float = 0.5, within: float = 3.0) -> list[str]:
    """The heartbeat files that keep growing (``quiet`` seconds without growth: stopped)."""
    end = time.monotonic() + within
    last = {p: (_size(p), time.monotonic()) for p in paths}
    while last and time.monotonic() < end:
        time.sleep(0.1)
        now = time.monotonic()
        for p, (size, since) in list(last.items()):
            if _size(p) != size:
                last[p] = (_size(p), now)
            elif now - since >= quiet:
                del last[p]
    return sorted(last)


def _appears(path: str, within: float = 1.0) -> bool:
    """Wait for a job to write its pid file (it starts after the command is answered)."""
    end = time.monotonic() + within
    while not _read(path).endswith("\n"):  # created, then written: wait for the whole line
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1
