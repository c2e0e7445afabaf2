"""The runner: check selection, outcome mapping, listeners, exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Check, CheckFailure, CheckSkipped, Severity
from conformance.results import VERIFIED, CheckResult, Outcome, RunInfo, SubjectInfo
from conformance.session import ToolSession
from conformance.subjects import factory_subject
from conformance.subjects.case import CaseSettings
from simulator.sources import protocol

PY = Path(__file__).resolve().parent / "subjects" / "py_subjects.py"
HOSTILE = Path(__file__).resolve().parent / "hostile" / "subjects.py"
REFERENCE = factory_subject("conformance.reference.bash:factory", family="bash",
                            name="reference")


def make_check(func: Any, severity: Severity = Severity.MUST, tags: tuple[str, ...] = ()) -> Check:
    """A check that is not registered in the catalog (so the catalog stays as shipped)."""
    return Check(id=f"bash.test.{func.__name__}", family="bash", severity=severity,
                 applies_to=frozenset({"bash_20250124"}), source=protocol("4. Bash tool: Semantics"),
                 statement="test check", func=func, tags=frozenset(tags))


def passes(s: ToolSession) -> None:
    assert s.call({"command": "echo hi"}).text == "hi\n"


def fails(s: ToolSession) -> None:
    s.call({"command": "echo one"})
    s.call({"command": "echo two"})
    raise CheckFailure("two is not three", received="two", documented="three")


def skips(s: ToolSession) -> None:
    raise CheckSkipped("not for this subject")


def crashes(s: ToolSession) -> None:
    s.call({"command": "true"})
    raise KeyError("bug in the check")


def bare_assert(s: ToolSession) -> None:
    s.call({"command": "echo x"})
    assert s.call({"command": "echo y"}).text == "z\n", "y is not z"


def expects_error(s: ToolSession) -> None:
    # Passes as long as the answer is an error... which a dying subject also gives.
    assert s.call({"command": "x"}).is_error


def test_select_checks_by_family_tool_type_and_glob() -> None:
    ids = [c.id for c in runner.select_checks(REFERENCE)]
    assert ids == sorted(ids) and ids
    assert all(i.startswith("bash.") for i in ids)
    assert "bash.session.cwd_persists" in ids
    assert [c.id for c in runner.select_checks(REFERENCE, ["bash.restart.*"])] == [
        "bash.restart.clears_state", "bash.restart.confirms"]
    editor = factory_subject(f"{PY}:returns_str", family="editor")
    assert all(c.family == "editor" for c in runner.select_checks(editor))
    assert runner.unmatched_patterns(["bash.*", "nothing.here.*"]) == ["nothing.here.*"]


@pytest.mark.parametrize("func, outcome", [(passes, Outcome.PASS), (fails, Outcome.FAIL),
                                           (skips, Outcome.SKIP), (crashes, Outcome.ERROR)])
def test_outcomes(func: Any, outcome: Outcome) -> None:
    r = runner.run_case(REFERENCE, make_check(func), timeout=2)
    assert r.outcome is outcome
    assert (r.subject, r.tool_type, r.family, r.severity) == (
        "reference", "bash_20250124", "bash", "MUST")
    assert r.duration > 0


def test_failure_carries_received_documented_and_history_as_reproducer() -> None:
    r = runner.run_case(REFERENCE, make_check(fails), timeout=2)
    assert (r.message, r.received, r.documented) == ("two is not three", "two", "three")
    assert r.reproducer == [{"command": "echo one"}, {"command": "echo two"}]


def test_a_bare_assert_is_a_failure_with_the_history() -> None:
    r = runner.run_case(REFERENCE, make_check(bare_assert), timeout=2)
    assert r.outcome is Outcome.FAIL and "y is not z" in r.message
    assert r.reproducer == [{"command": "echo x"}, {"command": "echo y"}]
    # The check, driven as printed on a fresh subject, failed the same assertion again.
    assert r.reproduced == VERIFIED, r.message


def test_harness_error_is_kept_apart_with_the_traceback() -> None:
    r = runner.run_case(REFERENCE, make_check(crashes), timeout=2)
    assert r.outcome is Outcome.ERROR
    assert "KeyError" in r.message and "bug in the check" in r.message
    assert "crashes" in str(r.received)


def test_a_check_cannot_pass_on_a_faulting_subject() -> None:
    dying = factory_subject(f"{HOSTILE}:exits_after_start", family="bash")
    r = runner.run_case(dying, make_check(expects_error), timeout=2)
    assert r.outcome is Outcome.FAIL and "faulted" in r.message and "exited" in r.message
    assert r.reproducer == [{"command": "x"}]
    assert r.reproduced == VERIFIED, r.message  # replayed on a fresh subject: it exits again


def test_a_subject_that_cannot_start_fails_every_check() -> None:
    broken = factory_subject(f"{PY}:factory_raises", family="bash")
    r = runner.run_case(broken, make_check(passes), timeout=2)
    assert r.outcome is Outcome.FAIL and "cannot open the sandbox" in r.message


class MinimalSubject:
    """A subject of another family's making: only the protocol's open(workdir, case)."""

    name, family, tool_type = "minimal", "bash", "bash_20250124"
    info = SubjectInfo("minimal", "bash", "bash_20250124", "test")

    def open(self, workdir: Path, case: CaseSettings) -> Any:
        return REFERENCE.open(workdir, case)


class ClosingBreaks(MinimalSubject):
    def open(self, workdir: Path, case: CaseSettings) -> Any:
        session = super().open(workdir, case)
        real_close = session.close

        def close() -> None:
            real_close()
            raise OSError("teardown broke")
        session.close = close
        return session


class OpenBreaks(MinimalSubject):
    def open(self, workdir: Path, case: CaseSettings) -> Any:
        raise RuntimeError("harness bug")


def test_teardown_and_open_errors_are_harness_errors_and_the_run_goes_on() -> None:
    r = runner.run_case(ClosingBreaks(), make_check(passes), timeout=2)
    assert r.outcome is Outcome.ERROR and "teardown broke" in r.message
    r = runner.run_case(ClosingBreaks(), make_check(fails), timeout=2)
    assert r.outcome is Outcome.FAIL and "teardown broke" in r.message
    r = runner.run_case(OpenBreaks(), make_check(passes), timeout=2)
    assert r.outcome is Outcome.ERROR and "harness bug" in r.message


class _Interrupt:
    def on_check_finished(self, result: CheckResult) -> None:
        raise KeyboardInterrupt  # as Ctrl-C would, after the first result


def test_an_interrupted_run_does_not_refuse_later_cases() -> None:
    """An interrupted run kills its subjects and refuses to start new ones while it winds down;
    once it has, the process starts subjects again (in CI a test that interrupted a run in
    process left every later run_case of its worker 'the run is stopping (interrupted)')."""
    with pytest.raises(KeyboardInterrupt):
        runner.run([REFERENCE], checks=["bash.session.cwd_persists", "bash.session.env_persists"],
                   jobs=1, listeners=[_Interrupt()])
    r = runner.run_case(REFERENCE, make_check(passes), timeout=30)
    assert (r.outcome, r.message) == (Outcome.PASS, "")


def test_any_subject_like_object_runs() -> None:
    r = runner.run_case(MinimalSubject(), make_check(passes), timeout=2)
    assert (r.outcome, r.subject) == (Outcome.PASS, "minimal")


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_run_started(self, run: RunInfo) -> None:
        self.events.append(("started", run.planned, [s.name for s in run.subjects], run.strict))

    def on_check_started(self, check_id: str, subject: str) -> None:
        self.events.append(("check", check_id, subject))

    def on_check_finished(self, result: CheckResult) -> None:
        self.events.append(("result", result.check_id, result.outcome))

    def on_run_finished(self, *, complete: bool) -> None:
        self.events.append(("finished", complete))


def test_listeners_see_the_run_as_it_happens() -> None:
    rec, plain = Recorder(), []
    summary = runner.run([REFERENCE], checks=["bash.session.*"], timeout=2, strict=True,
                         listeners=[rec, plain.append])
    ids = [c.id for c in runner.select_checks(REFERENCE, ["bash.session.*"])]
    assert rec.events[0] == ("started", len(ids), ["reference"], True)
    assert rec.events[-1] == ("finished", True)
    middle = rec.events[1:-1]
    assert sorted(e[1] for e in middle if e[0] == "check") == ids
    assert sorted(e[1] for e in middle if e[0] == "result") == ids
    for i in ids:  # each check starts before it finishes
        assert middle.index(("check", i, "reference")) < [
            n for n, e in enumerate(middle) if e[:2] == ("result", i)][0]
    assert [r.check_id for r in plain] and {r.check_id for r in plain} == set(ids)
    assert [r.check_id for r in summary.results] == ids  # plan order
    assert summary.plan.info.argv == ["run", "--check", "bash.session.*", "--strict", "--timeout", "2"]
    assert summary.counts()["pass"] == len(ids) and summary.exit_code == 0


def _summary(*rows: tuple[str, Outcome], strict: bool = False) -> runner.RunSummary:
    plan = runner.RunPlan([], [], 1.0, strict)
    results = [CheckResult(f"bash.x{i}", "s", "bash_20250124", "bash", sev, out)
               for i, (sev, out) in enumerate(rows)]
    return runner.RunSummary(plan, results, 0.1, strict)


@pytest.mark.parametrize("rows, strict, code", [
    ([("MUST", Outcome.PASS), ("SHOULD", Outcome.PASS)], False, 0),
    ([("MUST", Outcome.FAIL)], False, 1),
    ([("MUST", Outcome.ERROR)], False, 1),
    ([("MUST", Outcome.SKIP), ("INFO", Outcome.FAIL)], True, 0),
    ([("SHOULD", Outcome.FAIL)], False, 0),
    ([("SHOULD", Outcome.FAIL)], True, 1),
])
def test_exit_code(rows: list[tuple[str, Outcome]], strict: bool, code: int) -> None:
    assert _summary(*rows, strict=strict).exit_code == code


def test_the_catalog_has_every_bash_check_of_the_issue() -> None:
    bash = {i for i in CATALOG if i.startswith("bash.")}
    assert {"bash.session.cwd_persists", "bash.session.env_persists", "bash.session.files_persist",
            "bash.restart.clears_state", "bash.output.stdout_and_stderr",
            "bash.output.interleaved_in_order", "bash.errors.failure_flagged",
            "bash.timeout.returns_error_in_time", "bash.timeout.session_usable_after",
            "bash.stdin.does_not_hang", "bash.output.large_output_returns",
            "bash.output.large_output_truncated", "bash.session.sentinel_lookalike_output",
            "bash.session.no_processes_left_after_close", "bash.input.invalid_rejected"} <= bash
    for i in bash:
        c = CATALOG[i]
        assert c.applies_to == {"bash_20241022", "bash_20250124"}
        assert c.source.document in ("003_6e507974676b5473.txt", "PROTOCOL.md")
