"""How a bash check fails: the reproducer, what it planted, and its verification by replay.

Every bash check failure goes through :func:`fail` with a **judge** (``shows``): the check's own
failure condition, asked again of the answers a fresh subject gives when the reproducer is
replayed exactly as printed (:func:`conformance.reproducers.replay_fresh_subject`; the runner
does it with the final reproducer, after a property check has shrunk it). The result's
``reproduced`` is then ``verified`` or ``did not reproduce``.

The rule for judges (docs/checks.md, "Verified reproducers"): a judge compares what the failure
is about, never bytes that differ on every run. A bash answer carries process ids, timings and
the session's own decorations, so a judge asks the check's question of the replayed answer: the
answer is an error or not, it came in time or not, it holds (or lacks) the check's marker (its
token is part of the printed input, so the replay prints the same one), a directory the check
planted is (not) the working directory, the process whose id the replay printed is (not) still
running. A check that never fails without a judge cannot print an unverified reproducer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from conformance.catalog import CheckFailure
from conformance.checks.planted import reproducer as planted_reproducer
from conformance.reproducers import (
    Replayed,
    materialize,
    relativize_inputs,
    relativize_value,
    replay_fresh_subject,
    verdict_of,
)
from conformance.session import ToolResult, ToolSession


@dataclass
class Again:
    """A bash reproducer replayed on a fresh subject: what a judge looks at."""

    #: One answer per input, in order.
    results: list[ToolResult]
    #: The replay's working directory (``$TOOLUSE_WORKDIR`` of the replay).
    workdir: Path
    #: The fresh subject's session (still open: its processes can be looked at).
    session: Any
    #: The case's working directory (where the check's own paths are).
    case: Path
    #: The inputs replayed (as sent: the replay's directory in place of ``$TOOLUSE_WORKDIR``).
    inputs: list[dict[str, Any]]

    @property
    def last(self) -> ToolResult:
        """The answer to the last input (the one most failures are about)."""
        return self.results[-1]

    def path(self, original: str | Path) -> Path:
        """A path of the case's directory as it is in the replay's."""
        rel = os.path.relpath(os.path.normpath(original), os.path.normpath(self.case))
        return self.workdir / rel if not rel.startswith("..") else Path(original)


#: A judge: does the replay show the failure again?
#: A judge of a replay: shown (True), not shown (False), or it cannot tell (None: not verified).
Judge = Callable[[Again], bool | None]


def fail(s: ToolSession, message: str, *, received: Any, documented: Any, shows: Judge,
         reproducer: list[dict[str, Any]] | None = None) -> NoReturn:
    """Raise the check's failure: ``received`` (a :class:`ToolResult` is shown as its JSON),
    ``documented``, the reproducer (``reproducer``, or every input the case sent) with what the
    check planted as setup steps, and the judge that verifies it by replay (see the module)."""
    inputs, setup = planted_reproducer(s)
    raise CheckFailure(message, received=shown(received), documented=documented,
                       reproducer=reproducer if reproducer is not None else inputs, setup=setup,
                       verify=verifier(s, shows))


def shown(value: Any) -> Any:
    if isinstance(value, ToolResult):
        return value.to_json()
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


def verifier(s: ToolSession, shows: Judge) -> Callable[[list[dict[str, Any]],
                                                         list[dict[str, Any]]], str]:
    """``verify(inputs, setup)`` for :class:`CheckFailure`: the reproducer replayed as printed
    on a fresh subject, judged by ``shows`` (an answer missing from the replay: not shown)."""
    case = Path(s.workdir)

    def verify(inputs: list[dict[str, Any]], setup: list[dict[str, Any]]) -> str:
        if not inputs:
            return ""
        printed = relativize_inputs(inputs, case)

        def judge(replayed: Replayed) -> bool | None:
            if len(replayed.results) != len(inputs):
                return False
            return shows(Again(replayed.results, replayed.workdir, replayed.session, case,
                               materialize(printed, replayed.workdir)))

        return verdict_of(replay_fresh_subject(
            s, printed, relativize_value(setup, case), judge))

    return verify


__all__ = ["Again", "Judge", "fail", "verifier"]
