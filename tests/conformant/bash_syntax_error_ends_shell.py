"""A syntax error in a compound command (`if true; then echo x`, `for x in; do`, `echo )`) ends
the shell: the answer is the error, and every later command is answered with an empty error,
without a word about a restart, until `restart: true` brings the session back. An unclosed quote
does not end it. This is what the SDK agent toolset's bash does (anthropic 2.15.0,
`agent_toolset.py`: the command is wrapped in `{ CMD\\n}`, so the `}` is a syntax error that ends
its non-interactive shell, and the next call reads end of file: an empty error). Seed 003 asks
that an error be flagged and that `restart: true` give a clean session; whether the broken
session's answers ask for a restart is `bash.errors.syntax_error_recovers`' question (a SHOULD,
which tries the unclosed quote), so the model check restarts as a model would and must pass."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Session(BashSession):
    dead = False

    def run(self, command: str) -> tuple[str, int | None]:
        if self.dead:
            return "", 1
        out, status = super().run(command)
        if "syntax error" in out and "matching" not in out:
            self.dead = True
        return out, status

    def restart(self) -> None:
        self.dead = False
        super().restart()


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
