"""Does not restart a shell that exited by itself: `exit 3` is answered with an error saying the
session has ended and must be restarted, and every later command gets the same answer until
`restart: true` (seed 003 "Handle errors": when the session breaks, tell Claude what happened,
with is_error: true). The session works again after the restart.
"""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

ENDED = ("Error: the bash session has ended (status {status}); restart it with "
         "{{\"restart\": true}} before sending another command")


class Session(BashSession):
    ended: int | None = None

    def run(self, command: str) -> tuple[str, int | None]:
        if self.ended is not None:
            return ENDED.format(status=self.ended), 1
        proc = self.process
        out, status = super().run(command)
        if status is not None and self.process is not proc:  # the shell exited
            self.ended = status
            return ENDED.format(status=status), status or 1
        return out, status

    def restart(self) -> None:
        self.ended = None
        super().restart()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
