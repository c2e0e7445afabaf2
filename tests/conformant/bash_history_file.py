"""An interactive-style shell: history is on and every command is appended to
$HOME/.bash_history (what `PROMPT_COMMAND='history -a'` does in a user's shell). The suite
gives each subject a throwaway HOME; writing there touches none of the user's files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        history = (f'HISTFILE="$HOME/.bash_history"; set -o history; '
                   f"history -s {shlex.quote(command)}; history -a\n")
        return history.encode("utf-8", "replace") + super().script(command, sentinel)


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
