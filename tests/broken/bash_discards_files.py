"""A "sandbox" that throws away every file a command creates in the working directory."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.session.files_persist"


class Session(BashSession):
    def run(self, command: str) -> tuple[str, int | None]:
        before = set(self.workdir.rglob("*"))
        out = super().run(command)
        for path in sorted(set(self.workdir.rglob("*")) - before, reverse=True):
            if path.is_file():
                path.unlink()
        return out


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
