"""The self-hosted environment work API (PROTOCOL.md §7, ``resources/beta/environments/work.py``).

Lifecycle of a work item: ``queued`` → (poll hands it out) → ``ack`` → ``starting`` → first
heartbeat → ``active`` → ``stop`` → ``stopped``. A session that ends asks its item to stop
(``stopping``); heartbeats then answer ``lease_extended: false``. A lease that is not renewed within
its TTL expires and the item goes back to the queue; the old holder's next heartbeat no longer
matches ``expected_last_heartbeat`` and gets 412 ``heartbeat_precondition_failed``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from simulator.clock import isoformat_z

from .state import WorkItem
from .store import Store

NO_HEARTBEAT = "NO_HEARTBEAT"
DEFAULT_RECLAIM_MS = 5000


def expire_leases(store: Store) -> list[WorkItem]:
    """Send items whose lease ran out back to the queue (call with the lock held)."""
    now = store.now()
    expired = []
    for item in store.work.values():
        if item.state in ("starting", "active") and item.lease_expires_at is not None \
                and now > item.lease_expires_at:
            requeue(store, item)
            item.leases_expired += 1
            expired.append(item)
    return expired


def requeue(store: Store, item: WorkItem) -> None:
    item.state = "queued"
    item.delivered_at = item.delivered_to = None
    item.acknowledged_at = item.started_at = None
    item.last_heartbeat = None
    item.lease_expires_at = None
    item.leases_lost += 1
    store.changed()


def take_lease(store: Store, item: WorkItem) -> None:
    """Another holder heartbeats the item and keeps its lease from now on: this holder's
    ``expected_last_heartbeat`` goes stale and the item is not re-queued."""
    item.lease_expires_at = None
    later = store.now() + timedelta(microseconds=1)
    if item.last_heartbeat is not None and isoformat_z(later) <= item.last_heartbeat:
        later = later + timedelta(seconds=1)
    item.last_heartbeat = isoformat_z(later)
    item.leases_lost += 1
    store.changed()


def claim(store: Store, environment_id: str, worker_id: str | None,
          reclaim_older_than_ms: int) -> WorkItem | None:
    """The oldest claimable item: queued and never handed out, or handed out but not acked in time."""
    now = store.now()
    if worker_id:
        store.pollers[worker_id] = now
    expire_leases(store)
    for item in sorted(store.work.values(), key=lambda w: w.created_at):
        if item.environment_id != environment_id or item.state != "queued":
            continue
        if item.delivered_at is not None and \
                now - item.delivered_at < timedelta(milliseconds=reclaim_older_than_ms):
            continue
        item.delivered_at, item.delivered_to = now, worker_id
        store.changed()
        return item
    return None


def ack(item: WorkItem, store: Store) -> str | None:
    """queued → starting; returns why it cannot be acked, or None."""
    if item.state != "queued" or item.delivered_at is None:
        return f"work item {item.id} is {item.state}{'' if item.delivered_at else ' and was not polled'}; only a polled, queued item can be acknowledged"
    now = store.now()
    item.state = "starting"
    item.acknowledged_at = now
    item.lease_expires_at = now + timedelta(seconds=item.ttl_seconds)
    store.changed()
    return None


def heartbeat(item: WorkItem, store: Store, expected: str | None,
              desired_ttl: int | None) -> tuple[int, dict[str, Any]]:
    """Renew the lease. Returns (status, body): 200 ``work_heartbeat`` or 412 with the lease state."""
    expire_leases(store)
    if item.state in ("stopping", "stopped"):
        # The precondition is not checked once the item is stopping or stopped.
        return 200, {"type": "work_heartbeat", "last_heartbeat": item.last_heartbeat or "",
                     "lease_extended": False, "state": item.state,
                     "ttl_seconds": item.ttl_seconds}
    stored = item.last_heartbeat if item.last_heartbeat is not None else NO_HEARTBEAT
    if item.state == "queued" or expected != stored:
        return 412, item.lease_state()
    now = store.now()
    if desired_ttl is not None and desired_ttl > 0:
        item.ttl_seconds = desired_ttl
    value = isoformat_z(now)
    if item.last_heartbeat is not None and value <= item.last_heartbeat:
        value = isoformat_z(now + timedelta(microseconds=1))
        while value <= item.last_heartbeat:
            now = now + timedelta(microseconds=1)
            value = isoformat_z(now)
    item.last_heartbeat = value
    item.latest_heartbeat_at = now
    item.lease_expires_at = store.now() + timedelta(seconds=item.ttl_seconds)
    if item.state == "starting":
        item.state = "active"
        item.started_at = now
    store.changed()
    return 200, {"type": "work_heartbeat", "last_heartbeat": value, "lease_extended": True,
                 "state": item.state, "ttl_seconds": item.ttl_seconds}


def stop(item: WorkItem, store: Store, force: bool) -> str | None:
    """→ stopped; returns why not (already stopped: a 409 the SDK ignores), or None."""
    if item.state == "stopped":
        return f"work item {item.id} is already stopped"
    now = store.now()
    item.stop_requested_at = item.stop_requested_at or now
    item.state = "stopped"
    item.stopped_at = now
    item.lease_expires_at = None
    store.changed()
    return None


def stats(store: Store, environment_id: str) -> dict[str, Any]:
    items = [w for w in store.work.values() if w.environment_id == environment_id]
    queued = [w for w in items if w.state == "queued"]
    pending = [w for w in items if w.state in ("starting", "active", "stopping")]
    stream = queued + pending
    oldest = min((w.created_at for w in stream), default=None)
    recent = store.now() - timedelta(seconds=60)
    return {"type": "work_queue_stats", "depth": len(queued), "pending": len(pending),
            "oldest_queued_at": isoformat_z(oldest) if oldest else None,
            "workers_polling": sum(1 for t in store.pollers.values() if t >= recent)}
