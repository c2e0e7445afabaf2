"""Run by tests/test_litter.py in a pytest of its own (never collected by the suite: the name does
not match test_*.py). It plants what $TOOLUSE_PLANT names in the session's temporary directory,
as a test, a run or a subject leaving something behind would."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_plant() -> None:
    name = os.environ.get("TOOLUSE_PLANT")
    if name:
        (Path(tempfile.gettempdir()) / name).mkdir()
