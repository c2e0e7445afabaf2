"""The self-hosted environment work API endpoints (PROTOCOL.md §7)."""

from __future__ import annotations

import time

from simulator.errors import api_error
from simulator.http import SimRequest, SimResponse

from . import work as W
from .base import Base, _Refusal
from .rules import (
    ACK_STATE,
    BLOCK_MS,
)


class WorkEndpoints(Base):
    # -- work -------------------------------------------------------------------------------------

    def _work_poll(self, request: SimRequest, env: str) -> SimResponse:
        q = request.query
        block_ms: int | None = None
        if q.get("block_ms") not in (None, ""):
            try:
                block_ms = int(q["block_ms"])
            except ValueError:
                block_ms = -1
            if not 1 <= block_ms <= 999:
                raise self._refuse(BLOCK_MS, f"block_ms must be between 1 and 999, got "
                                   f"{q['block_ms']!r}; omit it for a non-blocking poll", request)
        reclaim = int(q.get("reclaim_older_than_ms") or W.DEFAULT_RECLAIM_MS)
        worker_id = request.headers.get("anthropic-worker-id")
        with self.store.cond:
            e = self._env(env)
            self._auth_work(request, e)
            item = W.claim(self.store, e.id, worker_id, reclaim)
            if item is None and block_ms and self.long_poll:
                deadline = time.monotonic() + block_ms / 1000
                while item is None and (left := deadline - time.monotonic()) > 0:
                    self.store.cond.wait(left)
                    item = W.claim(self.store, e.id, worker_id, reclaim)
            if item is None:
                resp = self._ok(b"null")
                if block_ms and not self.long_poll:
                    resp.delay = block_ms / 1000
                return resp
            return self._ok(item.to_json())

    def _work_stats(self, request: SimRequest, env: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            return self._ok(W.stats(self.store, e.id))

    def _work_list(self, request: SimRequest, env: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            W.expire_leases(self.store)
            items = [w.to_json() for w in self.store.work.values() if w.environment_id == e.id]
            return self._ok({"data": items, "next_page": None})

    def _work_get(self, request: SimRequest, env: str, work: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            W.expire_leases(self.store)
            return self._ok(self._work_of(e, work).to_json())

    def _work_update(self, request: SimRequest, env: str, work: str) -> SimResponse:
        body = self._json(request)
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            for k, v in (body.get("metadata") or {}).items():
                if v is None:
                    item.metadata.pop(str(k), None)
                else:
                    item.metadata[str(k)] = str(v)
            self.store.changed()
            return self._ok(item.to_json())

    def _work_ack(self, request: SimRequest, env: str, work: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            why = W.ack(item, self.store)
            if why:
                raise self._refuse(ACK_STATE, why, request)
            return self._ok(item.to_json())

    def _work_heartbeat(self, request: SimRequest, env: str, work: str) -> SimResponse:
        q = request.query
        try:
            ttl = int(q["desired_ttl_seconds"]) if q.get("desired_ttl_seconds") else None
        except ValueError:
            raise _Refusal(api_error(400, None, "desired_ttl_seconds must be an integer")) from None
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            status, body = W.heartbeat(item, self.store, q.get("expected_last_heartbeat"), ttl)
            if status == 412:
                resp = api_error(412, "precondition_failed_error",
                                 "expected_last_heartbeat does not match the stored heartbeat; "
                                 "another worker may hold the lease")
                resp.body["error"]["details"] = {"error_code": "heartbeat_precondition_failed",
                                                 "current_state": body}
                return resp
            return self._ok(body)

    def _work_stop(self, request: SimRequest, env: str, work: str) -> SimResponse:
        body = self._json(request)
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            why = W.stop(item, self.store, bool(body.get("force")))
            if why:
                return api_error(409, "conflict_error", why)
            return self._ok(item.to_json())


