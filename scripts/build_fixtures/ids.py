"""Deterministic ids and timestamps for the generated corpus.

Every id is derived from the cassette id, a prefix and a counter, so regenerating the corpus is
byte-for-byte stable and adding a cassette never changes the ids of another one.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"  # base58, as the API's ids

#: Shapes seen in recorded traffic: ``msg_01`` + 22, ``srvtoolu_01`` + 22, ``req_011C`` + 20 ...
#: Newer messages have ``msg_011C`` + 20 (154 of 462 live messages, e.g. real_traffic
#: vercel__096, pydai__252).
_SHAPES: dict[str, tuple[str, int]] = {
    "msg": ("msg_01", 22),
    "msg_011C": ("msg_011C", 20),
    "toolu": ("toolu_01", 22),
    "srvtoolu": ("srvtoolu_01", 22),
    "req": ("req_011C", 20),
    "container": ("container_011C", 20),
    "file": ("file_011C", 20),
    "sevt": ("sevt_01", 22),
    "sesn": ("sesn_01", 22),
}

#: The simulated time at which every cassette starts, unless it says otherwise.
CLOCK_START = datetime(2026, 8, 20, 10, 0, 0, tzinfo=UTC)


def rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t: datetime, key: str) -> str:
    """``t`` with microseconds, as the API writes ``container.expires_at`` (every live one:
    ``2025-12-20T05:33:35.789626Z``, real_traffic vercel__065); the microseconds are derived from
    ``key`` (deterministic)."""
    micro = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % 1_000_000
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{micro:06d}Z"


class Ids:
    """A seeded counter per cassette: ``Ids("code_execution/x/y").make("msg")``."""

    def __init__(self, key: str) -> None:
        self._key = key
        self._n = 0

    def make(self, kind: str) -> str:
        prefix, length = _SHAPES[kind]
        self._n += 1
        digest = hashlib.sha256(f"{self._key}\0{kind}\0{self._n}".encode()).digest()
        num = int.from_bytes(digest, "big")
        chars = []
        for _ in range(length):
            num, r = divmod(num, len(_ALPHABET))
            chars.append(_ALPHABET[r])
        return prefix + "".join(chars)


class Clock:
    """Simulated time: starts at :data:`CLOCK_START`, moves forward only when told."""

    def __init__(self, start: datetime = CLOCK_START) -> None:
        self.start = start
        self.now = start

    def advance(self, **delta: float) -> datetime:
        self.now = self.now + timedelta(**delta)
        return self.now

    def later(self, **delta: float) -> str:
        return rfc3339(self.now + timedelta(**delta))
