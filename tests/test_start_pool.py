"""Start-up paid once, not a hundred times (issue 41): command subjects are started ahead of the
cases that take them (conformance/subjects/pool.py).

What is asserted is behaviour, never time: the pool starts spares only once a start of the subject
passed its readiness call, and then as many as the run's jobs allow and the cases still to come
need; every case and every fresh subject of a check gets a process of its own, never one another
took; spares nobody took are stopped and leave nothing behind; and a run gives the same verdicts
with the pool and without it (``TOOLUSE_START_POOL=0``). That the pool is faster is the
benchmark's (``nox -s bench``, section ``startpool``)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.reports.results_file import ResultsWriter, validate_document
from conformance.results import Outcome
from conformance.run import Run
from conformance.session import fresh
from conformance.subjects import command_subject
from conformance.subjects.case import CaseSettings
from conformance.subjects.launch import Confinement
from conformance.subjects.pool import ENV_SWITCH, StartGate, StartPool, pooled

SLOW_START = Path(__file__).resolve().parent / "conformant" / "slow_start_bash.py"

#: A command subject speaking JSON lines that notes, per call, its pid, working directory and
#: how many calls it answered before, in a log outside its case: ``pid workdir n``. Its first
#: call (``n`` 0) is the readiness call.
LOGGING = """\
import json, os, sys
log = sys.argv[1]
for n, line in enumerate(sys.stdin):
    with open(log, "a") as f:
        f.write(f"{os.getpid()} {os.getcwd()} {n}\\n")
    print(json.dumps({"content": "", "is_error": False}), flush=True)
"""


class FakeSession:
    """A subject session of the pool's unit tests: counts what happens to it."""

    def __init__(self, n: int, workdir: Path, fail_ready: bool) -> None:
        self.n, self.workdir, self.fail_ready = n, workdir, fail_ready
        self.closed = self.clock_started = False

    def wait_ready(self, timeout: float) -> None:
        if self.fail_ready:
            raise runner.SubjectNotReady("no output at all")

    def start_case(self) -> None:
        self.clock_started = True

    def close(self) -> None:
        assert not self.closed, "closed twice"
        self.closed = True


class FakeSubject:
    name = "fake"
    kind = "command"

    def open(self, workdir: Path, **_: Any) -> FakeSession:  # pragma: no cover - not called
        raise AssertionError


class Opener:
    """Opens fake sessions, each a new one; the first ``failing`` fail their readiness call."""

    def __init__(self, failing: int = 0, block: threading.Event | None = None) -> None:
        self.opened: list[FakeSession] = []
        self.failing = failing
        self.lock = threading.Lock()
        self.block = block
        self.make: Any = FakeSession

    def __call__(self, subject: Any, workdir: Path) -> FakeSession:
        if self.block is not None:
            self.block.wait(30)
        with self.lock:
            s = self.make(len(self.opened), workdir, len(self.opened) < self.failing)
            self.opened.append(s)
        return s


def _pool(opener: Opener, root: Path, jobs: int = 2) -> StartPool:
    return StartPool(opener, root, jobs=jobs, ready_timeout=5.0)


def test_nothing_starts_ahead_until_a_start_passed_its_readiness_call(tmp_path: Path) -> None:
    opener, subject = Opener(failing=1), FakeSubject()
    pool = _pool(opener, tmp_path)
    pool.expect(subject, 10)
    first = pool.take(subject)
    assert first.error is not None and first.stage == "ready"
    pool.close()
    assert len(opener.opened) == 1  # the failed start only: no spare behind it
    first.discard()
    assert pool.stats.started == 1 and pool.stats.unused == 0


