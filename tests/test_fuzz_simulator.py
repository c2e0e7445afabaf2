"""Issue 9: the simulator under malformed and hostile requests (bounded; ``nox -s fuzz`` runs long).

Every request gets a 4xx with the API's error shape (or a 200 when valid): no 5xx, no exception,
a ``request-id`` on every response, and memory stays bounded (the engine's log is capped).
"""

from __future__ import annotations

import gc
import inspect
import os
import tracemalloc
from typing import Any

import pytest
from _simkit import API_HEADERS
from fuzzkit.requests import check_response, requests
from hypothesis import HealthCheck, given, settings

from simulator import routes
from simulator.cassette import iter_corpus
from simulator.engine import Simulator
from simulator.http import SimRequest

SCALE = int(os.environ.get("TOOLUSE_FUZZ_SCALE", "1"))
_APPS: dict[int | None, routes.Routes] = {}


def app(log_limit: int | None = None) -> routes.Routes:
    if log_limit not in _APPS:
        corpus = [c for c in iter_corpus() if c.family in ("bash", "ptc", "code_execution")]
        opts: dict[str, Any] = {} if log_limit is None else {"log_limit": log_limit}
        _APPS[log_limit] = routes.build(corpus, **opts)
    return _APPS[log_limit]


@settings(max_examples=300 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(requests)
def test_every_hostile_request_gets_an_api_shaped_4xx(req: SimRequest) -> None:
    check_response(req, app()(req))


@pytest.mark.parametrize("path", ["/v1/files", "/v1/models", "/v1/models/claude-opus-5-5",
                                  "/v1/nowhere", "/v1/messages"])
def test_every_route_answers_with_a_request_id(path: str) -> None:
    resp = app()(SimRequest("GET", path, {"anthropic-version": "2023-06-01"}))
    check_response(SimRequest("GET", path), resp)
    assert resp.headers["request-id"].startswith("req_")
    ids = {app()(SimRequest("GET", path)).headers["request-id"] for _ in range(3)}
    assert len(ids) == 3, "request ids must be fresh per response"


@pytest.mark.parametrize("depth", [200, 5_000, 100_000])
def test_deep_nesting_is_a_400_naming_the_problem(depth: int) -> None:
    body = b'{"model":"claude-opus-5-5","max_tokens":1,"messages":' + b"[" * depth + b"]" * depth + b"}"
    req = SimRequest("POST", "/v1/messages", {"content-type": "application/json", **API_HEADERS},
                     body=body)
    resp = app()(req)
    check_response(req, resp)
    assert resp.status == 400
    assert resp.body["error"]["type"] == "invalid_request_error"
    assert "nest" in resp.body["error"]["message"].lower()


needs_log_limit = pytest.mark.skipif("log_limit" not in inspect.signature(Simulator).parameters,
                                     reason="the engine has no log_limit yet")


@needs_log_limit
def test_memory_stays_bounded_under_repeated_bad_requests() -> None:
    call = app(log_limit=300)
    bad = [SimRequest("POST", "/v1/messages", {"content-type": "application/json", **API_HEADERS},
                      body=b'{"model":"claude-opus-5-5","max_tokens":1,"messages":[{"role":"user",'
                           b'"content":[{"type":"tool_result","tool_use_id":"toolu_x%d"}]}]}' % i)
           for i in range(200)]
    for _ in range(2):  # warm up, past the log's limit
        for r in bad:
            call(r)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(5 * SCALE):
        for r in bad:
            check_response(r, call(r))
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    # 1,000 requests: a per-request leak of even 1 KiB would show as 1 MB.
    assert grown < 500_000, f"memory grew by {grown} bytes over {1000 * SCALE} rejected requests"
    sim = call.messages
    assert isinstance(sim, Simulator) and len(sim.log) <= 300
