"""Never kills its shell's process group: background processes outlive the session."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashTool

TARGET = "bash.session.no_processes_left_after_close"


class Tool(BashTool):
    def close(self) -> None:
        pass


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
