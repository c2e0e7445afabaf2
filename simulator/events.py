"""The engine's log: what happened to every request, for conformance code to judge afterwards.

``Simulator.log`` is a list of these frozen records, in order. Each has ``kind`` and
``request_id``; conformance code filters by type (``sim.violations``, ``sim.mismatches``,
``sim.served``, ...: :class:`EventLog`) or by ``kind``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypeVar

from .differences import Difference, first_difference


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    request_id: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True, init=False, eq=False)
class RequestReceived(Event):
    """A request reached the Messages flow. ``body`` is its parsed JSON body.

    Given ``raw`` (the body's bytes) instead of a parsed ``body``, the event keeps the bytes and
    parses them on first access: a log of parsed bodies keeps thousands of objects alive per
    request, which makes every full garbage collection of the process slower (see
    docs/performance.md).
    """

    kind: ClassVar[str] = "request_received"
    method: str
    path: str
    headers: dict[str, str]

    def __init__(self, request_id: str, method: str, path: str, body: Any = None,
                 headers: dict[str, str] | None = None, *, raw: bytes | None = None) -> None:
        object.__setattr__(self, "request_id", request_id)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "headers", headers if headers is not None else {})
        object.__setattr__(self, "_body", body)
        object.__setattr__(self, "_raw", raw)

    @property
    def body(self) -> Any:
        if self._raw is not None:  # type: ignore[attr-defined]
            object.__setattr__(self, "_body", json.loads(self._raw.decode("utf-8")))  # type: ignore[attr-defined]
            object.__setattr__(self, "_raw", None)
        return self._body  # type: ignore[attr-defined]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "request_id": self.request_id, "method": self.method,
                "path": self.path, "body": self.body, "headers": self.headers}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RequestReceived) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((self.request_id, self.method, self.path))

    def __repr__(self) -> str:
        return (f"RequestReceived(request_id={self.request_id!r}, method={self.method!r}, "
                f"path={self.path!r}, body={self.body!r}, headers={self.headers!r})")


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
    #: Served again, statelessly, to a request matching an exchange already served
    #: (``Simulator(replay="repeat")``).
    repeated: bool = False
    #: What a tolerant matcher normalised to match the request to this exchange (what an exact
    #: comparison would have refused), one line each.
    normalised: tuple[str, ...] = ()


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
    #: Where the request first differs from the recording: the path in the request's own words
    #: and both values (:class:`simulator.differences.Difference`); None for ``exhausted``.
    difference: Difference | None = None

    @property
    def line(self) -> str:
        """The difference in one line, e.g. ``tools[get_weather].input_schema.properties.
        location.type: recorded "string", received "number"`` (``exhausted``: what it means)."""
        if self.matcher == "exhausted":
            return "every recorded exchange has been served"
        d = self.difference or first_difference(self.expected, self.received, self.matcher) \
            or Difference(self.matcher, self.expected, self.received)
        return d.line


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
class ExchangeSkipped(Event):
    """An exchange recorded as a deliberate violation (``expect_rule``) passed over: the request
    passed every rule and matched the corrected request recorded after it."""

    kind: ClassVar[str] = "exchange_skipped"
    cassette_id: str
    cassette_path: str | None
    exchange_index: int
    expect_rule: str


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


E = TypeVar("E", bound=Event)


class EventLog:
    """The log and its typed views (the engine's base class)."""

    def __init__(self, log_limit: int | None = None) -> None:
        self.log: list[Event] = []
        #: Keep at most this many events (oldest dropped): for long-running servers.
        self.log_limit = log_limit
        self.log_dropped = 0

    def _of(self, kind: type[E]) -> list[E]:
        return [e for e in self.log if isinstance(e, kind)]

    def mark(self) -> int:
        """A position in the log that survives trimming (see :meth:`events_since`)."""
        return self.log_dropped + len(self.log)

    def events_since(self, mark: int) -> list[Event]:
        """The events logged after :meth:`mark` returned ``mark`` (those not trimmed away)."""
        return self.log[max(0, mark - self.log_dropped):]

    def _emit(self, event: Event) -> None:
        self.log.append(event)
        if self.log_limit is not None and len(self.log) > self.log_limit:
            drop = len(self.log) - self.log_limit
            del self.log[:drop]
            self.log_dropped += drop

    @property
    def violations(self) -> list[RuleViolated]:
        return self._of(RuleViolated)

    @property
    def mismatches(self) -> list[Mismatch]:
        return self._of(Mismatch)

    @property
    def served(self) -> list[ExchangeServed]:
        return self._of(ExchangeServed)

    @property
    def unmet(self) -> list[ExpectationUnmet]:
        return self._of(ExpectationUnmet)

    @property
    def skipped(self) -> list[ExchangeSkipped]:
        return self._of(ExchangeSkipped)

    @property
    def faults_injected(self) -> list[FaultInjected]:
        return self._of(FaultInjected)

    @property
    def notes(self) -> list[Note]:
        return self._of(Note)
