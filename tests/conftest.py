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
