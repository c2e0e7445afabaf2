from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared``; tests that need it skip with a reason on a user's fresh clone."""
    if not (SHARED / "seeds").is_dir():
        pytest.skip(f"{SHARED} is absent (seeds and real traffic live outside the project)")
    return SHARED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs ``../shared`` (the ``shared_dir`` fixture, directly or through
    another fixture) carries the ``shared`` marker: ``-m 'not shared'`` deselects them all."""
    for item in items:
        if "shared_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)
