"""Keeps only the first 4 kB of a command's output and says nothing when an output under 100
lines is cut (seed 003's helper cuts only past 100 lines, and says so)."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashTool

TARGET = "bash.output.cut_short_says_so"


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    return BashTool(workdir, timeout, keep_bytes=4096)
