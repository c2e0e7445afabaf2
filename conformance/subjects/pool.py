"""Start-up paid once, not a hundred times: command subjects started ahead of need (issue 41).

Every case gets a fresh subject process, and so does every example of a model check. A command
subject that takes seconds to start (an interpreter importing a large SDK) paid that start-up in
every one of them, one after another: an 8 s start-up made the bash family take 629 s.

:class:`StartPool` starts a run's command subjects *ahead* of the cases that will use them, each
in a fresh working directory of its own, and makes each one ready (the readiness call, under the
start-up timeout) in the background; a case takes one that is ready (or waits for the next). So
start-up overlaps the work of the cases already running.

- **Fresh, never reused.** A subject is handed out once, to one case (or one example of a model
  check: :meth:`StartPool.fresh`), and the taker closes it. Spares still waiting when the run's
  main pass ends are closed and their directories removed (:meth:`StartPool.close`).
- **Nothing ahead before a subject is seen to start.** Until one start of a subject has passed
  its readiness call, every case starts its own subject when it runs, as without the pool: a
  subject whose first starts fail for good (a silent subject, one that exits) costs no more
  starts than before, and the runner's fail-fast rule holds.
- **Bounded.** At most :attr:`StartPool.ahead` spares per subject (the run's ``--jobs`` plus
  one, and never more than its cases and examples still to come), and at most ``--jobs`` plus
  one subject starting at once in the whole run (:class:`StartGate`), a start someone is waiting
  for going before one started ahead. A subject whose every start so far mostly waited (its
  processes used under :data:`LIGHT_SHARE` of the start's wall time in CPU: asleep, or waiting
  on a network) costs no core while it starts: :data:`LIGHT_FACTOR` times as many of its starts
  may run at once, and as many spares; an unknown or CPU-bound start keeps the plain bounds.
- **Counted.** :class:`StartStats`: how many subjects were started, the seconds they took to
  start, and how long cases and checks waited for one (the part start-up did not overlap); the
  run's summary and ``results.json`` report it.

Only command subjects are pooled (:func:`pooled`): an in-process subject is forked from its fork
server (its start-up, the import, is paid once per run already), and loops and workers start
against a simulation of their own.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.subjects import timing
from conformance.subjects.isolation import descendants, read_proc

#: Opens the subject in a working directory (the runner's ``subject.open`` with the run's options).
Opener = Callable[[Any, Path], Any]


#: ``TOOLUSE_START_POOL=0``: every case and check starts its own subject when it needs one, as
#: before the pool (the benchmark's "before"; a way out should the pool ever be in the way).
#: Read at the entry point into the run's value (``conformance.run.Run.start_pool``).
ENV_SWITCH = "TOOLUSE_START_POOL"


def pooled(subject: Any, enabled: bool = True) -> bool:
    """Whether the run starts ``subject`` ahead of need: a command subject (unless the run
    says not to, ``enabled`` False: ``TOOLUSE_START_POOL=0``)."""
    return (enabled and getattr(subject, "kind", None) == "command"
            and callable(getattr(subject, "open", None)))


@dataclass
class StartStats:
    """What starting subjects cost a run."""

    #: Subject processes started (cases, spares, model-check examples, replays).
    started: int = 0
    #: Seconds those starts took (open and readiness call), added up: they overlap.
    seconds: float = 0.0
    #: Seconds cases and checks spent waiting for a subject to start (what did not overlap).
    waited: float = 0.0
    #: Spares started ahead and never used (closed at the end of the run's main pass).
    unused: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"started": self.started, "seconds": round(self.seconds, 3),
                "waited": round(self.waited, 3), "unused": self.unused}

    def text(self) -> str:
        """One line for the run's summary."""
        if not self.started:
            return ""
        spare = f", {self.unused} started ahead went unused" if self.unused else ""
        return (f"start-up: {self.started} subject{'s' if self.started != 1 else ''} started in "
                f"{self.seconds:.1f}s in all; checks waited {self.waited:.1f}s for them"
                f"{spare}")


