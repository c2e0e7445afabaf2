"""Fault injection: errors, dropped connections, slow and stalled responses, on demand.

A :class:`FaultPlan` says which requests get a fault, by the index of the exchange they would be
served (``at``), or as rates drawn from a seeded RNG (``rates``)::

    FaultPlan(at={0: Fault("overloaded"), 2: [Fault("rate_limit", retry_after=2), Fault("drop")]})
    FaultPlan(rates={"overloaded": 0.1, "rate_limit": 0.05}, seed=7)

A list at one index is used up in order, one fault per attempt, so a client's retries meet each
fault in turn and then get the exchange. A faulted request does not consume the exchange (the
retry gets it), except ``slow``, which serves it late.

Kinds: ``rate_limit`` (429 ``rate_limit_error`` + ``retry-after``), ``api_error`` (500),
``overloaded`` (529 ``overloaded_error``), ``request_too_large`` (413), ``drop`` (connection closed
after ``after_events`` SSE events, or before the body), ``slow`` (``SimResponse.delay``), ``stall``
(stream stops after ``after_events`` events, waits ``stall_seconds`` on the clock, then drops),
``stream_error`` (mid-stream ``error`` event after ``after_events`` events; a non-stream request
gets 529).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .clock import Clock
from .errors import api_error
from .http import SimResponse, SSEEvent
from .sse import error_event

FaultKind = Literal["rate_limit", "api_error", "overloaded", "request_too_large", "drop", "slow",
                    "stall", "stream_error"]
FAULT_KINDS: tuple[FaultKind, ...] = ("rate_limit", "api_error", "overloaded", "request_too_large",
                                      "drop", "slow", "stall", "stream_error")

_ERRORS: Mapping[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error",
                   "This request would exceed the rate limit for your organization (simulated "
                   "fault). For details, refer to: https://docs.claude.com/en/api/rate-limits."),
    "api_error": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "request_too_large": (413, "request_too_large",
                          "Request exceeds the maximum allowed number of bytes."),
}


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    #: ``retry-after`` seconds (always sent on 429, default 1; on others only when set).
    retry_after: float | None = None
    #: Seconds before the response starts (``slow``).
    delay: float = 2.0
    #: SSE events sent before a drop, stall or error event.
    after_events: int = 3
    stall_seconds: float = 30.0
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {', '.join(FAULT_KINDS)}")

    @property
    def consumes_exchange(self) -> bool:
        return self.kind == "slow"


class FaultPlan:
    """Which requests get which fault; see the module docstring."""

    def __init__(self, at: Mapping[int, Fault | Sequence[Fault]] | None = None, *,
                 rates: Mapping[FaultKind, float] | None = None, seed: int = 0) -> None:
        self._queues: dict[int, list[Fault]] = {}
        for idx, f in (at or {}).items():
            self._queues[int(idx)] = [f] if isinstance(f, Fault) else list(f)
        self.rates: dict[FaultKind, float] = dict(rates or {})
        for k, p in self.rates.items():
            Fault(k)  # validates the kind
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"fault rate for {k!r} must be within [0, 1], got {p}")
        self._rng = random.Random(seed)

    def pick(self, exchange_index: int) -> Fault | None:
        """The fault for the next attempt at ``exchange_index`` (used up), or None."""
        q = self._queues.get(exchange_index)
        if q:
            return q.pop(0)
        for kind in sorted(self.rates):
            if self._rng.random() < self.rates[kind]:
                return Fault(kind)
        return None


def _retry_headers(fault: Fault) -> dict[str, str]:
    ra = fault.retry_after
    if fault.kind == "rate_limit" and ra is None:
        ra = 1
    if ra is None:
        return {}
    return {"retry-after": str(int(ra)) if float(ra).is_integer() else str(ra)}


def error_response(fault: Fault, request_id: str) -> SimResponse:
    kind = "overloaded" if fault.kind == "stream_error" else fault.kind
    status, etype, msg = _ERRORS[kind]
    return api_error(status, etype, fault.message or msg, request_id=request_id,
                     headers=_retry_headers(fault))


def apply_fault(fault: Fault, request_id: str, serve: Callable[[], SimResponse],
                clock: Clock) -> SimResponse:
    """The response a faulted request gets; ``serve`` renders the exchange (no state change)."""
    if fault.kind in _ERRORS:
        return error_response(fault, request_id)
    if fault.kind == "slow":
        resp = serve()
        resp.delay = fault.delay
        return resp
    resp = serve()
    if fault.kind == "drop":
        resp.drop_after = fault.after_events if resp.is_stream else 0
        return resp
    if not resp.is_stream:
        if fault.kind == "stream_error":
            return error_response(fault, request_id)
        # A stalled plain response: nothing for stall_seconds, then the connection drops.
        resp.delay = fault.stall_seconds
        resp.drop_after = 0
        return resp
    events = list(resp.events or [])
    n = min(fault.after_events, len(events))
    if fault.kind == "stream_error":
        err = error_event("overloaded_error", fault.message or "Overloaded")
        resp.events = [*events[:n], err]
        return resp
    resp.events = _stalled(events[:n], fault.stall_seconds, clock)
    resp.drop_after = n
    return resp


def _stalled(events: list[SSEEvent], seconds: float, clock: Clock) -> Iterator[SSEEvent]:
    yield from events
    clock.sleep(seconds)
