"""The check catalog: every conformance check, registered with its metadata.

A check is a function registered by :func:`check`. Its id is stable and stated as the requirement
(``editor.str_replace.rejects_multiple_matches``); it carries a severity (MUST / SHOULD / INFO),
the tool types it applies to, the source it encodes and a one-line statement. The registry refuses
duplicate ids and missing metadata at import time. The catalog is data: ``tooluse checks``, the
reports and the docs are generated from it.

Levels follow the calibration rule in docs/checks.md: MUST only for what the seeds or PROTOCOL.md
state, or for what loses or corrupts the user's data, executes input as code, hangs or lies
(``is_error``); SHOULD for documented recommendations; INFO for conventions where the docs are
silent (the check returns the convention it observed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from simulator.sources import Source

from .basis import BASES, Basis


class Severity(StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class CheckFailure(AssertionError):
    """Raised by a check when the subject breaks the requirement.

    ``received`` and ``documented`` are shown side by side; ``reproducer`` is the replayable list
    of tool inputs that shows the failure, ``setup`` what it plants before them (see
    :mod:`conformance.reproducers`), ``reproduced`` whether a replay on a fresh subject showed
    the failure again (``"verified"``, ``"did not reproduce"``, empty: not replayed).
    ``verify(inputs, setup)``, when given, replays the reproducer as it will be printed and
    returns ``reproduced``: the runner calls it with the final reproducer (a property check may
    still shrink it after the failure is raised), while the case's session is open.
    """

    def __init__(self, message: str, *, received: Any = None, documented: Any = None,
                 reproducer: list[dict[str, Any]] | None = None,
                 setup: list[dict[str, Any]] | None = None, reproduced: str = "",
                 verify: Callable[[list[dict[str, Any]], list[dict[str, Any]]], str] | None = None,
                 ) -> None:
        super().__init__(message)
        self.verify = verify
        self.message = message
        self.received = received
        self.documented = documented
        self.reproducer = list(reproducer or [])
        self.setup = list(setup or [])
        self.reproduced = reproduced


class CheckIncomplete(Exception):
    """Raised by a check that could not finish its fixed amount of work within its hard time cap
    (outcome ``incomplete``: neither a failure nor a pass, never blocking; the message says how
    far it got and why it stopped)."""


class CheckSkipped(Exception):
    """Raised by a check that does not apply to this subject after all (with the reason)."""


@dataclass
class Rejudged:
    """Returned by a check whose failures did not repeat when it judged them again: a model
    check (editor, bash) whose every disagreement, its reproducer replayed exactly as printed on
    a fresh subject, did not show again. Issue 21's rule for failures that rest on timing: only
    a failure that repeats is a FAIL, and one that does not is never a silent pass. The result
    is a pass that carries ``rejudged`` (``by: "replay"``; both runs), shown in every report
    format as a failure on time that did not repeat is (:func:`conformance.results.rejudged_note`).

    ``observed`` is the check's observed string; ``first`` what the run saw (the disagreements),
    ``rerun`` what the replays saw; each ``{"outcome", "duration", "message", "misses"}``."""

    observed: str
    first: dict[str, Any]
    rerun: dict[str, Any]

    def record(self) -> dict[str, Any]:
        """The result's ``rejudged`` value."""
        return {"by": "replay", "repeated": False, "first": self.first, "rerun": self.rerun}


F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Check:
    id: str
    family: str
    severity: Severity
    applies_to: frozenset[str]
    source: Source
    statement: str
    func: Callable[..., Any] = field(compare=False, repr=False)
    tags: frozenset[str] = frozenset()

    def applies(self, tool_type: str) -> bool:
        return tool_type in self.applies_to

    @property
    def basis(self) -> Basis | None:
        """The sentence of the source the check rests on (:mod:`conformance.basis`)."""
        return BASES.get(self.id)

    def basis_json(self) -> dict[str, Any]:
        """:meth:`Basis.to_json` for this check's source document (empty without a basis)."""
        b = self.basis
        return b.to_json(self.source.document) if b else {}

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id, "family": self.family, "severity": self.severity.value,
            "applies_to": sorted(self.applies_to), "source": self.source.cite_json(),
            "statement": self.statement,
        }
        if self.basis:
            out["basis"] = self.basis_json()
        return out


CATALOG: dict[str, Check] = {}


def check(id: str, *, family: str, severity: Severity, applies_to: Iterable[str], source: Source,
          statement: str, tags: Iterable[str] = ()) -> Callable[[F], F]:
    """Register a check function under a stable id."""
    applies = frozenset(applies_to)
    if not id or id != id.strip() or " " in id:
        raise ValueError(f"bad check id {id!r}")
    if not id.startswith(f"{family}."):
        raise ValueError(f"check id {id!r} must start with its family {family!r}")
    if not statement.strip():
        raise ValueError(f"check {id}: a one-line statement is required")
    if not applies:
        raise ValueError(f"check {id}: applies_to must name at least one tool type")

    def deco(func: F) -> F:
        if id in CATALOG:
            raise ValueError(f"check id {id!r} registered twice")
        CATALOG[id] = Check(id, family, Severity(severity), applies, source, statement, func,
                            frozenset(tags))
        return func

    return deco


def checks_for(tool_type: str, family: str | None = None) -> Iterator[Check]:
    for c in sorted(CATALOG.values(), key=lambda c: c.id):
        if c.applies(tool_type) and (family is None or c.family == family):
            yield c