#: A start whose processes used less CPU than this share of its wall time mostly waited (asleep,
#: on the network): such starts may be :data:`LIGHT_FACTOR` times as many at once, and as many
#: ahead, as the others (an 8 s sleep costs no core; an 8 s import does).
LIGHT_SHARE = 0.25
LIGHT_FACTOR = 4


class PoolClosed(Exception):
    """A spare not started: the pool closed (or its subject stopped) before its turn came."""


class StartGate:
    """At most ``limit`` subjects starting at once; a start somebody waits for (``urgent``)
    goes before one started ahead."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._cond = threading.Condition()
        self._active = 0
        self._urgent = 0

    @contextlib.contextmanager
    def slot(self, urgent: bool) -> Iterator[None]:
        with self._cond:
            self._urgent += urgent
            try:
                while self._active >= self.limit or (not urgent and self._urgent):
                    self._cond.wait()
            finally:
                self._urgent -= urgent
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()


@dataclass
class Start:
    """One subject started (or not) in its own working directory."""

    subject: str
    workdir: Path
    session: Any = None
    #: What went wrong, and when: ``open`` (it did not start) or ``ready`` (its readiness call).
    error: BaseException | None = None
    stage: str = ""
    seconds: float = 0.0
    #: Deadlines that passed while it started (they go with it to the case that takes it).
    misses: list[timing.Miss] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.session is not None

    def opened(self) -> Any:
        """The session; raises what opening it raised."""
        if self.stage == "open" and self.error is not None:
            raise self.error
        return self.session

    def made_ready(self) -> None:
        """Raises what the readiness call raised; else the case's clock starts now (a spare may
        have waited since it was ready)."""
        if self.stage == "ready" and self.error is not None:
            raise self.error
        begin = getattr(self.session, "start_case", None)
        if callable(begin):
            begin()

    def discard(self) -> None:
        """Close a start nobody took (its directory removed)."""
        import shutil

        if self.session is not None:
            with contextlib.suppress(Exception):
                self.session.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


class _Spare:
    """A start running (or done) in the background for a subject."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.start: Start | None = None


@dataclass
class _Subject:
    cases_left: int = 0
    #: Fresh subjects a check said it will still ask for (:meth:`StartPool.fresh`'s ``ahead``).
    spawns_ahead: int = 0
    spares: deque[_Spare] = field(default_factory=deque)
    warm: bool = False
    stopped: bool = False
    #: The largest CPU share seen in a start of it (None: no start measured yet).
    heaviest: float | None = None


def cpu_share(session: Any, seconds: float) -> float | None:
    """The CPU time the subject's processes used so far (its start) over ``seconds`` of wall
    time; None when it cannot be read (not Linux, no process)."""
    pid = getattr(getattr(session, "proc", None), "pid", None)
    if not isinstance(pid, int) or seconds <= 0:
        return None
    ticks = 0
    for p in [pid, *(d.pid for d in descendants(pid))]:
        try:
            fields = read_proc(p, "stat").rsplit(b")", 1)[1].split()
            ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None
    return ticks / os.sysconf("SC_CLK_TCK") / seconds


