"""Wraps each command in a brace group on lines of its own (`{ CMD\n} </dev/null`), as the SDK
agent toolset's bash does, without `eval`: a comment-only command (`# note`) leaves the group
empty, `{ # note\n}` is a syntax error, and the non-interactive shell ends. The tool restarts it
and answers with an error: the directory and variables the session held are gone, for a comment.
(An empty command is refused with an error before it reaches the shell, as the reference does.)"""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool

TARGET = "bash.input.empty_or_comment_answered"


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        return (f"{{ {command}\n}} </dev/null\n__tooluse_rc=$?; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n"
                ).encode("utf-8", "surrogateescape")


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
