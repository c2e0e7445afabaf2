"""Every reproducer is verified before it is printed (issue 21), on the paths no check-specific
judge covers (conformance/rechecks.py): the escape checks, the runner's own failures ("the
subject faulted" after a check that passed, a bare ``assert``), the loop checks and the worker
checks. For each, a subject that fails only in its first instance (or run) is labelled "did not
reproduce", and a subject that fails every time is labelled "verified", in every report format
(the wording says how the family is replayed)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Check, Severity
from conformance.loops import loop_subject
from conformance.rechecks import fault_kind
from conformance.reports.render_common import reproducer_verification
from conformance.results import NOT_REPRODUCED, VERIFIED, CheckResult, Outcome
from conformance.session import ToolSession
from conformance.subjects import factory_subject
from conformance.subjects.launch import Confinement
from conformance.workers import worker_subject
from simulator.sources import protocol

HERE = Path(__file__).resolve().parent
BROKEN = HERE / "broken"
HOSTILE = HERE / "hostile" / "subjects.py"


def _one(results: list[CheckResult], check_id: str) -> CheckResult:
    return next(r for r in results if r.check_id == check_id)


def _fresh_copy(name: str, tmp_path: Path) -> Path:
    """A copy of a once-only subject of tests/broken/: its own module, so that its "first run"
    is this test's."""
    path = tmp_path / name
    shutil.copy(BROKEN / name, path)
    return path


# --- the escape checks -------------------------------------------------------------------------

ESCAPE = "bash.sandbox.stays_in_its_case"


@pytest.mark.parametrize(("name", "reproduced"), [("writes_checkout", VERIFIED),
                                                  ("writes_checkout_once", NOT_REPRODUCED)])
