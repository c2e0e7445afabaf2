"""Runs every command in a subshell and carries only the working directory and the exported
variables over to the next one (as a tool that runs each command with ``bash -c`` and saves
``pwd`` and ``export -p`` afterwards does): shell variables, functions, aliases, ``umask`` and
shell options set by one command are gone at the next. Seed 003 "Bash tool": one bash process
stays alive between calls, so state persists between commands. The fixed checks (directory,
exported variable, file) all pass."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.model.agrees_with_session_model"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        state = self.workdir / f".tooluse-state-{os.getpid()}-{id(self)}"  # gone with the case
        cwd, env = shlex.quote(f"{state}.cwd"), shlex.quote(f"{state}.env")
        return (f"( eval {shlex.quote(command)} </dev/null; __rc=$?; pwd > {cwd}; "
                f"export -p > {env}; exit $__rc ); __tooluse_rc=$?; "
                f"cd \"$(cat {cwd} 2>/dev/null || pwd)\"; . {env} 2>/dev/null\n"
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n").encode()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
