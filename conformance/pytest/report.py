"""One ``results.json`` (and its reports) for the conformance items of a pytest run, also under
pytest-xdist (used by :mod:`conformance.pytest.plugin`, option ``--tooluse-out DIR``).

Each :class:`~conformance.pytest.items.ConformanceItem` keeps its
:class:`~conformance.results.CheckResult`; the report of its call phase carries it as JSON
(``report.tooluse_result``). pytest-xdist sends every worker's reports to the controller, with
that attribute; the controller (or the only process, without xdist) collects them and, when the
session finishes, writes ``DIR/results.json``, ``junit.xml``, ``report.md`` and ``report.html``,
the same files ``tooluse run --out DIR`` writes, for the whole run.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.reports.bundle import RunReports
from conformance.results import CheckResult

from .items import settings_of, subjects_from_config

ATTR = "tooluse_result"


class ResultsCollector:
    """A pytest plugin object: attach results to reports; merge and write them at the end."""

    def __init__(self, config: pytest.Config, out_dir: Path) -> None:
        self.config = config
        self.out_dir = out_dir
        self.results: list[dict[str, Any]] = []
        #: An xdist worker only attaches results; the controller writes the files.
        self.is_worker = hasattr(config, "workerinput")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
        outcome = yield
        result = getattr(item, ATTR, None)
        if result is not None and call.when == "call":
            setattr(outcome.get_result(), ATTR, result.to_json())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, ATTR, None)
        if data is not None and not self.is_worker:
            self.results.append(data)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker or not self.results:
            return

        subjects = subjects_from_config(self.config)
        plan = runner.plan_run(subjects, settings_of(self.config))
        reports = RunReports(self.out_dir, progress=False)
        reports.on_run_started(plan.info)
        order = {(c.check.id, c.subject.name): n for n, c in enumerate(plan.cases)}
        ordered = sorted(self.results, key=lambda d: order.get((d["check_id"], d["subject"]),
                                                               len(order)))
        # A subject that started in no item: its cases did not run (not-run, never a failure).
        for result in runner.mark_not_run([CheckResult.from_json(d) for d in ordered]):
            reports.on_check_finished(result)
        reports.on_run_finished(complete=exitstatus != pytest.ExitCode.INTERRUPTED)
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(f"tooluse: {len(self.results)} results in "
                                f"{reports.paths['results']}")


def register(config: pytest.Config) -> None:
    """Register the collector when ``--tooluse-out`` is given (every process, workers too)."""
    out = config.getoption("--tooluse-out", None)
    if out:
        config.pluginmanager.register(ResultsCollector(config, Path(out)), "tooluse-results")
