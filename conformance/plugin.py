"""pytest plugin (entry point ``pytest11``): the suite inside a team's own test run.

Kept thin: options and fixtures only; the work lives in the runner and the simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tooluse", "tool-use protocol conformance")
    group.addoption("--tooluse-fixtures", default=None,
                    help="cassette directory for the tooluse_simulator fixture")
    group.addoption("--tooluse-out", default=None, metavar="DIR",
                    help="write results.json and the reports of the conformance items into DIR "
                         "(one report for the run, pytest-xdist workers' results merged)")
    from conformance.subjects.pytest_items import add_options

    add_options(group)  # --tooluse-bash SPEC, --tooluse-editor SPEC, ... (docs/subjects.md)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tooluse: a conformance check run against a subject")
    from conformance.subjects.pytest_report import register

    register(config)  # --tooluse-out DIR


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """One item per (subject, check) named by --tooluse-bash / --tooluse-editor / ..."""
    from conformance.subjects.pytest_items import add_items

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
