"""The Managed Agents simulator's state: environments, agents, sessions with their event logs, and
self-hosted work items. Plain data plus JSON rendering in the shapes of the ``anthropic`` SDK's
types (``BetaEnvironment``, ``BetaManagedAgentsAgent``, ``BetaManagedAgentsSession``,
``BetaSelfHostedWork``); the behaviour lives in :mod:`.sessions` and :mod:`.work`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from simulator.clock import isoformat_z

from .scenario import Scenario

WorkState = Literal["queued", "starting", "active", "stopping", "stopped"]
SessionStatus = Literal["rescheduling", "running", "idle", "terminated"]


def ts(dt: datetime | None) -> str | None:
    return None if dt is None else isoformat_z(dt)


class Ids:
    """Deterministic ids with the API's prefixes (``sesn_``, ``sevt_``, ``work_``, ...)."""

    def __init__(self) -> None:
        self._n = itertools.count(1)

    def new(self, prefix: str) -> str:
        return f"{prefix}_{next(self._n):024x}"


@dataclass
class Environment:
    id: str
    name: str
    key: str
    created_at: datetime
    config: dict[str, Any] = field(default_factory=lambda: {"type": "self_hosted"})
    metadata: dict[str, str] = field(default_factory=dict)
    #: Lease TTL this environment grants on a heartbeat (seconds).
    lease_ttl_seconds: int = 90

    def to_json(self) -> dict[str, Any]:
        return {"type": "environment", "id": self.id, "name": self.name, "config": self.config,
                "created_at": ts(self.created_at), "updated_at": ts(self.created_at),
                "archived_at": None, "description": None, "metadata": self.metadata}


@dataclass
class Agent:
    id: str
    name: str
    model: str
    tools: list[dict[str, Any]]
    created_at: datetime
    system: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    version: int = 1

    def snapshot(self) -> dict[str, Any]:
        """The agent as a session shows it (``BetaManagedAgentsSessionAgent``)."""
        return {"type": "agent", "id": self.id, "name": self.name, "version": self.version,
                "description": None, "system": self.system,
                "model": {"id": self.model}, "tools": self.tools, "skills": [],
                "mcp_servers": [], "execution_identity": {"type": "service_account"},
                "multiagent": None}

    def to_json(self) -> dict[str, Any]:
        d = self.snapshot()
        d.update({"created_at": ts(self.created_at), "updated_at": ts(self.created_at),
                  "archived_at": None, "metadata": self.metadata})
        return d


@dataclass
class Session:
    id: str
    agent: Agent
    environment_id: str
    scenario: Scenario
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, str] = field(default_factory=dict)
    title: str | None = None
    status: SessionStatus = "idle"
    archived_at: datetime | None = None
    #: The persisted event log, in order.
    events: list[dict[str, Any]] = field(default_factory=list)
    #: ``agent.custom_tool_use`` / ``agent.tool_use`` event ids still waiting for a result.
    pending: list[str] = field(default_factory=list)
    #: tool-use event id -> the result events (``user.custom_tool_result``/``user.tool_result``).
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Index of the next scenario turn to run.
    turn: int = 0
    #: True once the scenario's last turn ended (``end_turn``).
    finished: bool = False
    #: A result resolved a pending tool use since the last idle (settled after each request).
    resolved: bool = False

    def event(self, event_id: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e["id"] == event_id), None)

    @property
    def stop_reason(self) -> dict[str, Any] | None:
        """The ``stop_reason`` of the latest ``session.status_idle``, if the session is idle."""
        for e in reversed(self.events):
            if e["type"] == "session.status_idle":
                return dict(e["stop_reason"])
            if e["type"] in ("session.status_running", "session.status_terminated"):
                return None
        return None

    def to_json(self) -> dict[str, Any]:
        return {"type": "session", "id": self.id, "agent": self.agent.snapshot(),
                "environment_id": self.environment_id, "status": self.status,
                "created_at": ts(self.created_at), "updated_at": ts(self.updated_at),
                "archived_at": ts(self.archived_at), "metadata": self.metadata,
                "title": self.title, "resources": [], "outcome_evaluations": [],
                "stats": {"active_seconds": 0.0, "duration_seconds": 0.0},
                "usage": {"input_tokens": 0, "output_tokens": 0}, "vault_ids": [],
                "budget": None, "deployment_id": None}


@dataclass
class WorkItem:
    id: str
    environment_id: str
    session_id: str
    created_at: datetime
    state: WorkState = "queued"
    metadata: dict[str, str] = field(default_factory=dict)
    #: When a poll last handed the item out (un-acked items are reclaimed after a while).
    delivered_at: datetime | None = None
    delivered_to: str | None = None
    acknowledged_at: datetime | None = None
    started_at: datetime | None = None
    latest_heartbeat_at: datetime | None = None
    #: The ``last_heartbeat`` value a heartbeat must echo (None before the first beat).
    last_heartbeat: str | None = None
    lease_expires_at: datetime | None = None
    ttl_seconds: int = 90
    stop_requested_at: datetime | None = None
    stopped_at: datetime | None = None
    #: How many times the lease expired or was taken away, and the item went back to the queue.
    leases_lost: int = 0
    #: How many of those were the lease running out (no heartbeat within the TTL), not taken.
    leases_expired: int = 0

    def to_json(self, *, secret: str | None = None) -> dict[str, Any]:
        return {"type": "work", "id": self.id, "environment_id": self.environment_id,
                "state": self.state, "data": {"type": "session", "id": self.session_id},
                "metadata": self.metadata, "secret": secret, "created_at": ts(self.created_at),
                "acknowledged_at": ts(self.acknowledged_at), "started_at": ts(self.started_at),
                "latest_heartbeat_at": ts(self.latest_heartbeat_at),
                "stop_requested_at": ts(self.stop_requested_at), "stopped_at": ts(self.stopped_at)}

    def lease_state(self) -> dict[str, Any]:
        """``BetaWorkLeaseState``: the server's view of the lease, as a 412 reports it."""
        return {"last_heartbeat": self.last_heartbeat, "lease_extended": False,
                "state": self.state, "ttl_seconds": self.ttl_seconds}
