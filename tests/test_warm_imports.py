"""``scripts/warm_imports.py`` (run by ``nox -s tests`` before pytest, issue 21) names modules
that exist: one that was renamed would be skipped in silence and compiled by every worker again."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts import warm_imports  # noqa: E402


def test_every_module_it_warms_is_installed_with_the_test_extra() -> None:
    missing = [m for m in warm_imports.MODULES if importlib.util.find_spec(m) is None]
    assert missing == []


def test_it_imports_them() -> None:
    warm_imports.main()  # in this process (a subprocess would pay the imports again)
    assert set(warm_imports.MODULES) <= set(sys.modules)
