"""The live SSE stream of a session's events (``GET /v1/sessions/{id}/events/stream``).

It delivers the events appended after the client attached (history comes from the events list,
which is why the SDK's runner attaches first and then lists), as ``event: <type>`` frames. It blocks
between events, so a transport must iterate it off the event loop (a thread, as Starlette and
:class:`.transport.ThreadedAsyncTransport` do). It ends after ``session.status_terminated`` or
``session.deleted``, or when :meth:`close` is called.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from simulator.http import SSEEvent

from .store import Store

#: How often a blocked reader wakes to notice :meth:`LiveEvents.close` (seconds).
WAKE_INTERVAL = 0.05
#: A ``ping`` after this many seconds without events. Clients skip pings; the point is that the
#: reading thread returns regularly, so a server notices a client that went away.
PING_INTERVAL = 1.0
ENDING = ("session.status_terminated", "session.deleted")


class LiveEvents:
    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.closed = False
        with store.lock:
            store.streams.append(self)
            session = store.sessions[session_id]
            self._cursor = len(session.events)
            self._events = session.events

    def close(self) -> None:
        self.closed = True

    def __iter__(self) -> Iterator[SSEEvent]:
        last = time.monotonic()
        while not self.closed:
            with self.store.cond:
                if self._cursor >= len(self._events):
                    self.store.cond.wait(WAKE_INTERVAL)
                batch = self._events[self._cursor:]
                self._cursor += len(batch)
            for ev in batch:
                last = time.monotonic()
                yield SSEEvent(ev["type"], ev)
                if ev["type"] in ENDING:
                    return
            if not batch and time.monotonic() - last > PING_INTERVAL:
                last = time.monotonic()
                yield SSEEvent("ping", {"type": "ping"})
