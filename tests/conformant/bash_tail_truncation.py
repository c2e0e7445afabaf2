"""Truncates large output by keeping its tail (the last 100 lines, at most 30,000 characters)
after a notice, as tools that care most about a build's last lines do. Seed 003 "Handle large
outputs" asks to truncate; which part to keep is the application's choice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

MAX_LINES, MAX_CHARS = 100, 30_000


def keep_tail(text: str) -> str:
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        text = "\n".join(lines[-MAX_LINES:])
        text = f"[... {len(lines) - MAX_LINES} earlier lines truncated; the last {MAX_LINES} " \
               f"lines follow ...]\n{text}"
    if len(text) > MAX_CHARS:
        text = f"[... output truncated to its last {MAX_CHARS} characters ...]\n{text[-MAX_CHARS:]}"
    return text


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        r = super().__call__(tool_input)
        if isinstance(tool_input, dict) and tool_input.get("command"):
            r["content"] = keep_tail(r["content"])
        return r


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    # Keep everything in the session (up to 16 MB) and cut here, from the tail.
    return Tool(workdir, timeout, max_lines=10**9, max_chars=10**9, keep_bytes=16 * 2**20)
