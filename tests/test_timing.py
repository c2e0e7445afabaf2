"""Deadlines judged fairly (conformance/subjects/timing.py): a deadline grows by the load measured
while waiting, a deadline that still passes is recorded, and a failure that rests on one is run
again alone: only a failure that repeats is a FAIL, one that does not says so in every format.

Time here comes from injected starvation clocks, or from generous bounds (a subject that sleeps
1 s against a 0.2 s deadline): nothing depends on how busy the machine is."""

from __future__ import annotations

import itertools
import json
import shlex
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Check, CheckFailure, Severity
from conformance.reports import html as html_report
from conformance.reports import junit, markdown
from conformance.reports.results_file import (
    new_document,
    result_record,
    summarise,
    validate_document,
)
from conformance.results import Outcome, rejudged_note
from conformance.session import ToolSession
from conformance.subjects import command_subject, factory_subject, process, timing
from conformance.subjects.case import CaseSettings
from conformance.subjects.timing import Miss, Patience
from simulator.sources import protocol

REFERENCE = factory_subject("conformance.reference.bash:factory", family="bash", name="ref")


def clock(*values: float) -> Callable[[], float]:
    """A starvation total that reads ``values`` in turn (the last one from then on)."""
    it = itertools.chain(values, itertools.repeat(values[-1]))
    return lambda: next(it)


def test_a_deadline_grows_by_the_load_measured_while_waiting() -> None:
    windows: list[float] = []

    def attempt(seconds: float) -> None:
        windows.append(seconds)

    with timing.collecting() as misses:
        p = Patience(0.01, "call", clock(0.0, 1.0, 1.5, 1.5))
        assert p.wait(attempt) is None
    # The nominal 0.01 s, then the 1.0 s of starvation measured meanwhile, then 0.5 s more.
    assert windows == pytest.approx([0.01, 1.0, 0.5])
    assert p.allowance == pytest.approx(1.5)
    assert len(misses) == 1 and misses[0].what == "call" and misses[0].allowance == 1.5
    assert "1.5s allowed for load" in misses[0].text()


def test_an_answer_within_the_allowance_is_no_miss() -> None:
    answers = iter([None, "answer"])
    with timing.collecting() as misses:
        p = Patience(0.01, "call", clock(0.0, 2.0))
        assert p.wait(lambda _t: next(answers)) == "answer"
    assert misses == [] and p.allowance == 2.0


def test_no_load_means_the_deadline_is_what_it_says() -> None:
    with timing.collecting() as misses:
        p = Patience(0.01, "close", clock(0.0))
        assert p.wait(lambda _t: None) is None
    assert p.allowance == 0.0 and [m.text() for m in misses] == ["close: waited 0.0s (0.01s)"]


def test_the_allowance_has_a_cap() -> None:
    p = Patience(2.0, "call", clock(0.0, 1e6))
    assert p.wait(lambda _t: None, record_miss=False) is None
    assert p.allowance == timing.MAX_ALLOWANCE * 2.0


def test_the_meters_read_the_scheduler() -> None:
    import os

    assert timing.harness_lag() >= 0.0
    assert timing.tree_delay(os.getpid()) >= 0.0
    assert timing.tree_delay(2**22 + 7) == 0.0  # no such process: nothing, no error


# --- the subject side: calls and close ------------------------------------------------------------

