"""pytest plugin (entry point ``pytest11``): the suite inside a team's own test run.

Kept thin: options and fixtures only; the work lives in the runner and the simulator.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from conformance.options import SUBJECT_DESTS
from conformance.options import pytest_options as _table_options
from conformance.pytest import RUN

# The options are the run's table (conformance.options.OPTIONS, those offered to pytest), each as
# --tooluse-<its tooluse run name>. Nothing else of the suite is imported until one of them
# names a subject: the plugin loads in every pytest run of an environment it is installed in.

#: Every option of the plugin: (--tooluse-<name>, argparse keywords), from the run's table.
OPTIONS: list[tuple[str, dict[str, Any]]] = _table_options()
#: The options naming subjects: without one, no conformance item is collected.
SUBJECT_OPTIONS = tuple("--tooluse-" + d.replace("_", "-") for d in SUBJECT_DESTS)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tooluse", "tool-use protocol conformance")
    group.addoption("--tooluse-fixtures", default=None,
                    help="cassette directory for the tooluse_simulator fixture")
    group.addoption("--tooluse-out", default=None, metavar="DIR",
                    help="write results.json and the reports of the conformance items into DIR "
                         "(one report for the run, pytest-xdist workers' results merged)")
    for name, kwargs in OPTIONS:  # --tooluse-bash SPEC, --tooluse-editor SPEC, ... (docs/subjects.md)
        group.addoption(name, **kwargs)


def wanted(config: pytest.Config) -> bool:
    """Whether a --tooluse-* option names a subject (or a --tooluse-name was misplaced)."""
    return (any(config.getoption(name, None) for name in SUBJECT_OPTIONS)
            or bool(getattr(config.option, "_name_error", None)))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tooluse: a conformance check run against a subject")
    if wanted(config):  # the run's one value, built here as `tooluse run` builds it
        from conformance.errors import UsageError
        from conformance.run import Run

        try:
            settings = Run.from_args(config.option, os.environ, prefix="tooluse_")
            settings.check_sandbox()
        except UsageError as e:
            raise pytest.UsageError(f"tooluse: {e}") from None
        config.stash[RUN] = settings
    if config.getoption("--tooluse-out", None):
        from conformance.pytest.report import register

        register(config)  # --tooluse-out DIR


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    """A conformance item whose subject did not start is an error, not a failure: the case
    never ran (issue 36), as a test whose setup broke (``ERROR at setup of ...``)."""
    outcome = yield
    if call.when == "call" and getattr(item, "tooluse_not_started", False):
        report = outcome.get_result()
        if report.failed:
            report.when = "setup"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """One item per (subject, check) named by --tooluse-bash / --tooluse-editor / ..."""
    if RUN not in config.stash:
        return
    from conformance.pytest.items import add_items

    add_items(session, config, items)


@pytest.fixture
def tooluse_simulator(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """Start the simulator in-process: ``api = tooluse_simulator(cassette_or_dir, **engine_opts)``
    (default source: ``--tooluse-fixtures``); an unmodified ``anthropic.Anthropic()`` then talks
    to it until the test ends. Returns :class:`simulator.transports.MockedAPI`."""
    from simulator.transports import mock

    with ExitStack() as stack:
        def start(source: Any = None, **engine_opts: Any) -> Any:
            source = source if source is not None else request.config.getoption("--tooluse-fixtures")
            if source is None:
                pytest.fail("tooluse_simulator: pass a cassette or directory, or --tooluse-fixtures")
            return stack.enter_context(mock(source, **engine_opts))

        yield start
