"""What a validation reports: :class:`Violation` and its :data:`Severity`.

Its own module, below the validators and the checks JSON Schema cannot express (``_stream``,
``_agents``), which ``_validate`` calls: with ``Violation`` in ``_validate`` the three files
imported each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "info"]


@dataclass(frozen=True)
class Violation:
    """One place where a JSON object breaks a schema.

    ``pointer`` is a JSON pointer into the validated object (or the file holding it), ``rule`` the
    project rule id the schema encodes (``tools.fixed_type_name``) or ``<document>/<def>:<keyword>``
    naming the schema entry and keyword that broke, ``severity`` ``error`` or ``info`` (a note:
    lenient mode tolerates the value but says so).
    """

    pointer: str
    message: str
    rule: str
    severity: Severity = "error"

    def __str__(self) -> str:
        mark = "" if self.severity == "error" else f"[{self.severity}] "
        return f"{self.pointer or '/'}: {mark}{self.message} ({self.rule})"

    def to_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "message": self.message, "rule": self.rule,
                "severity": self.severity}

    def at(self, prefix: str) -> Violation:
        """The same violation with ``prefix`` (a JSON pointer) put before its pointer."""
        return Violation(prefix + self.pointer, self.message, self.rule, self.severity)


def errors(violations: list[Violation]) -> list[Violation]:
    """Only the violations that make an object invalid (severity ``error``)."""
    return [v for v in violations if v.severity == "error"]
