"""pytest plugin (entry point ``pytest11``): the suite inside a team's own test run.

Kept thin: options and fixtures only; the work lives in the runner and the simulator.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tooluse", "tool-use protocol conformance")
    group.addoption("--tooluse-fixtures", default=None,
                    help="cassette directory for the tooluse_simulator fixture")
