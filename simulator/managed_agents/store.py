"""Shared state of one Managed Agents simulation, its lock, and its request log.

Requests can arrive from several threads at once (a worker's poll, heartbeat, event stream and
result posts overlap), so every read and write goes through :attr:`Store.cond`. Waiting readers
(the SSE event stream) sleep on that condition and wake when anything changes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from simulator.clock import Clock, SystemClock

from .state import Agent, Environment, Ids, Session, WorkItem


@dataclass
class Violation:
    """A request that broke a documented rule: the rule id, the message, the request."""

    rule: str
    message: str
    request: dict[str, Any]
    status: int = 400

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "status": self.status,
                "request": self.request}


@dataclass
class RequestRecord:
    """One request the simulation answered (what the worker checks read)."""

    at: datetime
    method: str
    path: str
    #: A parameter sent more than once has all its values (SimRequest.query_record).
    query: dict[str, str | list[str]]
    body: Any
    status: int
    response: Any
    #: ``Anthropic-Worker-ID`` header, if sent.
    worker_id: str | None = None
    #: The bearer token or ``x-api-key`` the request carried (kept in memory only).
    credential: str | None = field(default=None, repr=False)
    seq: int = 0


class Store:
    def __init__(self, clock: Clock | None = None, *, log_limit: int | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        #: Keep only the newest ``log_limit`` requests and violations (a long-running
        #: ``tooluse serve``); ``seq`` keeps counting, so comparisons by ``seq`` still hold.
        self.log_limit = log_limit
        self.next_seq = 0
        self.ids = Ids()
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.environments: dict[str, Environment] = {}
        self.agents: dict[str, Agent] = {}
        self.sessions: dict[str, Session] = {}
        self.work: dict[str, WorkItem] = {}
        self.log: list[RequestRecord] = []
        self.violations: list[Violation] = []
        #: Worker ids seen polling, with the time of their last poll.
        self.pollers: dict[str, datetime] = {}
        #: Live event streams handed out (closed together by :meth:`close_streams`).
        self.streams: list[Any] = []
        #: Bumped on every change; waiters compare it to see whether anything happened.
        self.version = 0

    def now(self) -> datetime:
        return self.clock.now()

    def changed(self) -> None:
        """Record a change and wake every waiter (call with the lock held)."""
        self.version += 1
        self.cond.notify_all()

    def close_streams(self) -> None:
        """End every live event stream (servers shutting down, harnesses tearing down)."""
        with self.cond:
            for stream in self.streams:
                stream.close()
            self.streams.clear()
            self.cond.notify_all()

    def work_for_session(self, session_id: str) -> list[WorkItem]:
        return [w for w in self.work.values() if w.session_id == session_id]


def trim(items: list[Any], limit: int | None) -> None:
    """Drop the oldest entries past ``limit`` (no-op without a limit)."""
    if limit is not None and len(items) > limit:
        del items[:len(items) - limit]
