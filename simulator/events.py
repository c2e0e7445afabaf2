"""The engine's log: what happened to every request, for conformance code to judge afterwards.

``Simulator.log`` is a list of these frozen records, in order. Each has ``kind`` and
``request_id``; conformance code filters by type (``sim.violations``, ``sim.mismatches``,
``sim.served``) or by ``kind``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    request_id: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class RequestReceived(Event):
    kind: ClassVar[str] = "request_received"
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass(frozen=True)
class RuleViolated(Event):
    kind: ClassVar[str] = "rule_violated"
    rule_id: str
    message: str
    #: The offending request body.
    body: Any
    #: True when the answered error is this one (the first violation of the request).
    answered: bool = True
    #: True when a cassette exchange expected exactly this violation (``expect_rule``).
    expected: bool = False


@dataclass(frozen=True)
class ExchangeServed(Event):
    kind: ClassVar[str] = "exchange_served"
    cassette_id: str
    cassette_path: str | None
    exchange_index: int
    status: int
    stream: bool
    #: ``recorded`` (verbatim JSON or events), ``synthesized`` (SSE from JSON),
    #: ``assembled`` (JSON from recorded events), ``rule_error`` (an ``expect_rule`` exchange).
    mode: str
    expect_rule: str | None = None
    #: Served again to a retry after a ``slow`` fault.
    replayed: bool = False


@dataclass(frozen=True)
class Mismatch(Event):
    kind: ClassVar[str] = "mismatch"
    cassette_id: str
    cassette_path: str | None
    exchange_index: int
    matcher: str
    expected: Any
    received: Any
    #: False under ``strict_matching=False`` (the exchange was served anyway).
    refused: bool = True


@dataclass(frozen=True)
class ExpectationUnmet(Event):
    kind: ClassVar[str] = "expectation_unmet"
    cassette_id: str
    cassette_path: str | None
    exchange_index: int
    expect_rule: str
    #: The rule the request did break instead (None: it broke none).
    got_rule: str | None


@dataclass(frozen=True)
class FaultInjected(Event):
    kind: ClassVar[str] = "fault_injected"
    fault: str
    cassette_id: str
    exchange_index: int


@dataclass(frozen=True)
class Rejected(Event):
    kind: ClassVar[str] = "rejected"
    status: int
    reason: str


@dataclass(frozen=True)
class Note(Event):
    kind: ClassVar[str] = "note"
    text: str
