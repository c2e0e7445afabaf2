"""Every bash reproducer is verified before it is printed (issue 21): a failure's reproducer is
replayed exactly as printed on a fresh subject and marked ``verified`` when the check's judge
sees the failure again, ``did not reproduce`` when not; a judge compares what the failure is
about (an error or not, an answer in time or not, a marker, a directory, a process), never
bytes that change from run to run (docs/checks.md, "Verified reproducers")."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_bash_checks import subject_group, subject_results

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


# Each subject's run against every bash check is test_bash_checks' (the same worker runs both:
# its xdist group); bash_no_timeout's alone is 20 s of waiting for the timeout, twice.
@pytest.mark.parametrize(("name", "check"), [
    pytest.param(name, check, marks=subject_group(name)) for name, check in (
        ("bash_no_timeout", "bash.timeout.returns_error_in_time"),  # on time: no answer again
        ("bash_restart_noop", "bash.restart.clears_state"),  # pids: the same things kept
        ("bash_never_flags", "bash.errors.failure_flagged"),
        ("bash_drops_partial_line", "bash.output.partial_last_line"))])
def test_reproducers_resting_on_time_or_pids_are_judged_by_what_matters(
        name: str, check: str) -> None:
    r = subject_results(name)[check]
    assert r.outcome is Outcome.FAIL and r.reproduced == VERIFIED, (r.message, r.reproduced)


@pytest.mark.slow(30)
def test_a_model_check_whose_findings_did_not_reproduce_is_re_judged_not_failed() -> None:
    """Issue 21's rule in the bash model check: the subject loses one answer's output (OpenHands'
    "Previous command outputs are truncated" notice and nothing else) in the first instance of
    the case only. The run sees the disagreement, the replay on a fresh subject does not, and
    the check run again alone finds again only what does not reproduce: no FAIL, ``flaky``
    (issue 36: an intermittent failure, not blocking by default), with the re-judging
    (``rejudged`` by replay, ``alone``: the re-run) in every report format."""
    from conformance.results import rejudged_note

    check = "bash.model.agrees_with_session_model"
    r = _run("once_bash_loses_output", [check])[check]
    assert r.outcome is Outcome.FLAKY, (r.message, r.rejudged)
    assert r.rejudged is not None and r.rejudged["by"] == "replay", r.rejudged
    assert r.rejudged["repeated"] is False and "alone" in r.rejudged
    assert r.rejudged["first"]["outcome"] == "fail" and r.rejudged["rerun"]["outcome"] == "pass"
    assert "1 disagreement:" in r.rejudged["first"]["message"]
    note = rejudged_note(r.rejudged)
    assert note.startswith("re-judged by replay") and "did not show it again" in note
    assert "flaky: an intermittent failure" in note
    assert "/tmp" not in note  # relativized like the rest of the result


def test_a_printed_bash_reproducer_runs_as_printed_in_a_shell(tmp_path: Path) -> None:
    """A bash reproducer's commands name the case's directory as ``$TOOLUSE_WORKDIR``, which is
    also the subject's environment variable: printed into single quotes as plain text
    (``cd '$TOOLUSE_WORKDIR/gamma dir'``), a shell would not expand it. The printed command, run
    by bash with TOOLUSE_WORKDIR set (from elsewhere), addresses the work directory; replaced as
    text (``materialize``), it is again the command the check sent."""
    import os
    import subprocess

    from conformance.properties.bash_commands import Cd
    from conformance.properties.bash_model import SessionModel
    from conformance.reproducers import materialize, relativize

    case = tmp_path / "case"
    (case / "gamma dir").mkdir(parents=True)
    cd = Cd("gamma dir").text(SessionModel(str(case)))  # as the model check writes it
    assert cd == f"cd '{case}/gamma dir'"
    sent = [{"command": f"{cd} && pwd"}, {"command": f"printf '%s\\n' '{case}' \"{case}/x\""}]
    result = CheckResult(check_id="bash.x", subject="s", tool_type="bash_20250124",
                         family="bash", severity="MUST", outcome=Outcome.FAIL,
                         reproducer=sent)
    printed = relativize(result, case).reproducer
    assert "'$TOOLUSE_WORKDIR" not in str(printed), printed
    assert all("$TOOLUSE_WORKDIR" in i["command"] and str(case) not in i["command"]
               for i in printed)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def shell(command: str) -> str:
        done = subprocess.run(["bash", "-c", command], cwd=elsewhere, capture_output=True,
                              text=True, env={**os.environ, "TOOLUSE_WORKDIR": str(case)},
                              check=True)
        return done.stdout

    assert shell(printed[0]["command"]) == f"{case}/gamma dir\n"
    assert shell(printed[1]["command"]) == f"{case}\n{case}/x\n"
    assert materialize(printed, case) == sent
    # An editor reproducer's strings are not shell text: left as they were.
    editor = relativize(CheckResult(check_id="editor.x", subject="s", tool_type="t",
                                    family="editor", severity="MUST", outcome=Outcome.FAIL,
                                    reproducer=[{"command": "view", "path": f"{case}/a'b"}]),
                        case).reproducer
    assert editor == [{"command": "view", "path": "$TOOLUSE_WORKDIR/a'b"}]
