"""Returns stdout only: stderr goes nowhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.output.stdout_and_stderr"


class Session(BashSession):
    def start(self) -> None:
        self.process = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"], cwd=self.workdir, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
