"""Results of a conformance run: the records the runner produces and the writers consume.

The engine emits :class:`CheckResult` records; ``results.json`` (versioned schema), JUnit, Markdown
and HTML writers read them. Harness faults (``error``) are kept apart from subject faults (``fail``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Outcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    #: The harness itself broke (not the subject's fault).
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


@dataclass
class CheckResult:
    check_id: str
    subject: str
    tool_type: str
    family: str
    severity: str
    outcome: Outcome
    duration: float = 0.0
    message: str = ""
    received: Any = None
    documented: Any = None
    #: Replayable list of tool inputs (or requests) that shows the failure.
    reproducer: list[Any] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        return d


@dataclass
class SubjectInfo:
    name: str
    family: str
    tool_type: str
    spec: str
