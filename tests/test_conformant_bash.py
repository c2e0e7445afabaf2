"""Unusual but conformant bash subjects (``tests/conformant/bash_*.py``) against the bash checks.

Each follows a convention real tools use where seed 003 leaves a choice (a status footer and
terminal escape codes, CRLF line ends, tail truncation, a history file in $HOME, stdin ended by
the command timeout, a placeholder for empty output, ``<returncode>/<output>`` tags, a shell
restarted on death), or is seed 003's own ``BashSession`` completed as its prose asks (Python,
and Node where it is installed: the floor of MUST, issue 36). None of them may fail a MUST check;
a failure here is a false failure of the suite, not of the subject. The presentation subjects run
again with a shell that restarts on death (``tests/conformant/on_death_variants.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.results import CheckResult, Outcome
from conformance.subjects import command_subject, factory_subject

CONFORMANT_DIR = Path(__file__).resolve().parent / "conformant"
SUBJECTS = sorted(p.stem for p in CONFORMANT_DIR.glob("bash_*.py"))
TIMEOUT = 3.0


def run_all(names: list[str]) -> dict[str, dict[str, CheckResult]]:
    subjects = [factory_subject(f"{CONFORMANT_DIR / n}.py:factory", family="bash", name=n)
                for n in names]
    summary = runner.run(subjects, checks=["bash.*"], timeout=TIMEOUT, jobs=8)
    out: dict[str, dict[str, CheckResult]] = {n: {} for n in names}
    for r in summary.results:
        out[r.subject][r.check_id] = r
    return out


def failures(results: dict[str, CheckResult], severity: Severity) -> dict[str, str]:
    return {i: r.message for i, r in results.items()
            if r.outcome in (Outcome.FAIL, Outcome.ERROR) and CATALOG[i].severity is severity}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, CheckResult]]:
    return run_all(SUBJECTS)


def test_there_are_conformant_bash_subjects() -> None:
    assert len(SUBJECTS) >= 5, SUBJECTS


@pytest.mark.slow(50)  # the fixture runs every subject against every bash check
@pytest.mark.parametrize("name", SUBJECTS)
def test_a_conformant_subject_fails_no_must_check(outcomes, name: str) -> None:
    results = outcomes[name]
    assert set(results) == {i for i in CATALOG if i.startswith("bash.")}
    assert failures(results, Severity.MUST) == {}
    # They are built on the reference, which follows every recommendation too.
    assert failures(results, Severity.SHOULD) == {}


def test_the_observed_conventions_are_reported(outcomes) -> None:
    observed = {n: {i: r.observed for i, r in res.items() if r.observed}
                for n, res in outcomes.items()}
    expected = {
        ("bash_stdin_deadline", "bash.stdin.does_not_hang"): "ended by the tool's timeout",
        ("bash_tail_truncation", "bash.output.large_output_truncated"): "tail kept",
        ("bash_no_output_placeholder", "bash.output.roundtrip"): "'(no output)'",
        ("bash_exit_needs_restart", "bash.errors.exit_recovers"): "asks for a restart",
        ("bash_syntax_error_needs_restart", "bash.errors.syntax_error_recovers"):
            "asks for a restart",
        ("bash_seed003_session", "bash.stdin.does_not_hang"):
            "ended by the tool's timeout, after it read the session's own input",
        ("bash_restart_on_death", "bash.stdin.does_not_hang"): "the session's own input",
        ("bash_seed003_session", "bash.output.non_utf8_answered"): "\ufffd",
    }
    for (name, check_id), words in expected.items():
        assert words in observed[name].get(check_id, ""), (name, observed[name])


ON_DEATH = CONFORMANT_DIR / "on_death_variants.py"
PRESENTATIONS = ("bash_status_footer", "bash_tail_truncation", "bash_no_output_placeholder",
                 "bash_returncode_tags", "bash_text_blocks", "bash_history_file")


@pytest.mark.slow(60)  # six subjects against every bash check
def test_presentations_with_a_shell_restarted_on_death_fail_no_must_check() -> None:
    """Issue 36: a syntax error ends a shell fed as seed 003's design feeds it; the tool restarts
    it and says so. Whatever the presentation around the output, that is conformant."""
    subjects = [factory_subject(f"{ON_DEATH}:{n}", family="bash", name=n) for n in PRESENTATIONS]
    summary = runner.run(subjects, checks=["bash.*"], timeout=TIMEOUT, jobs=8)
    by_subject: dict[str, dict[str, CheckResult]] = {n: {} for n in PRESENTATIONS}
    for r in summary.results:
        by_subject[r.subject][r.check_id] = r
    bad = {n: failures(res, Severity.MUST) for n, res in by_subject.items()}
    assert bad == {n: {} for n in PRESENTATIONS}


NODE_SEED = CONFORMANT_DIR / "bash_seed003_session.mjs"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.slow(40)
def test_the_seeds_node_bash_session_fails_no_must_check() -> None:
    """Seed 003's Node ``BashSession``, completed as the seed's prose asks, as an out-of-process
    subject (``--bash-cmd "node tests/conformant/bash_seed003_session.mjs"``)."""
    subject = command_subject(f"node {NODE_SEED}", family="bash")
    summary = runner.run([subject], checks=["bash.*"], timeout=TIMEOUT, jobs=8)
    results = {r.check_id: r for r in summary.results}
    assert set(results) == {i for i in CATALOG if i.startswith("bash.")}
    assert failures(results, Severity.MUST) == {}
    # The seed's handler runs `block.input.command ?? ""`: input with neither key runs an empty
    # command (a SHOULD: refusing it is a recommendation; the seed's prose asks for nothing).
    assert set(failures(results, Severity.SHOULD)) <= {"bash.input.invalid_rejected"}
    assert "the session's own input" in results["bash.stdin.does_not_hang"].observed
