"""What a check talks to: one subject under test, with a fresh working directory.

The runner builds a :class:`ToolSession` around a subject (an in-process ``module:attr`` factory or
an out-of-process command) and hands it to each check function::

    @check("editor.view.line_numbers", family="editor", severity=Severity.SHOULD, ...)
    def _(s: ToolSession) -> None:
        (s.workdir / "a.txt").write_text("x\\n")
        r = s.call({"command": "view", "path": str(s.workdir / "a.txt")})
        if r.is_error: raise CheckFailure(...)

Every input sent through :meth:`ToolSession.call` is recorded in :attr:`ToolSession.history`, which
becomes the failure's reproducer.

A check that needs a clean subject more than once (the model-based and property checks: one per
generated example) asks :func:`spawn` for another instance of the same subject in a directory of
its own. The runner makes that possible by :func:`allow_spawn` on every session it opens; a session
without it (an in-process test harness) gets ``None`` and the check reuses its one session.
Where the run starts the subject ahead of need (a command subject: its start-up pool), such a
check can take one already started, in a directory of its own, with :func:`fresh`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: A text that says it is an error: "error" first (after any whitespace), in any case.
_SAYS_ERROR = re.compile(r"\s*error", re.IGNORECASE)


@dataclass
class ToolResult:
    """What the subject answered, normalised to the tool_result shape."""

    #: ``str`` or a list of content blocks, as the subject returned it.
    content: str | list[dict[str, Any]]
    is_error: bool
    #: The exception text when the handler raised (counts as an error result).
    raised: str | None = None
    #: Seconds the call took.
    elapsed: float = 0.0
    #: True when the call did not return within the deadline (the subject was stopped).
    timed_out: bool = False
    #: Seconds the harness added to the call's deadline for measured load (subjects/timing.py).
    allowance: float = 0.0

    @property
    def text(self) -> str:
        """All text of the result, blocks joined by newlines."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(str(b.get("text", "")) for b in self.content
                         if isinstance(b, dict) and b.get("type") == "text")

    def says_error(self) -> bool:
        """The text begins with "error" (after whitespace, any case): how a subject that does not
        set ``is_error`` refuses. Reads only the text's start (a view can be megabytes long)."""
        return _SAYS_ERROR.match(self.text) is not None

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error}


class ToolSession(Protocol):
    workdir: Path
    tool_type: str
    #: The command timeout the subject was given (seconds).
    timeout: float
    history: list[dict[str, Any]]

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> ToolResult:
        """Send one tool_use ``input``; ``deadline`` overrides the default per-call deadline."""
        ...

    def close(self) -> None:
        ...


#: Opens another instance of a session's subject with ``workdir`` as its working directory.
Spawner = Callable[[Path], "ToolSession"]


def allow_spawn(session: Any, opener: Callable[[Path], Any],
                startup_timeout: float | None = None) -> None:
    """Let checks start more instances of ``session``'s subject (see :func:`spawn`). The runner
    calls this with ``lambda workdir: subject.open(workdir, ...)`` and the case's options; a
    session the opener returns with ``wait_ready`` is made ready (``startup_timeout``) first."""
    def spawner(workdir: Path) -> Any:
        new = opener(workdir)
        ready = getattr(new, "wait_ready", None)
        if callable(ready) and startup_timeout is not None:
            try:
                ready(startup_timeout)
            except BaseException:
                new.close()
                raise
        return new

    try:
        session.spawn_subject = spawner
    except AttributeError:  # a session with __slots__: checks reuse it
        pass


def allow_fresh(session: Any, taker: Callable[[int], Any]) -> None:
    """Let checks take fresh instances of ``session``'s subject from the run's start pool (see
    :func:`fresh`): ``taker(ahead)`` returns one, ready, in a new directory of its own."""
    try:
        session.fresh_subject = taker
    except AttributeError:  # a session with __slots__: checks spawn instead
        pass


def fresh(session: ToolSession, ahead: int = 0) -> ToolSession | None:
    """A fresh, ready instance of the session's subject in a new, empty directory of its own
    (its ``workdir``), taken from the run's start pool, which started it ahead of need;
    ``ahead``: how many more the caller will ask for (started ahead too, within the pool's
    bounds). The caller closes it and removes its directory. ``None`` when the run has no pool
    for this subject: :func:`spawn` one in a directory of the caller's. Raises what the
    subject's start raised (``SubjectStartError`` when it did not start)."""
    taker: Callable[[int], Any] | None = getattr(session, "fresh_subject", None)
    return None if taker is None else taker(ahead)


def spawn(session: ToolSession, workdir: Path) -> ToolSession | None:
    """A fresh instance of the session's subject working in ``workdir`` (an existing, empty
    directory), or ``None`` when the session cannot start another one. The caller closes it.
    Raises what the subject's ``open`` raises (``SubjectStartError`` when it does not start)."""
    opener: Spawner | None = getattr(session, "spawn_subject", None)
    return None if opener is None else opener(workdir)


def faults_of(session: Any) -> list[str]:
    """The harness-side faults the session recorded so far (hang, exit, bad answer); ``[]`` for
    sessions that do not record any."""
    faults = getattr(session, "faults", None)
    return faults if isinstance(faults, list) else []
