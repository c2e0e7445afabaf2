"""Every bash reproducer is verified before it is printed (issue 21): a failure's reproducer is
replayed exactly as printed on a fresh subject and marked ``verified`` when the check's judge
sees the failure again, ``did not reproduce`` when not; a judge compares what the failure is
about (an error or not, an answer in time or not, a marker, a directory, a process), never
bytes that change from run to run (docs/checks.md, "Verified reproducers")."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import runner
from conformance.reproducers import describe_reproduced
from conformance.results import NOT_REPRODUCED, VERIFIED, CheckResult, Outcome
from conformance.subjects import factory_subject

BROKEN = Path(__file__).resolve().parent / "broken"
TIMEOUT = 3.0


def _run(name: str, checks: list[str]) -> dict[str, CheckResult]:
    subject = factory_subject(f"{BROKEN / name}.py:factory", family="bash", name=name)
    summary = runner.run([subject], checks=checks, timeout=TIMEOUT, jobs=4)
    return {r.check_id: r for r in summary.results}


def test_a_reproducer_that_does_not_reproduce_is_labelled_so() -> None:
    """The subject forgets the directory only in a case's first instance: the case fails, the
    replay on a fresh instance does not, and the result says so."""
    r = _run("once_bash_forgets_cwd", ["bash.session.cwd_persists"])["bash.session.cwd_persists"]
    assert r.outcome is Outcome.FAIL, r.message
    assert r.reproduced == NOT_REPRODUCED
    assert describe_reproduced(r.reproduced).startswith("did not reproduce")


def test_a_reproducer_that_reproduces_is_labelled_verified() -> None:
    results = _run("bash_forgets_cwd", ["bash.session.cwd_persists"])
    r = results["bash.session.cwd_persists"]
    assert r.outcome is Outcome.FAIL and r.reproduced == VERIFIED, r.message
    # The directory the check made is a setup step, not a tool call.
    assert [s["path"] for s in r.setup] == ["$TOOLUSE_WORKDIR/persist-cwd"]
    assert all("mkdir" not in str(i) for i in r.reproducer)


@pytest.mark.parametrize(("name", "check"), [
    ("bash_no_timeout", "bash.timeout.returns_error_in_time"),  # on time: no answer again
    ("bash_restart_noop", "bash.restart.clears_state"),  # pids: the same things kept
    ("bash_never_flags", "bash.errors.failure_flagged"),
    ("bash_drops_partial_line", "bash.output.partial_last_line"),
])
def test_reproducers_resting_on_time_or_pids_are_judged_by_what_matters(
        name: str, check: str) -> None:
    r = _run(name, [check])[check]
    assert r.outcome is Outcome.FAIL and r.reproduced == VERIFIED, (r.message, r.reproduced)