def test_once_warm_it_starts_jobs_plus_one_ahead_and_no_more_than_cases_left(
        tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()
    pool = _pool(opener, tmp_path, jobs=2)
    pool.expect(subject, 10)
    taken = [pool.take(subject)]  # started in place; then 3 (jobs + 1) spares ahead
    _settle(pool)
    assert len(opener.opened) == 1 + 3
    taken += [pool.take(subject) for _ in range(6)]  # each take refills: 3 cases left
    _settle(pool)
    assert len(opener.opened) == 7 + 3
    taken += [pool.take(subject) for _ in range(3)]  # the last three: nothing more ahead
    _settle(pool)
    assert len(opener.opened) == 10
    pool.close()
    sessions = [t.session for t in taken]
    assert len({id(s) for s in sessions}) == 10  # each case its own, never one taken before
    assert all(t.ok and t.workdir.is_dir() for t in taken)
    assert len({t.workdir for t in taken}) == 10
    for t in taken:
        t.made_ready()
        assert t.session.clock_started  # the case's clock starts when it takes the subject
        t.discard()
    assert pool.stats.started == 10 and pool.stats.unused == 0
    assert list(tmp_path.iterdir()) == []


class Asleep(FakeSession):
    """A fake session over a real process that sleeps: its start used (next to) no CPU."""

    def __init__(self, n: int, workdir: Path, fail_ready: bool) -> None:
        super().__init__(n, workdir, fail_ready)
        self.proc = subprocess.Popen(["sleep", "60"])

    def wait_ready(self, timeout: float) -> None:
        # half a second of waiting: whatever the exec of sleep cost (a tick or two), its share
        # of the start stays far under the light share
        threading.Event().wait(0.5)

    def close(self) -> None:
        super().close()
        self.proc.kill()
        self.proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU time read from /proc")
def test_starts_that_mostly_wait_go_four_times_as_far_ahead(tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()
    opener.make = Asleep
    pool = _pool(opener, tmp_path, jobs=1)
    pool.expect(subject, 20)
    taken = pool.take(subject)
    _settle(pool)
    assert len(opener.opened) == 1 + 4 * 2  # light: 4 x (jobs + 1) ahead
    pool.close()
    taken.discard()
    assert all(s.closed for s in opener.opened)


def test_starts_whose_cpu_is_unknown_are_bounded_as_heavy(tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()  # no process to read: counted as CPU-bound
    pool = _pool(opener, tmp_path, jobs=1)
    pool.expect(subject, 20)
    taken = pool.take(subject)
    _settle(pool)
    assert len(opener.opened) == 1 + 2
    pool.close()
    taken.discard()


def test_spares_nobody_took_are_closed_and_their_directories_removed(tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()
    pool = _pool(opener, tmp_path, jobs=3)
    pool.expect(subject, 20)
    taken = pool.take(subject)
    _settle(pool)
    pool.close()
    spares = opener.opened[1:]
    assert len(spares) == 4 and all(s.closed for s in spares)
    assert pool.stats.unused == 4
    assert list(tmp_path.iterdir()) == [taken.workdir]
    taken.discard()
    assert list(tmp_path.iterdir()) == []


def test_a_check_asking_for_fresh_subjects_gets_them_started_ahead(tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()
    pool = _pool(opener, tmp_path, jobs=4)
    pool.expect(subject, 1)
    case = pool.take(subject)
    _settle(pool)
    assert len(opener.opened) == 1  # no case left: nothing ahead
    examples = [pool.fresh(subject, ahead=2)]  # two more to come: started ahead
    _settle(pool)
    assert len(opener.opened) == 2 + 2
    examples += [pool.fresh(subject, ahead=1), pool.fresh(subject, ahead=0)]
    _settle(pool)
    pool.close()
    assert len(opener.opened) == 4 and pool.stats.unused == 0
    assert len({id(e.session) for e in [case, *examples]}) == 4
    for t in [case, *examples]:
        t.discard()


def test_a_stopped_subject_starts_nothing_more_and_loses_its_spares(tmp_path: Path) -> None:
    opener, subject = Opener(), FakeSubject()
    pool = _pool(opener, tmp_path)
    pool.expect(subject, 10)
    first = pool.take(subject)
    _settle(pool)
    pool.stop(subject)
    second = pool.take(subject)  # still served (started in place), never from a spare
    _settle(pool)
    assert len(opener.opened) == 5
    pool.close()
    assert all(s.closed for s in opener.opened[1:4])  # the spares
    for t in (first, second):
        t.discard()


def test_the_gate_lets_a_start_somebody_waits_for_go_first() -> None:
    gate = StartGate(1)
    order: list[str] = []
    held = gate.slot(urgent=True)
    held.__enter__()

    def start(name: str, urgent: bool) -> None:
        with gate.slot(urgent):
            order.append(name)
    ahead = threading.Thread(target=start, args=("ahead", False))
    ahead.start()
    _until(lambda: gate._active == 1 and ahead.is_alive())
    needed = threading.Thread(target=start, args=("needed", True))
    needed.start()
    _until(lambda: gate._urgent == 1)
    held.__exit__(None, None, None)
    ahead.join(10)
    needed.join(10)
    assert order == ["needed", "ahead"]


def test_only_command_subjects_are_pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.subjects import factory_subject

    cmd = command_subject("cat", family="bash")
    assert pooled(cmd)
    assert not pooled(factory_subject("conformance.reference.bash:factory", family="bash"))
    assert not pooled(cmd, enabled=False)  # TOOLUSE_START_POOL=0, read into the run's value
    monkeypatch.setenv(ENV_SWITCH, "0")
    assert not Run.from_argv([], os.environ).start_pool


# --- a run ------------------------------------------------------------------------------------

CHECKS = ["bash.session.*", "bash.output.roundtrip", "bash.errors.failure_flagged"]


def _logging_subject(tmp_path: Path) -> tuple[Any, Path]:
    script, log = tmp_path / "logging.py", tmp_path / "calls.log"
    script.write_text(LOGGING, encoding="utf-8")
    return command_subject(f"{shlex.quote(sys.executable)} {script} {log}", family="bash",
                           name="logging"), log


def test_every_case_gets_a_fresh_process_of_its_own_and_spares_leave_nothing(
        tmp_path: Path) -> None:
    subject, log = _logging_subject(tmp_path)
    root = tmp_path / "run"
    root.mkdir()
    # no sandbox: the subject writes its log outside its case
    summary = runner.run([subject], checks=CHECKS, jobs=2, tmp_root=root,
                         confinement=Confinement(mode="off"))
    assert len(summary.results) > 3
    calls = [line.split(" ") for line in log.read_text(encoding="utf-8").splitlines()]
    ready = [(pid, cwd) for pid, cwd, n in calls if n == "0"]
    worked = {(pid, cwd) for pid, cwd, n in calls if n != "0"}
    # every process answered one readiness call, in a directory of its own
    assert len(ready) == len(set(ready)) == len({p for p, _ in ready}) == len({c for _, c in ready})
    # each case's calls came from one process, and no process served two cases
    assert len(worked) == len({p for p, _ in worked}) == len({c for _, c in worked})
    assert summary.startup.started == len(ready)
    # spares nobody took were stopped, and nothing is left in the run's directory
    assert all(not _alive(int(pid)) for pid, _ in ready)
    assert list(root.iterdir()) == []


def test_the_verdicts_are_the_same_with_the_pool_and_without(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subject = command_subject(f"env SLOW_START_SECONDS=0 {shlex.quote(sys.executable)} "
                              f"{shlex.quote(str(SLOW_START))}", family="bash", name="quick")
    pooled_run = runner.run([subject], checks=CHECKS, jobs=2)
    plain_run = runner.run([subject], checks=CHECKS, jobs=2, start_pool=False)
    # a conformant subject: every check passes either way (flaky, a failure that did not repeat
    # alone, is load's doing on a busy machine, not the pool's: it counts as the pass it is)
    verdicts = [{r.check_id: "pass" if r.outcome is Outcome.FLAKY else r.outcome.value
                 for r in s.results} for s in (pooled_run, plain_run)]
    assert verdicts[0] == verdicts[1]
    assert set(verdicts[0].values()) == {"pass"}, [r.message for r in pooled_run.results]
    assert pooled_run.startup.started >= len(pooled_run.results)


def test_a_model_check_takes_its_fresh_subjects_from_the_pool(tmp_path: Path) -> None:
    """The bash model check's examples are pool subjects: each a process of its own, in a
    directory of its own, started ahead (the subject logs each process's readiness call)."""
    subject, log = _logging_subject(tmp_path)
    got: dict[str, Any] = {}

    def probe(s: Any) -> None:
        one = fresh(s, ahead=1)
        two = fresh(s, ahead=0)
        assert one is not None and two is not None
        got["dirs"] = {Path(s.workdir), Path(one.workdir), Path(two.workdir)}
        for x in (one, two):
            x.close()
    from conformance.catalog import CATALOG

    chk = CATALOG["bash.output.roundtrip"]
    case = CaseSettings(timeout=3.0, startup_timeout=30.0, confinement=Confinement(mode="off"))
    pool = StartPool(lambda sub, wd: sub.open(wd, case), tmp_path, jobs=1, ready_timeout=30.0)
    pool.expect(subject, 1)
    try:
        result = runner._run_case(subject, dataclasses.replace(chk, func=probe), case,
                                  tmp_root=tmp_path, starts=pool)
    finally:
        pool.close()
    assert result.outcome is Outcome.PASS, result.message
    assert len(got["dirs"]) == 3
    ready = [line for line in log.read_text(encoding="utf-8").splitlines()
             if line.endswith(" 0")]
    assert len(ready) == 3 and len({line.split()[0] for line in ready}) == 3
    assert pool.stats.started == 3 and pool.stats.unused == 0


def test_the_start_up_is_in_the_summary_and_in_results_json(tmp_path: Path) -> None:
    from conformance.reports.summary import print_summary

    subject, _ = _logging_subject(tmp_path)
    writer = ResultsWriter(tmp_path / "results.json")
    summary = runner.run([subject], checks=["bash.output.roundtrip"], listeners=[writer],
                         confinement=Confinement(mode="off"))
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    validate_document(doc)
    startup = doc["run"]["startup"]
    assert startup["started"] == summary.startup.started >= 1
    assert startup["seconds"] >= startup["waited"] * 0  # numbers, not their size
    import io

    out = io.StringIO()
    print_summary(summary, out)
    assert f"start-up: {summary.startup.started} subject" in out.getvalue()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return False


def _settle(pool: StartPool) -> None:
    """Wait until every spare started so far is done starting."""
    for state in list(pool._subjects.values()):
        for spare in list(state.spares):
            assert spare.done.wait(30)


def _until(cond: Any) -> None:
    done = threading.Event()
    for _ in range(3000):
        if cond():
            return
        done.wait(0.01)
    raise AssertionError("never happened")
