"""The pytest plugin: one item per (subject, check), outcomes by severity, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

# Imported here, before pytester snapshots sys.modules: an in-process run must not import the
# check modules afresh (their checks would register twice).
import conformance.runner  # noqa: F401

pytest_plugins = ["pytester"]

BROKEN = Path(__file__).resolve().parent / "broken"


def test_items_per_check_and_a_must_failure_with_its_reproducer(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(
        "--tooluse-bash", f"{BROKEN}/bash_never_flags.py:factory", "--tooluse-check",
        "bash.errors.*", "--tooluse-timeout", "3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*MUST check failed: bash.errors.failure_flagged on bash_never_flags.py:factory*",
        "*requirement: A command that fails*",
        '*{"command": "false"}*',
    ])


def test_should_failures_are_xfail_unless_strict(pytester: pytest.Pytester) -> None:
    args = ["--tooluse-bash", f"{BROKEN}/bash_no_truncation.py:factory", "--tooluse-check",
            "bash.output.large_output_*", "--tooluse-timeout", "3", "-p", "no:cacheprovider"]
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=1, xfailed=1)
    pytester.runpytest_inprocess(*args, "--tooluse-strict").assert_outcomes(passed=1, failed=1)


def test_a_flaky_item_passes_with_a_warning_unless_fail_on_flaky(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 36: the subject forgets the directory once (a mark in $TOOLUSE_ONCE_MARK): its
    reproducer does not reproduce and the check run again passes: flaky, not a failure. (No
    sandbox: the mark is written outside the case, as a race's state would be kept.)"""
    args = ["--tooluse-bash", f"{BROKEN}/once_per_run_forgets_cwd.py:factory",
            "--tooluse-check", "bash.session.cwd_persists", "--tooluse-timeout", "3",
            "--tooluse-sandbox", "off", "-p", "no:cacheprovider"]
    monkeypatch.setenv("TOOLUSE_ONCE_MARK", str(tmp_path / "one"))
    (tmp_path / "one").mkdir()
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*is flaky (an intermittent failure*"])
    monkeypatch.setenv("TOOLUSE_ONCE_MARK", str(tmp_path / "two"))
    (tmp_path / "two").mkdir()
    result = pytester.runpytest_inprocess(*args, "--tooluse-fail-on-flaky")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*MUST check flaky (--tooluse-fail-on-flaky)*",
                                 "*re-run alone after the run: pass*",
                                 "*rerun: tooluse run*--fail-on-flaky*"])


def test_an_item_whose_subject_never_starts_is_an_error_not_a_failure(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Issue 36: the case never ran. The results pytest writes (--tooluse-out) say not-run."""
    import json

    factory = tmp_path / "needs_config.py"
    factory.write_text("def make(workdir):\n    raise RuntimeError('no config file found')\n")
    out = tmp_path / "out"
    result = pytester.runpytest_inprocess(
        "--tooluse-bash", f"{factory}:make", "--tooluse-check", "bash.session.cwd_persists",
        "--tooluse-check", "bash.session.env_persists", "--tooluse-timeout", "3",
        "--tooluse-out", str(out),
        "-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of*", "*no config file found*"])
    doc = json.loads((out / "results.json").read_text())
    assert [r["outcome"] for r in doc["results"]] == ["not-run", "not-run"]
    assert doc["summary"]["fail"] == 0


def test_reference_items_pass_and_k_selects(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(
        "--tooluse-bash", "reference-bash", "--tooluse-check", "bash.session.*", "-k",
        "cwd_persists or env_persists", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*bash.session.cwd_persists?reference-bash?*PASSED*"])


def test_items_live_next_to_the_teams_own_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine():\n    assert True\n")
    result = pytester.runpytest_inprocess(
        "--tooluse-bash", "reference-bash", "--tooluse-check", "bash.input.invalid_rejected",
        "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_without_options_nothing_is_added(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine():\n    assert True\n")
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_bad_spec_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--tooluse-bash", "tooluse_absent_mod:factory",
                                          "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tooluse: subject 'tooluse_absent_mod:factory'*no module named*"])


WRONG_TOOL = ("import json, sys\nfor line in sys.stdin:\n"
              "    print(json.dumps({'content': 'nothing', 'is_error': False}), flush=True)\n")


def test_name_labels_items_and_the_failure_says_how_to_rerun(pytester: pytest.Pytester,
                                                             tmp_path: Path) -> None:
    import sys

    tool = tmp_path / "wrong_tool.py"
    tool.write_text(WRONG_TOOL)
    result = pytester.runpytest_inprocess(
        "--tooluse-bash-cmd", f"{sys.executable} {tool}", "--tooluse-name", "my-bash",
        "--tooluse-bash", "reference-bash", "--tooluse-check", "bash.session.cwd_persists",
        "--tooluse-startup-timeout", "40", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*bash.session.cwd_persists?my-bash?*FAILED*",
        f"*rerun: tooluse run --bash-cmd '{sys.executable} {tool}' --name my-bash "
        "--startup-timeout 40 --check bash.session.cwd_persists*",
    ])


def test_a_mistyped_command_is_one_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--tooluse-bash-cmd", "nosuchcmd-tooluse",
                                          "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tooluse: subject cmd:nosuchcmd-tooluse*127*not found*"])