def test_an_escape_is_replayed_closed_and_looked_at_again(
        name: str, reproduced: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the sandbox a write into the directory tooluse runs in is seen after the fact;
    the replay's subject is closed and looked at the same way."""
    checkout, home = tmp_path / "checkout", tmp_path / "home"
    checkout.mkdir()
    home.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("TOOLUSE_REAL_HOME", str(home))
    monkeypatch.setenv("TOOLUSE_TEST_CHECKOUT", str(checkout))
    subject = factory_subject(f"{HOSTILE}:{name}", family="bash", name=name)
    summary = runner.run([subject], checks=[ESCAPE], jobs=1, tmp_root=tmp_path,
                         confinement=Confinement(mode="off"))
    r = _one(summary.results, ESCAPE)
    assert r.outcome is Outcome.FAIL and "wrote outside its case directory" in r.message, r
    assert r.reproducer == [{"command": "true"}]
    assert r.reproduced == reproduced, r.message
    assert "owned-by-subject" in {p.name for p in checkout.iterdir()}


# --- the runner's own failures -----------------------------------------------------------------

def _check(func: Any) -> Check:
    """A check that is not registered in the catalog (the catalog stays as shipped)."""
    return Check(id=f"bash.test.{func.__name__}", family="bash", severity=Severity.MUST,
                 applies_to=frozenset({"bash_20250124"}), source=protocol("4. Bash tool: Semantics"),
                 statement="test check", func=func)


def echo_and_return(s: ToolSession) -> None:
    """Passes whatever the answer: only the fault the session records fails it."""
    s.call({"command": "echo hi"})


def echo_and_assert(s: ToolSession) -> None:
    r = s.call({"command": "echo hi"})
    assert r.text == "hi\n", f"echo answered {r.text!r}"


@pytest.mark.parametrize(("factory", "reproduced"), [("always", VERIFIED),
                                                     ("factory", NOT_REPRODUCED)])
def test_a_fault_after_a_passing_check_is_replayed(factory: str, reproduced: str,
                                                   tmp_path: Path) -> None:
    subject = factory_subject(f"{BROKEN / 'once_faults.py'}:{factory}", family="bash")
    r = runner.run_case(subject, _check(echo_and_return), timeout=5, tmp_root=tmp_path)
    assert r.outcome is Outcome.FAIL and r.message.startswith("the subject faulted: "), r
    assert r.reproducer == [{"command": "echo hi"}]
    assert r.reproduced == reproduced, r.message


@pytest.mark.parametrize(("factory", "reproduced"), [("always", VERIFIED),
                                                     ("factory", NOT_REPRODUCED)])
def test_a_bare_assert_is_verified_by_the_check_driven_as_printed(
        factory: str, reproduced: str, tmp_path: Path) -> None:
    subject = factory_subject(f"{BROKEN / 'once_faults.py'}:{factory}", family="bash")
    r = runner.run_case(subject, _check(echo_and_assert), timeout=5, tmp_root=tmp_path)
    assert r.outcome is Outcome.FAIL and r.message.startswith("assertion failed: "), r
    assert r.reproduced == reproduced, r.message


def test_a_fault_is_judged_by_its_kind_not_its_numbers() -> None:
    assert fault_kind("no answer within 3s (+0.4s for load); the subject was stopped") == \
        "no answer within"
    assert fault_kind("no answer within 5s; the subject was stopped") == "no answer within"
    assert fault_kind("the worker raised RuntimeError: boom") == "the worker raised RuntimeError"
    assert fault_kind("answer is not JSON: b'x'") != fault_kind("answer has no \"content\": b'{}'")
    # However the harness noticed that the subject's process is gone, it is one kind.
    assert fault_kind("subject exited while answering (status 3)") == \
        fault_kind("subject is not running (status 3); stderr: x") == "exited"


# --- loops -------------------------------------------------------------------------------------

SEVERAL = "loop.client_tools.several_per_turn"


def test_a_loop_failure_is_driven_again_and_verified() -> None:
    subject = loop_subject(f"{BROKEN / 'loop_drops_tool_result.py'}:loop")
    r = _one(runner.run([subject], checks=[SEVERAL], jobs=1).results, SEVERAL)
    assert r.outcome is Outcome.FAIL and r.reproducer and r.reproduced == VERIFIED, r.message
    notes = reproducer_verification(r.to_json())
    assert notes[0].startswith("Reproducer verified: the check's conversations, driven again "
                               "by a fresh loop"), notes


def test_a_loop_failure_that_does_not_repeat_is_labelled_so(tmp_path: Path) -> None:
    path = _fresh_copy("once_loop_drops_tool_result.py", tmp_path)
    r = _one(runner.run([loop_subject(f"{path}:loop")], checks=[SEVERAL], jobs=1).results,
             SEVERAL)
    # It fails once: its check, run again alone, passes too: flaky (issue 36), not FAIL.
    assert r.outcome is Outcome.FLAKY and r.reproduced == NOT_REPRODUCED, r.message
    assert r.rejudged is not None and r.rejudged["rerun"]["outcome"] == "pass"
    assert reproducer_verification(r.to_json())[0].startswith("Reproducer did not reproduce"), r


def test_a_loop_warning_is_verified_too() -> None:
    check = "loop.container.kept_on_continuation"
    subject = loop_subject(f"{BROKEN / 'loopwarn_drops_container_on_pause.py'}:loop")
    r = _one(runner.run([subject], checks=[check], jobs=1).results, check)
    assert r.outcome is Outcome.FAIL and r.reproduced == VERIFIED, r.message


# --- workers -----------------------------------------------------------------------------------

FLAGGED = "worker.custom_tool_result.failure_is_error"


def test_a_worker_failure_is_run_again_and_verified() -> None:
    subject = worker_subject(f"{BROKEN / 'worker_error_not_flagged.py'}:serve")
    r = _one(runner.run([subject], checks=[FLAGGED], jobs=1).results, FLAGGED)
    assert r.outcome is Outcome.FAIL and r.reproducer and r.reproduced == VERIFIED, r.message
    assert "a fresh worker" in reproducer_verification(r.to_json())[0]


def test_a_worker_failure_that_does_not_repeat_is_labelled_so(tmp_path: Path) -> None:
    path = _fresh_copy("once_worker_error_not_flagged.py", tmp_path)
    r = _one(runner.run([worker_subject(f"{path}:serve")], checks=[FLAGGED], jobs=1).results,
             FLAGGED)
    # It fails once: its check, run again alone, passes too: flaky (issue 36), not FAIL.
    assert r.outcome is Outcome.FLAKY and r.reproduced == NOT_REPRODUCED, r.message
    assert r.rejudged is not None and r.rejudged["rerun"]["outcome"] == "pass"


def test_every_catalog_check_of_these_families_verifies_its_failures() -> None:
    """No loop or worker check can fail with an unverified reproducer: each is wrapped by
    :func:`conformance.rechecks.verified_by_rerun` or (the corpus check) brings its own."""
    wrapped = {c.id for c in CATALOG.values() if c.family in ("loop", "worker")
               and getattr(c.func, "__wrapped__", None) is not None}
    families = {c.id for c in CATALOG.values() if c.family in ("loop", "worker")}
    assert families - wrapped == {"loop.corpus.drives_every_conversation"}
