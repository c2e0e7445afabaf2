"""Under ``pytest -n N`` the tests that share a module-scoped fixture run on one worker.

``tests/conftest.py`` marks them with one ``xdist_group`` and ``--dist loadgroup`` (pyproject's
addopts) sends a group to one worker, which pytest-xdist does by appending ``@group`` to each
test's node id. With pytest 9.2 that append is silently lost (xdist writes ``_nodeid``, pytest
9.2 reads ``_id``): the groups are spread over the workers and each worker builds the module's
fixture again (a whole run of subjects, several times over: issue 21). This test fails then.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def shared_by_the_module() -> int:
    return os.getpid()


def test_a_test_with_a_module_fixture_is_in_its_modules_group(
        request: pytest.FixtureRequest, shared_by_the_module: int) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("not under pytest -n N")
    if not request.config.getvalue("loadgroup"):  # set on the workers of --dist loadgroup
        pytest.skip("not --dist loadgroup")
    module = request.node.nodeid.split("::", 1)[0]  # the group tests/conftest.py gives it
    assert request.node.nodeid.endswith(f"@{module}"), (
        f"{request.node.nodeid!r}: the xdist_group is not in the node id, so pytest-xdist's "
        "loadgroup scheduler does not see it (pytest and pytest-xdist versions out of step)")
