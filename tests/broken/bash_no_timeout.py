"""Has no command timeout: a command that never ends is never answered."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashTool

TARGET = "bash.timeout.returns_error_in_time"


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    return BashTool(workdir, 10_000.0)