class StartPool:
    """Ready subjects started ahead of need, per subject (see the module docstring).

    ``opener(subject, workdir)`` opens a subject as the run does; ``ready_timeout`` is the
    start-up timeout of its readiness call; the working directories are made in ``root``.
    ``jobs``: the run's cases at once (spares: ``jobs + 1`` per subject at most; subjects
    starting at once in the whole run: ``jobs + 1``)."""

    def __init__(self, opener: Opener, root: Path, *, jobs: int, ready_timeout: float,
                 ahead: int | None = None) -> None:
        self.opener, self.root, self.ready_timeout = opener, root, ready_timeout
        self.ahead = jobs + 1 if ahead is None else ahead
        self.gate = StartGate(jobs + 1)
        #: Starts that mostly wait (:data:`LIGHT_SHARE`) are bounded apart, more of them at once.
        self.light_gate = StartGate(LIGHT_FACTOR * (jobs + 1))
        self.stats = StartStats()
        self._lock = threading.Lock()
        self._subjects: dict[str, _Subject] = {}
        self._closed = False
        # Long-lived threads: a sandboxed subject dies with the thread that started it (bwrap's
        # --die-with-parent is the parent *thread*'s death signal), so a spare is never started
        # from a thread that ends before the run does.
        self._starter = ThreadPoolExecutor(max_workers=self.light_gate.limit,
                                           thread_name_prefix="tooluse-start")

    # --- what is to come -----------------------------------------------------------------

    def expect(self, subject: Any, cases: int) -> None:
        """``subject`` has ``cases`` more cases to run (the run's plan)."""
        with self._lock:
            self._state(subject).cases_left += cases

    def stop(self, subject: Any) -> None:
        """Start no more of ``subject`` (its start failed for good); its spares are closed, in
        the background (the caller may hold the run's lock; :meth:`close` waits for them)."""
        with self._lock:
            state = self._state(subject)
            state.stopped = True
            spares = list(state.spares)
            state.spares.clear()
        if spares:
            try:
                self._starter.submit(self._discard, spares)
            except RuntimeError:  # closed meanwhile: no thread left to do it
                self._discard(spares)

    # --- taking ------------------------------------------------------------------------------

    def take(self, subject: Any) -> Start:
        """A fresh start of ``subject`` for a case: a spare when one is there (waiting for it
        to be ready), else one started now."""
        with self._lock:
            state = self._state(subject)
            state.cases_left = max(0, state.cases_left - 1)
        return self._take(subject)

    def fresh(self, subject: Any, ahead: int = 0) -> Start:
        """A fresh start of ``subject`` for a check that needs one more (a model check's
        example); ``ahead``: how many more it will still ask for (started ahead, within the
        pool's bounds)."""
        with self._lock:
            self._state(subject).spawns_ahead = max(0, ahead)
        return self._take(subject)

    def _take(self, subject: Any) -> Start:
        t0 = time.monotonic()
        with self._lock:
            state = self._state(subject)
            spare = state.spares.popleft() if state.spares else None
        if spare is None:
            got = self._start(subject, urgent=True)
        else:
            spare.done.wait()
            assert spare.start is not None
            got = spare.start
        with self._lock:
            self.stats.waited += time.monotonic() - t0
            if got.ok:
                state.warm = True
        self._fill(subject)
        return got

    # --- starting ------------------------------------------------------------------------------

    def _state(self, subject: Any) -> _Subject:
        return self._subjects.setdefault(subject.name, _Subject())

    def _light(self, subject: Any) -> bool:
        """Whether every start of ``subject`` seen so far mostly waited (a CPU share under
        :data:`LIGHT_SHARE`): an interpreter asleep or waiting on the network, not one
        importing for seconds of CPU."""
        with self._lock:
            heaviest = self._state(subject).heaviest
        return heaviest is not None and heaviest < LIGHT_SHARE

    def _weigh(self, subject: Any, got: Start) -> None:
        share = cpu_share(got.session, got.seconds)
        with self._lock:
            state = self._state(subject)
            state.heaviest = max(state.heaviest or 0.0, 1.0 if share is None else share)

    def _start(self, subject: Any, urgent: bool) -> Start:
        workdir = Path(tempfile.mkdtemp(prefix="tooluse-case-", dir=self.root)).resolve()
        got = Start(subject.name, workdir)
        gate = self.light_gate if self._light(subject) else self.gate
        with gate.slot(urgent), timing.collecting() as misses:
            if not urgent and not self._wanted(subject):  # closed while it waited for a slot
                got.error, got.stage = PoolClosed("the start pool closed"), "open"
                return got
            t0 = time.monotonic()
            try:
                try:
                    got.session = self.opener(subject, workdir)
                except BaseException as e:
                    got.error, got.stage = e, "open"
                    return got
                ready = getattr(got.session, "wait_ready", None)
                try:
                    if callable(ready):
                        ready(self.ready_timeout)
                except BaseException as e:
                    got.error, got.stage = e, "ready"
                else:
                    got.seconds = time.monotonic() - t0
                    self._weigh(subject, got)
                return got
            finally:
                got.seconds = time.monotonic() - t0
                got.misses = list(misses)
                with self._lock:
                    self.stats.started += 1
                    self.stats.seconds += got.seconds

    def _fill(self, subject: Any) -> None:
        """Start spares of ``subject`` up to what is wanted (nothing before one start of it
        passed its readiness call, nothing once it is stopped or the pool closed)."""
        with self._lock:
            state = self._state(subject)
            if self._closed or state.stopped or not state.warm:
                return
            light = state.heaviest is not None and state.heaviest < LIGHT_SHARE
            ahead = self.ahead * (LIGHT_FACTOR if light else 1)
            want = min(ahead, state.cases_left + state.spawns_ahead)
            new = []
            while len(state.spares) < want:
                spare = _Spare()
                state.spares.append(spare)
                new.append(spare)
        for spare in new:
            self._starter.submit(self._run_spare, subject, spare)

    def _run_spare(self, subject: Any, spare: _Spare) -> None:
        """Whoever takes the spare out of its subject's list (a taker, :meth:`stop`,
        :meth:`close`) owns what it starts."""
        try:
            spare.start = self._start(subject, urgent=False)
        finally:
            spare.done.set()

    def _wanted(self, subject: Any) -> bool:
        """Whether a spare about to start is still wanted (the pool is open, the subject not
        stopped)."""
        with self._lock:
            return not self._closed and not self._state(subject).stopped

    # --- starts made elsewhere ---------------------------------------------------------------

    def timer(self) -> Callable[[], None]:
        """For a subject the caller starts itself (not pooled): call the returned function once
        it is ready (or failed); its start-up counts (all waited: nothing overlapped it)."""
        t0 = time.monotonic()
        done = threading.Event()

        def stop() -> None:
            if done.is_set():
                return
            done.set()
            seconds = time.monotonic() - t0
            with self._lock:
                self.stats.started += 1
                self.stats.seconds += seconds
                self.stats.waited += seconds
        return stop

    def count_spawns(self, session: Any) -> None:
        """Count the start-up of the fresh subjects ``session``'s checks spawn
        (:func:`conformance.session.spawn`), and bound them with the pool's other starts."""
        spawner = getattr(session, "spawn_subject", None)
        if not callable(spawner):
            return

        def counted(workdir: Path) -> Any:
            with self.gate.slot(urgent=True):
                stop = self.timer()
                try:
                    return spawner(workdir)
                finally:
                    stop()
        with contextlib.suppress(AttributeError):
            session.spawn_subject = counted

    # --- the end -------------------------------------------------------------------------------

    def close(self) -> None:
        """No more starts; every spare not taken is stopped and its directory removed. Waits
        for starts under way (each is bounded by the start-up timeout; an interrupted run's
        are killed by ``stop_all_subjects``)."""
        with self._lock:
            self._closed = True
            spares = [s for state in self._subjects.values() for s in state.spares]
            for state in self._subjects.values():
                state.spares.clear()
        self._discard(spares)
        self._starter.shutdown(wait=True)

    def _discard(self, spares: list[_Spare]) -> None:
        for spare in spares:
            spare.done.wait()
            if spare.start is None:
                continue
            if not isinstance(spare.start.error, PoolClosed):
                with self._lock:
                    self.stats.unused += 1
            spare.start.discard()


__all__ = ["Opener", "PoolClosed", "Start", "StartGate", "StartPool", "StartStats", "pooled"]