@pytest.fixture
def fake_load(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Make the measured starvation of every subject grow by ``seconds`` once waiting began."""
    def set_load(seconds: float) -> None:
        monkeypatch.setattr(process, "process_starvation",
                            lambda _pid: clock(0.0, seconds))
    return set_load


def test_a_call_past_its_deadline_on_a_starved_subject_is_waited_for(
        tmp_path: Path, fake_load: Callable[[float], None]) -> None:
    fake_load(3.0)
    s = REFERENCE.open(tmp_path, CaseSettings(timeout=5))
    try:
        with timing.collecting() as misses:
            r = s.call({"command": "sleep 1; echo late"}, deadline=0.2)
        assert not r.timed_out and r.text == "late\n" and r.allowance == pytest.approx(3.0)
        assert misses == [] and s.faults == []
    finally:
        s.close()


def test_a_call_past_its_deadline_without_load_times_out_and_is_recorded(
        tmp_path: Path, fake_load: Callable[[float], None]) -> None:
    fake_load(0.0)
    s = REFERENCE.open(tmp_path, CaseSettings(timeout=5))
    try:
        with timing.collecting() as misses:
            r = s.call({"command": "sleep 30"}, deadline=0.2)
        assert r.timed_out and "no answer within 0.2s" in r.text
        assert [m.what for m in misses] == ["call"]
    finally:
        s.close()


def test_a_slow_exit_is_a_note_and_only_a_subject_that_never_exits_is_a_fault(
        tmp_path: Path, fake_load: Callable[[float], None]) -> None:
    fake_load(0.0)  # no allowance: the 1 s exit is past the 0.5 s grace on any machine
    loop = "while read -r l; do echo '{\"content\": \"ok\"}'; done"
    slow = command_subject(f"bash -c {shlex.quote(loop + '; sleep 1')}", family="bash")
    never = command_subject(f"bash -c {shlex.quote(loop + '; sleep 60')}", family="bash")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with timing.collecting() as misses:
        s = slow.open(tmp_path / "a", CaseSettings(timeout=1))
        assert s.call({}).text == "ok"
        s.close(grace=0.5, never_exits=60)  # 1 s is past the grace however idle the machine
    assert s.faults == [] and misses == []
    assert any("to exit after its input was closed" in n and "not a fault" in n for n in s.notes)
    with timing.collecting() as misses:
        s = never.open(tmp_path / "b", CaseSettings(timeout=1))
        assert s.call({}).text == "ok"
        s.close(grace=0.3)
    assert any("did not exit within" in f for f in s.faults)
    assert [m.what for m in misses] == ["close"]


# --- re-judging -------------------------------------------------------------------------------

ATTEMPTS: dict[str, int] = {}


@pytest.fixture(autouse=True)
def _attempts_start_empty() -> None:
    """Each test counts its own checks' attempts, whichever tests ran before it here."""
    ATTEMPTS.clear()


def _register(monkeypatch: pytest.MonkeyPatch, func: Any) -> str:
    cid = f"bash.timingtest.{func.__name__}"
    monkeypatch.setitem(CATALOG, cid, Check(
        id=cid, family="bash", severity=Severity.MUST, applies_to=frozenset({"bash_20250124"}),
        source=protocol("4. Bash tool: Semantics"), statement="test check", func=func))
    ATTEMPTS[func.__name__] = 0
    return cid


def _document(summary: Any) -> dict[str, Any]:
    """The run's results.json document, as the reports are rendered from."""
    doc = new_document(summary.plan.info)
    doc["results"] = [json.loads(json.dumps(result_record(r))) for r in summary.results]
    doc["run"]["complete"] = True
    doc["summary"] = summarise(doc["results"], strict=False, complete=True)
    return doc


def _count(name: str) -> int:
    ATTEMPTS[name] += 1
    return ATTEMPTS[name]


def late_once(s: ToolSession) -> None:
    """Misses its deadline in the run only (as a loaded machine makes a subject do)."""
    first = _count("late_once") == 1
    r = s.call({"command": "sleep 1; echo done"}, deadline=0.2 if first else 20)
    if r.timed_out:
        raise CheckFailure("no answer in time", received=r.to_json(), documented="an answer")


def always_late(s: ToolSession) -> None:
    _count("always_late")
    r = s.call({"command": "sleep 30"}, deadline=0.2)
    if r.timed_out:
        raise CheckFailure("no answer in time", received=r.to_json(), documented="an answer")


def wrong_not_late(s: ToolSession) -> None:
    _count("wrong_not_late")
    s.call({"command": "echo two"})
    raise CheckFailure("two is not three", received="two", documented="three")


def ast_race_once(s: ToolSession) -> None:
    """Raises, in the run only, the error CPython 3.11 gives when threads build ASTs at once."""
    s.call({"command": "echo ok"})
    if _count("ast_race_once") == 1:
        raise SystemError("AST constructor recursion depth mismatch (before=60, after=40)")


def ast_race_always(s: ToolSession) -> None:
    _count("ast_race_always")
    raise SystemError("AST constructor recursion depth mismatch (before=60, after=40)")


def other_error(s: ToolSession) -> None:
    _count("other_error")
    raise SystemError("something else")


def test_a_harness_error_of_the_runs_threads_is_run_again_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython 3.11 cannot build ASTs in several threads at once (gh-106905): that error in a
    run is the run's threads', not the subject's; the case is run again alone after the run, and
    the report says so. Any other harness error is reported once, as before."""
    ids = [_register(monkeypatch, f) for f in (ast_race_once, ast_race_always, other_error)]
    summary = runner.run([REFERENCE], checks=ids, timeout=5, jobs=3)
    by = {r.check_id.rsplit(".", 1)[1]: r for r in summary.results}
    assert ATTEMPTS == {"ast_race_once": 2, "ast_race_always": 2, "other_error": 1}
    once, always, other = by["ast_race_once"], by["ast_race_always"], by["other_error"]
    assert once.outcome is Outcome.PASS and once.rejudged is not None
    assert once.rejudged["by"] == "threads" and once.rejudged["repeated"] is False
    assert once.rejudged["first"]["outcome"] == "error"
    note = rejudged_note(once.rejudged)
    assert "re-run alone after the run: pass" in note and "threads" in note
    assert always.outcome is Outcome.ERROR and always.rejudged is not None
    assert always.rejudged["repeated"] is True and "the error repeats" in rejudged_note(
        always.rejudged)
    assert other.outcome is Outcome.ERROR and other.rejudged is None
    validate_document(_document(summary))  # the schema knows by: threads


def test_a_failure_on_time_is_run_again_alone_and_only_a_repeat_is_a_fail(
        monkeypatch: pytest.MonkeyPatch, fake_load: Callable[[float], None]) -> None:
    fake_load(0.0)  # the first run of late_once misses its deadline on any machine
    ids = [_register(monkeypatch, f) for f in (late_once, always_late, wrong_not_late)]
    seen: list[str] = []
    summary = runner.run([REFERENCE], checks=ids, timeout=5, jobs=3,
                         listeners=[lambda r: seen.append(r.check_id)])
    by = {r.check_id.rsplit(".", 1)[1]: r for r in summary.results}
    assert ATTEMPTS == {"late_once": 2, "always_late": 2, "wrong_not_late": 1}
    flip, repeat, plain = by["late_once"], by["always_late"], by["wrong_not_late"]
    # Did not repeat: the re-run's outcome, and said so with both timings.
    assert flip.outcome is Outcome.PASS and flip.rejudged is not None
    assert flip.rejudged["repeated"] is False
    assert flip.rejudged["first"]["outcome"] == "fail"
    assert flip.rejudged["first"]["misses"][0].startswith("call: waited")
    assert flip.rejudged["rerun"] == {"outcome": "pass", "duration": pytest.approx(
        flip.duration, abs=0.01), "message": "", "misses": []}
    assert "did not repeat" in rejudged_note(flip.rejudged)
    # Repeated: a FAIL, with both runs.
    assert repeat.outcome is Outcome.FAIL and repeat.rejudged is not None
    assert repeat.rejudged["repeated"] is True and "the failure repeats" in rejudged_note(
        repeat.rejudged)
    # Not about time: judged once, as before.
    assert plain.outcome is Outcome.FAIL and plain.rejudged is None
    assert sorted(seen) == sorted(ids)  # every result reached the listeners, once
    assert not summary.ok and [r.check_id for r in summary.blocking()] == [
        r.check_id for r in summary.results if r.outcome is Outcome.FAIL]

    # Every report format shows the re-judged results (both timings), the JSON one by its schema.
    doc = _document(summary)
    validate_document(doc)
    md = markdown.render_markdown(doc)
    assert "### Re-judged (2)" in md and "did not repeat" in md
    page = html_report.render_html(doc)
    assert 'id="rejudged"' in page and "did not repeat" in page and "⏱" in page
    xml = ET.fromstring(junit.render_junit(doc))
    outs = [c.findtext("system-out") or "" for c in xml.iter("testcase")
            if c.get("name") == flip.check_id]
    assert outs and "did not repeat" in outs[0]
    fails = [c.find("failure") for c in xml.iter("testcase") if c.get("name") == repeat.check_id]
    assert fails[0] is not None and "the failure repeats" in (fails[0].text or "")


def test_a_single_case_is_judged_again_at_once(monkeypatch: pytest.MonkeyPatch,
                                               fake_load: Callable[[float], None]) -> None:
    fake_load(0.0)
    cid = _register(monkeypatch, late_once)
    r = runner.run_case(REFERENCE, CATALOG[cid], timeout=5)
    assert ATTEMPTS["late_once"] == 2 and r.outcome is Outcome.PASS and r.rejudged


def test_misses_of_a_case_reach_it_from_the_threads_it_starts() -> None:
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    with timing.collecting() as misses, ThreadPoolExecutor(1) as pool:
        pool.submit(contextvars.copy_context().run, timing.record,
                    Miss("close", 5, 15, 0)).result()
    assert [m.what for m in misses] == ["close"]


def test_a_subject_that_never_starts_is_re_run_once_not_once_per_check(
        monkeypatch: pytest.MonkeyPatch, fake_load: Callable[[float], None]) -> None:
    fake_load(0.0)
    ids = [_register(monkeypatch, f) for f in (late_once, always_late, wrong_not_late)]
    py = Path(__file__).resolve().parent / "subjects" / "py_subjects.py"
    never = factory_subject(f"{py}:hangs_at_start", family="bash", name="never")
    summary = runner.run([never], checks=ids, timeout=1, jobs=3, startup_timeout=0.5)
    assert ATTEMPTS == {"late_once": 0, "always_late": 0, "wrong_not_late": 0}  # never started
    assert all(r.outcome is Outcome.NOT_RUN and r.rejudged and r.rejudged["repeated"]
               for r in summary.results)
    inferred = [r for r in summary.results
                if r.rejudged and "start-up failed again when" in r.rejudged["rerun"]["message"]]
    assert len(inferred) == 2 and summary.never_started() == {
        "never": summary.results[0].message}


def test_the_lag_sampler_keeps_sleeping_when_a_test_patches_time_sleep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # `time` is one module for every thread: a test that records its own sleeps by patching
    # time.sleep must not see the sampler's, nor turn the sampler into a busy loop.
    from conformance.subjects.timing import harness_lag
    harness_lag()  # the sampler runs
    sleepers: list[str] = []  # other threads of earlier tests in this worker may sleep too
    monkeypatch.setattr(time, "sleep", lambda s: sleepers.append(threading.current_thread().name))
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.3:
        pass
    assert "tooluse-lag" not in sleepers
