"""Restarts by hanging up on the shell's process group (SIGHUP, as closing a terminal does)
instead of killing it: a plain background job dies with the shell, but one started with
``nohup`` (the form models write for a server they want to keep) survives the restart. Seed 003
"Parameters": a restarted session starts clean, its running processes gone.
``bash.restart.clears_state`` starts its job without nohup, so it passes."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.model.agrees_with_session_model"


def _as_at_a_terminal() -> None:
    # A terminal's shell dies of SIGHUP; one started by a process that ignores SIGHUP (nohup, some
    # CI runners) would inherit that and never exit, and this subject's defect would be a hang.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Session(BashSession):
    def start(self) -> None:
        self.process = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"], cwd=self.workdir,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_as_at_a_terminal)

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
