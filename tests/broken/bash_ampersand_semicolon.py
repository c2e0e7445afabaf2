"""Appends its end-of-command marker to the command's own line with `; ` (`CMD; printf
<sentinel>`), as a vendor demo does: a command that ends in `&` (`sleep 60 &`) becomes
`sleep 60 &; printf …`, a syntax error that ends its non-interactive shell. The tool notices the
shell ended, restarts it and answers with an error, so the job the model started is gone and
the call failed. Only commands ending in `&` take the `; ` join here (the demo's other casualties,
a heredoc's end line or a trailing comment, are other checks' business: one defect, one
check)."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.session.background_job_does_not_hang"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        if not command.rstrip().endswith("&") or command.rstrip().endswith("&&"):
            return super().script(command, sentinel)
        return (f"{command.rstrip()}; __tooluse_rc=$?; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n").encode()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
