"""Issue 9: ``tooluse serve`` under load and faults: concurrent clients, clients that disconnect
mid-stream, slow readers. The server keeps serving the others and frees what the dropped ones
held (their stream generators are closed, their threads come back)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _simkit import API_HEADERS
from fuzzkit.raw_http import exchange, request_bytes

from simulator import routes
from simulator.cassette import iter_corpus
from simulator.http import SimRequest, SimResponse, SSEEvent
from simulator.server import start_server


class Streams:
    """A handler streaming endless SSE events on POST /stream (one event per ``pace`` s), and
    counting the streams that are open; everything else goes to the simulated API."""

    def __init__(self, pace: float = 0.005) -> None:
        self.pace = pace
        self.open = 0
        self.opened = 0
        self.lock = threading.Lock()
        self.api = routes.build([c for c in iter_corpus() if c.family == "bash"], log_limit=100)

    def events(self, limit: int | None) -> Iterator[SSEEvent]:
        with self.lock:
            self.open += 1
            self.opened += 1
        try:
            n = 0
            while limit is None or n < limit:
                yield SSEEvent("ping", {"type": "ping", "n": n, "pad": "x" * 200})
                n += 1
                time.sleep(self.pace)
        finally:
            with self.lock:
                self.open -= 1

    def __call__(self, request: SimRequest) -> SimResponse:
        if request.path == "/stream":
            limit = int(request.query.get("n", "0")) or None
            return SimResponse(200, {"request-id": "req_stream"}, events=self.events(limit))
        return self.api(request)


@pytest.fixture
def served() -> Iterator[tuple[str, Streams]]:
    handler = Streams()
    url, stop = start_server(handler)
    yield url, handler
    stop()


def wait_until(predicate: Any, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def drop_mid_stream(url: str, read: int = 2000) -> None:
    host, _, port = url.removeprefix("http://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /stream HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
        got = b""
        while len(got) < read:
            got += sock.recv(4096)
        assert b"event: ping" in got
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    # closed with a reset, the way a killed client goes


def test_a_client_that_disconnects_mid_stream_frees_its_stream(served: tuple[str, Streams]) -> None:
    url, handler = served
    for _ in range(5):
        drop_mid_stream(url)
    assert wait_until(lambda: handler.open == 0), f"{handler.open} endless streams still produced"
    assert handler.opened == 5
    assert httpx.get(f"{url}/v1/models").status_code == 200


def test_concurrent_clients_while_others_drop_and_read_slowly(served: tuple[str, Streams]) -> None:
    url, handler = served
    errors: list[str] = []
    finished: list[int] = []

    def full_stream() -> None:
        with httpx.stream("POST", f"{url}/stream?n=40", timeout=30) as r:
            n = sum(1 for line in r.iter_lines() if line.startswith("event: ping"))
        finished.append(n)

    def slow_reader() -> None:
        with httpx.stream("POST", f"{url}/stream?n=20", timeout=30) as r:
            n = 0
            for line in r.iter_lines():
                if line.startswith("event: ping"):
                    n += 1
                    time.sleep(0.02)
        finished.append(n)

    def bad_requests() -> None:
        for i in range(10):
            r = exchange(url, request_bytes("POST", "/v1/messages", dict(API_HEADERS),
                                            b"{" * (i + 1)))
            if r.status != 400 or not r.headers.get("request-id"):
                errors.append(f"bad request got {r.status}")

    def guarded(fn: Any) -> Any:
        def run() -> None:
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - asserted below
                errors.append(f"{fn.__name__}: {e!r}")
        return run

    jobs = [full_stream] * 8 + [slow_reader] * 3 + [lambda: drop_mid_stream(url)] * 6 \
        + [bad_requests] * 4
    threads = [threading.Thread(target=guarded(j)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not errors, errors
    assert sorted(finished) == [20] * 3 + [40] * 8
    assert wait_until(lambda: handler.open == 0), f"{handler.open} streams left open"


def test_many_connections_opened_and_abandoned(served: tuple[str, Streams]) -> None:
    url, _ = served
    host, _, port = url.removeprefix("http://").rpartition(":")
    for _ in range(3):
        socks = [socket.create_connection((host, int(port)), timeout=5) for _ in range(50)]
        for i, s in enumerate(socks):
            if i % 3 == 0:
                s.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")  # never read
        for s in socks:
            s.close()
    r = httpx.get(f"{url}/v1/models/claude-opus-5-5")
    assert r.status_code in (200, 404) and r.headers["request-id"].startswith("req_")
    assert json.loads(r.content)["type"] in ("model", "error")


def test_server_held_threads_are_bounded() -> None:
    n = iter(range(10**6))

    def replies(request: SimRequest) -> SimResponse:
        return SimResponse(200, {}, body={"id": f"msg_{next(n)}", "type": "message",
                                          "role": "assistant", "content": []})

    threads = routes.MessageThreads(replies)

    def send(thread: dict[str, Any]) -> SimResponse:
        body = {"model": "m", "max_tokens": 1, "messages": [], "thread": thread}
        return threads(SimRequest("POST", "/v1/messages", dict(API_HEADERS),
                                  body=json.dumps(body).encode()))

    for _ in range(routes.MAX_THREADS + 50):
        send({"type": "create"})
    assert len(threads._stored) == routes.MAX_THREADS
    assert send({"type": "continue", "previous_message_id": "msg_0"}).status == 400  # evicted
    last = f"msg_{routes.MAX_THREADS + 49}"
    assert send({"type": "continue", "previous_message_id": last}).status == 200


def _rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
def test_tooluse_serve_memory_stays_bounded(tmp_path: Any) -> None:
    """A long-running ``tooluse serve`` fed thousands of 20 kB requests: its resident memory
    stops growing once the engine's log is full (unbounded, it grew ~30 MiB per 800)."""
    from hostile import TOOLUSE

    cassette = next(c.path for c in iter_corpus() if c.family == "bash" and c.path is not None)
    proc = subprocess.Popen([*TOOLUSE, "serve", str(cassette), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        body = json.dumps({"model": "claude-opus-5-5", "max_tokens": 1, "messages": [
            {"role": "user", "content": "x" * 20_000}]}).encode()
        raw = request_bytes("POST", "/v1/messages", {"content-type": "application/json",
                                                     "x-api-key": "test-key",
                                                     "anthropic-version": "2023-06-01"}, body)
        sizes = []
        for rounds in (800, 800, 800):
            for _ in range(rounds):
                assert exchange(url, raw).status == 400
            sizes.append(_rss_kib(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    grown_mib = (sizes[-1] - sizes[0]) / 1024
    assert grown_mib < 12, f"RSS {[s // 1024 for s in sizes]} MiB after each 800 requests"


def test_planned_faults_and_setup_from_the_serve_options() -> None:
    """``--fault KIND@N[:SECONDS]`` plans a fault at exchange N (several used up in order);
    ``--fault KIND=RATE`` still draws them; a malformed plan is a usage error."""
    import argparse

    from conformance.cli import UsageError
    from conformance.cli.serve import engine_options

    def plan(*specs: str) -> Any:
        return engine_options(argparse.Namespace(fault=list(specs), seed=0))["faults"]

    p = plan("rate_limit@0:0.01", "overloaded@1", "overloaded@1")
    first = p.pick(0)
    assert (first.kind, first.retry_after) == ("rate_limit", 0.01) and p.pick(0) is None
    assert [p.pick(1).kind, p.pick(1).kind] == ["overloaded", "overloaded"]
    assert p.pick(1) is None
    assert plan("overloaded=1").pick(5).kind == "overloaded"
    for bad in ("overloaded@x", "nope@1", "overloaded@-1", "overloaded@1:-2"):
        with pytest.raises(UsageError):
            plan(bad)
