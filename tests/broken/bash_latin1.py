"""Decodes output as Latin-1: anything beyond ASCII comes back as mojibake."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.output.roundtrip"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        out, status = super().run(command)
        return out.encode("utf-8", "replace").decode("latin-1"), status


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
