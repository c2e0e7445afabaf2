"""Commands share the shell's stdin (the pipe commands arrive on): a command that reads stdin
eats the session's own input and hangs until the timeout."""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.stdin.does_not_hang"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        return (f"eval {shlex.quote(command)}\n"
                f"__tooluse_rc=$?; builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n"
                ).encode()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
