"""``tooluse serve``'s server: a raw ASGI app on uvicorn, on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from simulator.http import SimRequest, SimResponse, SSEEvent
from simulator.routes import Routes
from simulator.server import start_server

MODEL = "claude-opus-4-6"


class Counting:
    """A handler that notices when it is entered by two threads at once."""

    def __init__(self) -> None:
        self.inside = 0
        self.max_inside = 0
        self.calls = 0
        self._guard = threading.Lock()

    def __call__(self, request: SimRequest) -> SimResponse:
        with self._guard:
            self.inside += 1
            self.max_inside = max(self.max_inside, self.inside)
        threading.Event().wait(0.002)  # widen the window a racing call would need
        with self._guard:
            self.inside -= 1
            self.calls += 1
        if request.path == "/boom":
            raise RuntimeError("engine bug")
        return SimResponse(200, headers={"request-id": "req_x"},
                           body={"path": request.path, "query": request.query,
                                 "beta": request.headers.get("anthropic-beta"),
                                 "body": request.body.decode()})


@pytest.fixture
def served() -> Iterator[tuple[str, Counting]]:
    handler = Counting()
    url, stop = start_server(handler)
    yield url, handler
    stop()


def test_requests_reach_the_handler(served: tuple[str, Counting]) -> None:
    url, _ = served
    assert url.startswith("http://127.0.0.1:")
    r = httpx2.post(f"{url}/v1/messages?beta=true", content=b'{"a":1}',
                    headers={"anthropic-beta": "x"})
    assert r.status_code == 200 and r.headers["request-id"] == "req_x"
    assert r.json() == {"path": "/v1/messages", "query": {"beta": "true"}, "beta": "x",
                        "body": '{"a":1}'}


def test_a_handler_exception_is_an_api_shaped_500(served: tuple[str, Counting]) -> None:
    url, _ = served
    r = httpx2.get(f"{url}/boom")
    assert r.status_code == 500 and r.headers["request-id"].startswith("req_")
    assert r.json()["error"]["type"] == "api_error" and "engine bug" in r.json()["error"]["message"]


def test_concurrent_requests_never_enter_the_handler_twice(served: tuple[str, Counting]) -> None:
    url, handler = served
    with httpx2.Client(base_url=url) as client, ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda i: client.get(f"/r{i}").status_code, range(64)))
    assert statuses == [200] * 64 and handler.calls == 64 and handler.max_inside == 1


def test_sse_is_sent_event_by_event() -> None:
    first_read = threading.Event()

    def events() -> Iterator[SSEEvent]:
        yield SSEEvent("message_start", {"type": "message_start"})
        # the next event is only produced once the client has read the first one
        assert first_read.wait(5), "the first event never reached the client"
        yield SSEEvent("message_stop", {"type": "message_stop"})

    url, stop = start_server(lambda r: SimResponse(200, events=events()), threaded=True)
    try:
        with httpx2.stream("GET", url) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            lines = r.iter_lines()
            assert next(lines) == "event: message_start"
            first_read.set()
            rest = list(lines)
        assert "event: message_stop" in rest
    finally:
        stop()


@pytest.mark.parametrize("drop_after", [0, 2])
def test_drop_aborts_the_connection(drop_after: int) -> None:
    events = [SSEEvent("ping", {"type": "ping"})] * 4

    def handler(r: SimRequest) -> SimResponse:
        if r.path == "/s":
            return SimResponse(200, events=events, drop_after=drop_after)
        return SimResponse(200, body={"a": 1}, drop_after=0 if r.path == "/json" else None)

    url, stop = start_server(handler)
    try:
        seen: list[str] = []
        with pytest.raises(httpx2.RemoteProtocolError), httpx2.stream("GET", f"{url}/s") as r:
            seen.extend(r.iter_lines())
        assert sum(line.startswith("event:") for line in seen) == drop_after
        with pytest.raises(httpx2.RemoteProtocolError):
            httpx2.get(f"{url}/json")
        assert httpx2.get(f"{url}/ok").json() == {"a": 1}  # the server still serves
    finally:
        stop()


def test_a_stalled_stream_does_not_block_other_requests() -> None:
    released = threading.Event()

    def stalled() -> Iterator[SSEEvent]:
        yield SSEEvent("message_start", {"type": "message_start"})
        released.wait(5)  # the stall: no event until another request has been answered

    def handler(request: SimRequest) -> SimResponse:
        if request.path == "/stream":
            return SimResponse(200, events=stalled(), drop_after=1)
        released.set()
        return SimResponse(200, body={"answered": True})

    url, stop = start_server(handler)
    try:
        with httpx2.stream("GET", f"{url}/stream", timeout=10) as r:
            lines = r.iter_lines()
            assert next(lines) == "event: message_start"
            assert httpx2.get(f"{url}/other", timeout=10).json() == {"answered": True}
            with pytest.raises(httpx2.RemoteProtocolError):
                list(lines)
    finally:
        stop()


def test_mounted_handlers_may_block_without_stalling_the_server() -> None:
    released = threading.Event()

    def long_poll(request: SimRequest) -> SimResponse:
        if request.method == "POST":
            released.set()
            return SimResponse(200, body={"released": True})
        return SimResponse(200, body={"woken": released.wait(5)})

    routes = Routes(lambda r: SimResponse(200, body={}), mounts=[("/v1/sessions", long_poll)])
    url, stop = start_server(routes)
    try:
        with ThreadPoolExecutor(2) as pool:
            waiting = pool.submit(httpx2.get, f"{url}/v1/sessions/s1/events/stream", timeout=10)
            threading.Event().wait(0.05)
            assert httpx2.post(f"{url}/v1/sessions/s1/events", timeout=10).status_code == 200
            assert waiting.result().json() == {"woken": True}
    finally:
        stop()


def _cassette(tmp_path: Path) -> Path:
    body = {"id": "msg_01", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": "Hello from the cassette."}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 5}}
    cassette = {"version": 1, "id": "test/hello", "title": "hello",
                "source": {"document": "test", "section": "serve"}, "model": MODEL,
                "exchanges": [{"request": {"method": "POST", "path": "/v1/messages", "body": {
                    "model": MODEL, "max_tokens": 64,
                    "messages": [{"role": "user", "content": "Hi"}]}},
                    "response": {"status": 200, "headers": {}, "body": body}}]}
    path = tmp_path / "hello.json"
    path.write_text(json.dumps(cassette))
    return path


def _tooluse(*args: str) -> subprocess.Popen[str]:
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


#: What every API client sends (simulator.headers; the key is a placeholder).
API_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}


def test_tooluse_serve_without_headers_is_answered_as_the_api_does(tmp_path: Path) -> None:
    """A client sending no key gets the API's 401; --no-header-checks serves it."""
    path = _cassette(tmp_path)
    for extra, want in (([], 401), (["--no-header-checks"], 200)):
        proc = _tooluse("serve", str(path), "--port", "0", *extra)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            r = httpx2.post(f"{url}/v1/messages", timeout=10, json={
                "model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]})
            assert r.status_code == want, r.text
            if want == 401:
                assert r.json()["error"] == {"type": "authentication_error",
                                             "message": "x-api-key header is required"}
        finally:
            proc.terminate()
            proc.communicate(timeout=10)


def test_tooluse_serve_prints_its_url_and_serves(tmp_path: Path) -> None:
    proc = _tooluse("serve", str(_cassette(tmp_path)), "--port", "0")
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        r = httpx2.post(f"{url}/v1/messages", json={
            "model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]},
            headers=API_HEADERS, timeout=10)
        assert r.json()["content"][0]["text"] == "Hello from the cassette."
        assert httpx2.get(f"{url}/v1/models/{MODEL}").json()["id"] == MODEL
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize(("args", "message"), [
    (["serve", "/nonexistent/x.json"], "no such file or directory"),
    (["serve", "{cassette}", "--port", "70000"], "is not a port number"),
    (["replay", "/nonexistent/x.json"], "no such file or directory"),
    (["serve", "{cassette}", "--fault", "overloaded=2"], "expected KIND=RATE"),
    (["serve", "{cassette}", "--fault", "meteor=0.5"], "expected KIND=RATE"),
])
def test_tooluse_serve_usage_errors(tmp_path: Path, args: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    args = [a.replace("{cassette}", str(_cassette(tmp_path))) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_fault_options_reach_the_engine(tmp_path: Path) -> None:
    from conformance.cli import build_parser
    from conformance.cli.serve import engine_options
    from simulator.routes import build

    args = build_parser().parse_args(["serve", str(_cassette(tmp_path)), "--fault", "overloaded=1"])
    routes = build(str(args.cassettes), **engine_options(args))
    hello = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
    resp = routes(SimRequest("POST", "/v1/messages", API_HEADERS, body=json.dumps(hello).encode()))
    assert resp.status == 529 and resp.body["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize("send", [True, False], ids=["complete", "incomplete"])
def test_tooluse_replay_narrates_and_summarises(tmp_path: Path, send: bool) -> None:
    proc = _tooluse("replay", str(_cassette(tmp_path)), "--port", "0")
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if send:
            r = httpx2.post(f"{url}/v1/messages", timeout=10, headers=API_HEADERS, json={
                "model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]})
            assert r.status_code == 200
    finally:
        proc.terminate()  # SIGTERM ends it like Ctrl-C: the summary is still printed
        _, err = proc.communicate(timeout=10)
    if send:
        assert proc.returncode == 0 and "POST /v1/messages -> 200" in err
        assert "served 1 exchange(s); 0 not served" in err
    else:
        assert proc.returncode == 1 and "not served: test/hello exchange 0" in err
