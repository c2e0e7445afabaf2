"""The httpx2 and httpx transports: request conversion, lazy SSE, delay, drops, read timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from _simkit import record_sleeps

from simulator import wire as _common
from simulator.http import SimRequest, SimResponse, SSEEvent
from simulator.transports import httpx2_transport as tx2
from simulator.transports import httpx_transport as tx1

LIBS = [pytest.param((httpx2, tx2), id="httpx2"), pytest.param((httpx, tx1), id="httpx")]


class Recorder:
    """A handler that keeps each request and answers with a fixed response."""

    def __init__(self, response: SimResponse) -> None:
        self.response = response
        self.requests: list[SimRequest] = []

    def __call__(self, request: SimRequest) -> SimResponse:
        self.requests.append(request)
        return self.response


def _events(n: int, produced: list[int]) -> Iterator[SSEEvent]:
    for i in range(n):
        produced.append(i)
        yield SSEEvent("ping", {"type": "ping", "i": i})


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept = record_sleeps(monkeypatch, _common.time)

    async def fake(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(_common.anyio, "sleep", fake)
    return slept


@pytest.mark.parametrize("lib", LIBS)
def test_request_reaches_handler_as_sim_request(lib: Any) -> None:
    mod, tx = lib
    h = Recorder(SimResponse(201, headers={"Request-Id": "req_1"}, body={"ok": True}))
    with mod.Client(transport=tx.SimulatorTransport(h), base_url="https://api.anthropic.com") as c:
        r = c.post("/v1/messages?beta=true&x=1", content=b'{"a":1}', headers={"X-Api-Key": "k"})
    assert (r.status_code, r.json(), r.headers["request-id"]) == (201, {"ok": True}, "req_1")
    assert r.headers["content-type"] == "application/json"
    (req,) = h.requests
    assert (req.method, req.path, req.query) == ("POST", "/v1/messages", {"beta": "true", "x": "1"})
    assert req.headers["x-api-key"] == "k" and req.json() == {"a": 1}


@pytest.mark.parametrize("lib", LIBS)
def test_bytes_body_keeps_its_content_type(lib: Any) -> None:
    mod, tx = lib
    h = Recorder(SimResponse(200, headers={"content-type": "image/png"}, body=b"\x89PNG"))
    with mod.Client(transport=tx.SimulatorTransport(h)) as c:
        r = c.get("https://x/v1/files/f/content")
    assert r.content == b"\x89PNG" and r.headers["content-type"] == "image/png"


@pytest.mark.parametrize("lib", LIBS)
def test_sse_is_streamed_lazily(lib: Any) -> None:
    mod, tx = lib
    produced: list[int] = []
    h = Recorder(SimResponse(200, events=_events(5, produced)))
    with mod.Client(transport=tx.SimulatorTransport(h)) as c, c.stream("POST", "https://x/v1/messages") as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        assert produced == []  # nothing produced before the client reads
        chunks = r.iter_bytes()
        first = next(chunks)
        assert b'"i":0' in first and produced == [0]
        rest = b"".join(chunks)
    assert produced == [0, 1, 2, 3, 4] and rest.count(b"event: ping") == 4


@pytest.mark.parametrize("lib", LIBS)
def test_drop_after_raises_remote_protocol_error(lib: Any) -> None:
    mod, tx = lib
    produced: list[int] = []
    h = Recorder(SimResponse(200, events=_events(5, produced), drop_after=2))
    seen = []
    with mod.Client(transport=tx.SimulatorTransport(h)) as c, pytest.raises(mod.RemoteProtocolError):
        with c.stream("POST", "https://x/v1/messages") as r:
            for line in r.iter_lines():
                seen.append(line)
    assert sum(line.startswith("event:") for line in seen) == 2


@pytest.mark.parametrize("lib", LIBS)
def test_drop_before_body_of_a_json_response(lib: Any) -> None:
    mod, tx = lib
    h = Recorder(SimResponse(200, body={"ok": 1}, drop_after=0))
    with mod.Client(transport=tx.SimulatorTransport(h)) as c, pytest.raises(mod.RemoteProtocolError):
        c.get("https://x/v1/messages")


@pytest.mark.parametrize("lib", LIBS)
def test_delay_is_honoured_and_a_stall_times_out(lib: Any, no_sleep: list[float]) -> None:
    mod, tx = lib
    with mod.Client(transport=tx.SimulatorTransport(Recorder(SimResponse(200, body={}, delay=2.5))),
                    timeout=10) as c:
        assert c.get("https://x/").status_code == 200
    assert no_sleep == [2.5]
    with mod.Client(transport=tx.SimulatorTransport(Recorder(SimResponse(200, body={}, delay=600))),
                    timeout=3) as c, pytest.raises(mod.ReadTimeout):
        c.get("https://x/")
    assert no_sleep == [2.5, 3.0]  # waited the read timeout, not the stall


@pytest.mark.parametrize("lib", LIBS)
def test_async_transport_streams_and_drops(lib: Any, no_sleep: list[float]) -> None:
    mod, tx = lib
    produced: list[int] = []
    h = Recorder(SimResponse(200, events=_events(4, produced), delay=1.0, drop_after=3))

    async def go() -> list[str]:
        lines: list[str] = []
        async with mod.AsyncClient(transport=tx.AsyncSimulatorTransport(h)) as c:
            with pytest.raises(mod.RemoteProtocolError):
                async with c.stream("POST", "https://x/v1/messages") as r:
                    async for line in r.aiter_lines():
                        lines.append(line)
        return lines

    lines = asyncio.run(go())
    assert sum(line.startswith("event:") for line in lines) == 3 and no_sleep == [1.0]


def test_anthropic_sdk_accepts_the_httpx2_transport() -> None:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    h = Recorder(SimResponse(200, headers={"request-id": "req_1"}, body=body))
    client = anthropic.Anthropic(api_key="placeholder", http_client=httpx2.Client(
        transport=tx2.SimulatorTransport(h)))
    msg = client.messages.create(model="claude-opus-4-6", max_tokens=5,
                                 messages=[{"role": "user", "content": "x"}])
    assert msg.content[0].text == "hi" and h.requests[0].path == "/v1/messages"
    assert "placeholder" in h.requests[0].headers["authorization"]



@pytest.mark.parametrize("lib", LIBS)
def test_a_stalled_stream_drops_after_the_stall(lib: Any) -> None:
    mod, tx = lib
    stalled: list[bool] = []

    def stall() -> Iterator[SSEEvent]:
        yield SSEEvent("message_start", {"type": "message_start"})
        stalled.append(True)  # where a stalled stream waits before the connection drops

    h = Recorder(SimResponse(200, events=stall(), drop_after=1))
    with mod.Client(transport=tx.SimulatorTransport(h)) as c, pytest.raises(mod.RemoteProtocolError):
        with c.stream("POST", "https://x/v1/messages") as r:
            r.read()
    assert stalled == [True]


def test_the_public_surface_is_importable_and_sorted() -> None:
    import simulator
    from simulator import transports

    assert all(hasattr(transports, name) for name in transports.__all__)
    constants = [n for n in transports.__all__ if n.isupper()]
    rest = [n for n in transports.__all__ if not n.isupper()]
    assert transports.__all__ == constants + sorted(rest, key=lambda n: (n[0].islower(), n))
    assert callable(simulator.mock)
