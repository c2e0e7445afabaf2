"""Runs each command in a subshell and carries only the working directory over: the
environment is lost between calls."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.session.env_persists"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        cwd_file = shlex.quote(str(self.workdir / f".tooluse-cwd-{os.getpid()}-{id(self)}"))
        return (f"( eval {shlex.quote(command)} </dev/null; __rc=$?; pwd > {cwd_file}; "
                f"exit $__rc ); __tooluse_rc=$?; cd \"$(cat {cwd_file} 2>/dev/null || pwd)\"\n"
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n").encode()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
