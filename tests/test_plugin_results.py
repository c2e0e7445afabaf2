"""``--tooluse-out DIR``: one results.json (and reports) for the conformance items of a pytest
run, with pytest-xdist workers' results merged by the controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conformance.runner  # noqa: F401  (before pytester snapshots sys.modules)

pytest_plugins = ["pytester"]

BROKEN = Path(__file__).resolve().parent / "broken"


def _results(out: Path) -> dict:
    doc = json.loads((out / "results.json").read_text())
    assert (out / "junit.xml").is_file() and (out / "report.md").is_file()
    return doc


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_one_report_for_every_item(pytester: pytest.Pytester, workers: list[str]) -> None:
    out = pytester.path / "out"
    result = pytester.runpytest_subprocess(
        "--tooluse-bash", "reference-bash", "--tooluse-bash",
        f"{BROKEN}/bash_never_flags.py:factory", "--tooluse-check", "bash.errors.*",
        "--tooluse-out", str(out), "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=5, failed=1)
    doc = _results(out)
    rows = {(r["subject"], r["check_id"]): r["outcome"] for r in doc["results"]}
    assert len(doc["results"]) == len(rows) == 6  # each item once, from whichever worker ran it
    assert rows[("bash_never_flags.py:factory", "bash.errors.failure_flagged")] == "fail"
    assert sum(o == "pass" for o in rows.values()) == 5
    assert doc["summary"]["verdict"] == "fail" and doc["run"]["planned"] == 6
    assert doc["run"]["complete"] is True
    assert {s["name"] for s in doc["subjects"]} == {"reference-bash", "bash_never_flags.py:factory"}


def test_without_the_option_nothing_is_written(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--tooluse-bash", "reference-bash", "--tooluse-check",
                                          "bash.output.roundtrip", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not list(pytester.path.rglob("results.json"))
