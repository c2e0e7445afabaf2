"""Worker subjects and the worker.* checks: the references pass, each broken worker fails the
check it breaks."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG
from conformance.errors import UsageError
from conformance.results import Outcome
from conformance.workers import worker_command_subject, worker_subject

BROKEN = sorted((Path(__file__).parent / "broken").glob("worker_*.py"))
WORKER_CHECKS = sorted(c for c in CATALOG if c.startswith("worker."))


def test_the_worker_checks_are_registered_with_metadata() -> None:
    assert len(WORKER_CHECKS) >= 7
    for cid in WORKER_CHECKS:
        c = CATALOG[cid]
        assert c.family == "worker" and c.applies("custom") and c.statement


@pytest.mark.parametrize("spec", ["conformance.reference.worker:serve",
                                  "conformance.workers.minimal:serve"])
def test_reference_workers_pass_every_worker_check(spec: str) -> None:
    summary = runner.run([worker_subject(spec)], checks=["worker.*"], timeout=1.0, jobs=4)
    outcomes = {r.check_id: (r.outcome, r.message) for r in summary.results}
    assert set(outcomes) == set(WORKER_CHECKS)
    assert all(o is Outcome.PASS for o, _ in outcomes.values()), outcomes


@pytest.mark.slow
def test_a_worker_in_another_process_passes_through_the_http_server() -> None:
    cmd = f"{sys.executable} -m conformance.reference.worker"
    subject = worker_command_subject(cmd)
    r = runner.run_case(subject, CATALOG["worker.custom_tool_use.answered_once"], timeout=1.0)
    assert r.outcome is Outcome.PASS, r.message


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_each_broken_worker_fails_the_check_it_breaks(path: Path) -> None:
    breaks = runpy.run_path(str(path))["BREAKS"]
    assert breaks in CATALOG
    r = runner.run_case(worker_subject(f"{path}:serve"), CATALOG[breaks], timeout=1.0)
    assert r.outcome is Outcome.FAIL, r.message
    assert r.reproducer, "a failure carries the worker's requests as its reproducer"


def test_every_worker_check_has_a_broken_worker() -> None:
    broken = {runpy.run_path(str(p))["BREAKS"] for p in BROKEN}
    assert broken == set(WORKER_CHECKS)


def test_bad_worker_specs_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="no module named"):
        worker_subject("no_such_module_xyz:serve")
    with pytest.raises(UsageError, match="empty"):
        worker_command_subject("   ")
