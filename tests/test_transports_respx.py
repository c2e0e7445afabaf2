"""The respx router: httpx and httpx2 clients (sync and async) reach the handler in-process."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
import respx
from _simkit import record_sleeps

from simulator import wire as _common
from simulator.http import SimRequest, SimResponse, SSEEvent
from simulator.routes import Routes
from simulator.server import start_server
from simulator.transports import Httpcore2Mocker, add_routes, intercept
from simulator.transports.mock import PLACEHOLDER_API_KEY, mock

API = "https://api.anthropic.com"


def echo(request: SimRequest) -> SimResponse:
    if request.path == "/stream":
        events = [SSEEvent("ping", {"type": "ping"})] * 4
        return SimResponse(200, events=events, drop_after=int(request.query.get("drop", "9")))
    if request.path == "/slow":
        return SimResponse(200, body={}, delay=100.0)
    return SimResponse(200, body={"via": "simulator", "path": request.path, "query": request.query,
                                  "body": request.body.decode()})


@pytest.fixture
def real_server() -> Iterator[str]:
    url, stop = start_server(lambda r: SimResponse(200, body={"via": "real server"}))
    yield url
    stop()


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_both_libraries_are_intercepted(lib: Any) -> None:
    with intercept(echo) as routers:
        r = lib.post(f"{API}/v1/messages?beta=true", content=b"hi")
        assert sum(len(router.calls) for router in routers) == 1
    assert r.json() == {"via": "simulator", "path": "/v1/messages", "query": {"beta": "true"},
                        "body": "hi"}


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_async_clients_are_intercepted(lib: Any) -> None:
    async def go() -> Any:
        async with lib.AsyncClient(base_url=API) as c:
            return (await c.get("/v1/models")).json()

    with intercept(echo):
        assert asyncio.run(go())["path"] == "/v1/models"


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_other_hosts_pass_through(lib: Any, real_server: str) -> None:
    with intercept(echo):
        assert lib.get(f"{API}/x").json()["via"] == "simulator"
        assert lib.get(f"{real_server}/x").json() == {"via": "real server"}


def test_patching_ends_with_the_context(real_server: str) -> None:
    with intercept(echo, base_url=real_server):
        assert httpx2.get(f"{real_server}/x").json()["via"] == "simulator"
    assert httpx2.get(f"{real_server}/x").json() == {"via": "real server"}
    assert not Httpcore2Mocker._patches


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_streams_drop_with_the_library_own_error(lib: Any) -> None:
    lines: list[str] = []
    with intercept(echo), pytest.raises(lib.RemoteProtocolError):
        with lib.stream("GET", f"{API}/stream?drop=2") as r:
            lines.extend(r.iter_lines())
    assert sum(line.startswith("event:") for line in lines) == 2


def test_httpx2_async_stream_drop() -> None:
    async def go() -> int:
        events = 0
        async with httpx2.AsyncClient() as c:
            with pytest.raises(httpx2.RemoteProtocolError):
                async with c.stream("GET", f"{API}/stream?drop=1") as r:
                    async for line in r.aiter_lines():
                        events += line.startswith("event:")
        return events

    with intercept(echo):
        assert asyncio.run(go()) == 1


def test_stall_becomes_the_library_read_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    record_sleeps(monkeypatch, _common.time)
    with intercept(echo), pytest.raises(httpx2.ReadTimeout):
        httpx2.get(f"{API}/slow", timeout=2)


def test_add_routes_on_a_users_own_router() -> None:
    with respx.mock(using="httpx", assert_all_called=False) as router:
        add_routes(router, echo)
        assert httpx.get(f"{API}/v1/x").json()["path"] == "/v1/x"


def test_mock_sets_a_placeholder_key_only_when_none_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with mock(Routes(echo)) as api:
        assert os.environ["ANTHROPIC_API_KEY"] == PLACEHOLDER_API_KEY
        assert api.base_url == API
    assert "ANTHROPIC_API_KEY" not in os.environ
    monkeypatch.setenv("ANTHROPIC_API_KEY", "users-own")
    with mock(Routes(echo)):
        assert os.environ["ANTHROPIC_API_KEY"] == "users-own"


def test_mock_follows_anthropic_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example/anthropic/")
    with mock(Routes(echo)) as api:
        r = httpx2.post("https://gateway.example/anthropic/v1/messages", content=b"{}")
        assert api.base_url == "https://gateway.example/anthropic" and len(api.calls) == 1
    assert r.json()["via"] == "simulator" and r.json()["path"] == "/v1/messages"
