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


def test_the_recorded_durations_are_found_under_the_ids_collection_gives() -> None:
    """tests/durations.json orders the tests, longest first, by their node ids as collected
    (before pytest-xdist appends ``@group``). Ids stored with a group's suffix were never
    found: the broken bash subjects' runs (up to a minute each) counted as short and started
    last, while the other workers had nothing left (issue 21)."""
    from conftest import DURATIONS, _recorded_durations, _without_group

    recorded = _recorded_durations()
    assert recorded, f"{DURATIONS} is empty or unreadable"
    assert [k for k in recorded if _without_group(k) != k] == []
    assert _without_group("tests/t.py::test_x[a]@tests/t.py") == "tests/t.py::test_x[a]"
    assert _without_group("tests/t.py::test_x[a]@test_t-a") == "tests/t.py::test_x[a]"
    assert _without_group("tests/t.py::test_x[user@host]") == "tests/t.py::test_x[user@host]"
