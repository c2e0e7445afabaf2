"""Answers with a list of text content blocks instead of one string (the tool_result ``content``
may be a string or a list of blocks, PROTOCOL.md §4 / the tool_result shape): the output split
into blocks of at most 50 whole lines, and a last block with the exit status. The model reads the
blocks in order; every line is intact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

LINES_PER_BLOCK = 50


class Tool(BashTool):
    def __call__(self, tool_input: Any) -> dict[str, Any]:
        answer = super().__call__(tool_input)
        text = str(answer["content"])
        lines = text.split("\n")
        blocks = [{"type": "text", "text": "\n".join(lines[i:i + LINES_PER_BLOCK])}
                  for i in range(0, len(lines), LINES_PER_BLOCK)]
        blocks.append({"type": "text", "text": "[error]" if answer["is_error"] else "[ok]"})
        return {"content": blocks, "is_error": answer["is_error"]}


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
