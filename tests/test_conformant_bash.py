"""Unusual but conformant bash subjects (``tests/conformant/bash_*.py``) against the bash checks.

Each follows a convention real tools use where seed 003 leaves a choice (a status footer and
terminal escape codes, CRLF line ends, tail truncation, a history file in $HOME, stdin ended by
the command timeout, a placeholder for empty output). None of them may fail a MUST check; a
failure here is a false failure of the suite, not of the subject.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.results import CheckResult, Outcome
from conformance.subjects import factory_subject

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
    }
    for (name, check_id), words in expected.items():
        assert words in observed[name].get(check_id, ""), (name, observed[name])
