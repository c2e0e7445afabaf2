"""Decodes the output strictly as UTF-8: output that is not UTF-8 (`printf '\\377\\376 x'`)
raises in the tool, so the call gets no answer of the tool's own (the subject faults) and the
valid text around the bytes is lost."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool, truncate_output

TARGET = "bash.output.non_utf8_answered"


class Session(BashSession):
    def format(self, data: bytes, total_lines: int, dropped: int) -> str:
        return truncate_output(data.decode("utf-8"), self.max_lines, total_lines)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
