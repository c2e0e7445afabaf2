"""Restarts by hanging up on the shell's process group (SIGHUP, as closing a terminal does)
instead of killing it: a plain background job dies with the shell, but one started with
``nohup`` (the form models write for a server they want to keep) survives the restart. Seed 003
"Parameters": a restarted session starts clean, its running processes gone.
``bash.restart.clears_state`` starts its job without nohup, so it passes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.model.agrees_with_session_model"


class Session(BashSession):
    # Its shell must die of SIGHUP as a terminal's does: tests/conftest.py gives the test
    # processes SIGHUP's default action when they were started ignoring it (nohup).
    def restart(self) -> None:
        if self.process is not None:
            self.hung_up = [*getattr(self, "hung_up", []), self.process.pid]
        self.kill(signal.SIGHUP)
        self.start()

    def close(self) -> None:
        super().close()
        for group in getattr(self, "hung_up", []):  # what survived the restarts goes at close
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
