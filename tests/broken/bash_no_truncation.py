"""Returns every byte of a large output (the API would reject the oversized request)."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashTool

TARGET = "bash.output.large_output_truncated"


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    return BashTool(workdir, timeout, max_lines=10**9, max_chars=10**9, keep_bytes=10**9)
