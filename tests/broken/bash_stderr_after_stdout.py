"""Captures stderr apart and appends it after stdout: the order is lost."""

from __future__ import annotations

import os
import shlex
import tempfile
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.output.interleaved_in_order"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        err = shlex.quote(str(Path(tempfile.gettempdir()) / f"tooluse-err-{os.getpid()}-{id(self)}"))
        return (f"eval {shlex.quote(command)} </dev/null 2>{err}\n"
                f"__tooluse_rc=$?; cat {err}; rm -f {err}; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n").encode()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
