"""Restart on death: commands are written to the shell as they are, on lines of their own (seed
003's own ``BashSession`` does: ``f"{command}\\necho {sentinel}\\n"``), not through ``eval``. So
a syntax error such as ``echo )`` ends the non-interactive shell, and an open quote or an open
``for`` waits for more input until the command timeout; a command that reads stdin reads the
tool's own next line. The tool restarts a shell that has died and says so with an error (the
reference's "bash exited with status N; the session was restarted"); the next command runs in a
fresh session. Seed 003 "Handle errors": "When a command fails or the session breaks, tell Claude
what happened" (명령이 실패하거나 세션이 깨지면 Claude에 무슨 일이 있었는지 알려주세요).

:func:`on_death` gives any reference-based session class this behaviour and :func:`variant` any
reference-based factory (the presentation subjects of ``tests/conformant/`` with it:
``tests/conformant/on_death_variants.py``): a behaviour the documented design has by
construction is conformant, whatever the tool's presentation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.reference.bash import BashSession, BashTool


class Session(BashSession):
    def script(self, command: str, sentinel: str) -> bytes:
        text = (f"{command}\n__tooluse_rc=$?; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n")
        return text.encode("utf-8", "surrogateescape")


def on_death(session_class: type[BashSession]) -> type[BashSession]:
    """``session_class`` with commands written as they are (its own ``script`` still runs
    first, then this one's, in the method order)."""
    if session_class is BashSession:
        return Session
    if issubclass(session_class, Session):
        return session_class
    return type(f"{session_class.__name__}OnDeath", (session_class, Session), {})


def variant(factory: Callable[..., Any]) -> Callable[..., Any]:
    """A factory of reference-based tools whose sessions restart on death."""
    def make(workdir: Path, timeout: float = 30.0) -> Any:
        tool = factory(workdir, timeout)
        old = tool.session
        old.close()
        tool.session = on_death(type(old))(workdir, timeout, max_lines=old.max_lines,
                                           max_chars=old.max_chars, keep_bytes=old.keep_bytes)
        return tool
    return make


class Tool(BashTool):
    session_class = Session


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
