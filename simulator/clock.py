"""Injectable time for the simulator: container expiry, idle checkpoints, stalls.

``Clock`` is a protocol with ``now()`` (an aware UTC datetime) and ``sleep(seconds)``.
:class:`SystemClock` reads the wall clock; :class:`FakeClock` moves only when told to, so tests
can age a container by thirty days without waiting::

    clock = FakeClock()
    sim = Simulator(cassette, clock=clock)
    clock.advance(days=31)
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The wall clock (UTC)."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """A clock that only moves when advanced (``sleep`` advances it instead of waiting)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 20, 12, 0, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            self._now = self._now.replace(tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0.0, *, minutes: float = 0.0, hours: float = 0.0,
                days: float = 0.0) -> datetime:
        self._now += timedelta(seconds=seconds, minutes=minutes, hours=hours, days=days)
        return self._now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)


def isoformat_z(dt: datetime) -> str:
    """RFC 3339 with a ``Z`` suffix, as the API writes ``expires_at``."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace(".000000Z", "Z")


def parse_rfc3339(ts: Any) -> datetime | None:
    """An aware datetime from an RFC 3339 string (``Z`` or an offset; naive means UTC), or None
    for anything else (cassette ``clock_start``/``at`` fields are optional)."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)
