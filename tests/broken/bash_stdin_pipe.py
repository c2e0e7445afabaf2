"""Commands share the shell's stdin (the pipe commands arrive on), and a command still running
after a second is "nudged": the tool sends its end-of-command line again. A command that reads
stdin eats the first one (the session's own input), the nudge ends it, and the tool answers with
a success: the command was fed input nobody sent it, and the answer says all went well.

(Until issue 36 this subject only shared stdin, so a command reading it ate the sentinel line and
was ended by the command timeout with an error. That is seed 003's own design ("Limitations":
the session cannot run a command that waits on stdin; "Use command timeouts": the deadline is the
remedy) and is conformant now: tests/conformant/bash_seed003_session.py.)"""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.stdin.does_not_hang"
NUDGE_AFTER = 1.0


class Session(BashSession):
    sentinel = ""

    def new_sentinel(self) -> str:
        self.sentinel = super().new_sentinel()
        return self.sentinel

    def script(self, command: str, sentinel: str) -> bytes:
        return (f"eval {shlex.quote(command)}\n"
                f"__tooluse_rc=$?; __tu_done={sentinel}; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n").encode()

    def run(self, command: str) -> tuple[str, int | None]:
        if self.process is None or self.process.poll() is not None:
            self.restart()
        stdin = self.process.stdin if self.process is not None else None
        done = threading.Event()

        def nudge() -> None:  # the end-of-command line again, unless it already ran
            if done.wait(NUDGE_AFTER) or stdin is None:
                return
            s = self.sentinel
            try:
                stdin.write(f"[ \"$__tu_done\" = {s} ] || builtin printf '\\n%s %s\\n' '{s}' 0\n"
                            .encode())
                stdin.flush()
            except (OSError, ValueError):
                pass

        threading.Thread(target=nudge, daemon=True).start()
        try:
            return super().run(command)
        finally:
            done.set()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
