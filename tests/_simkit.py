"""Small builders for the simulator's tests: in-memory cassettes, requests, messages."""

from __future__ import annotations

import json
import threading
from typing import Any

from simulator.cassette import Cassette, parse_cassette
from simulator.http import SimRequest, SimResponse

MODEL = "claude-opus-4-6"
SOURCE = {"document": "PROTOCOL.md", "section": "tests"}
PTC_CE = {"type": "code_execution_20260120", "name": "code_execution"}
QUERY_DB = {"name": "query_database", "description": "Run SQL.",
            "input_schema": {"type": "object", "properties": {"sql": {"type": "string"}}},
            "allowed_callers": ["code_execution_20260120"]}
WEATHER = {"name": "get_weather", "description": "Weather.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content) if len(content) != 1 or not isinstance(
        content[0], str) else content[0]}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(id: str, name: str = "get_weather", input: Any = None, caller: Any = None) -> dict[str, Any]:
    b = {"type": "tool_use", "id": id, "name": name, "input": input or {"city": "Paris"}}
    if caller is not None:
        b["caller"] = caller
    return b


def tool_result(id: str, content: Any = "ok", **kw: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": content, **kw}


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn", *, id: str = "msg_01",
            container: Any = None, usage: Any = None, model: str = MODEL) -> dict[str, Any]:
    m: dict[str, Any] = {"id": id, "type": "message", "role": "assistant", "model": model,
                         "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                         "usage": usage or {"input_tokens": 10, "output_tokens": 20}}
    if container is not None:
        m["container"] = container
    return m


def body(messages: list[dict[str, Any]], *, tools: Any = None, model: str = MODEL,
         **extra: Any) -> dict[str, Any]:
    b: dict[str, Any] = {"model": model, "max_tokens": 1024, "messages": messages}
    if tools is not None:
        b["tools"] = tools
    b.update(extra)
    return b


def exchange(req_body: dict[str, Any], resp: Any, status: int = 200, *,
             expect_rule: str | None = None, events: Any = None,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"status": status, "headers": headers or {}}
    if events is not None:
        r["events"] = events
    else:
        r["body"] = resp
    ex: dict[str, Any] = {"request": {"method": "POST", "path": "/v1/messages", "headers": {},
                                      "body": req_body}, "response": r}
    if expect_rule:
        ex["expect_rule"] = expect_rule
    return ex


def cassette(*exchanges: dict[str, Any], id: str = "tests/inline", model: str = MODEL) -> Cassette:
    return parse_cassette({"version": 1, "id": id, "title": id, "source": SOURCE, "model": model,
                           "exchanges": list(exchanges)}, f"<memory:{id}>")


# The engine tests' two-turn conversation (tests/test_engine.py, tests/test_engine_deliberate.py):
# a question, a get_weather call, its result, the answer.
B1 = body([user("Weather in Paris?")], tools=[WEATHER])
R1 = message([text("Checking."), tool_use("toolu_1")], "tool_use", id="msg_1")
B2 = body([user("Weather in Paris?"), assistant(text("Checking."), tool_use("toolu_1")),
           user(tool_result("toolu_1", "sunny, 21C"))], tools=[WEATHER])
R2 = message([text("Sunny.")], id="msg_2")


def two_turns(id: str = "tests/weather") -> Cassette:
    """The two-turn conversation as one cassette."""
    return cassette(exchange(B1, R1), exchange(B2, R2), id=id)


#: What every API client sends (the SDK does): the engine answers a request without them 401/400
#: (simulator.headers). The key is a placeholder.
API_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}


def post(b: Any, headers: dict[str, str] | None = None, path: str = "/v1/messages") -> SimRequest:
    raw = b if isinstance(b, bytes) else json.dumps(b).encode()
    return SimRequest("POST", path, {"content-type": "application/json", **API_HEADERS,
                                     **(headers or {})}, body=raw)


def error_of(resp: SimResponse) -> tuple[int, str, str]:
    assert isinstance(resp.body, dict), resp.body
    return resp.status, resp.body["error"]["type"], resp.body["error"]["message"]


def mock_transport(handler: Any) -> Any:
    """A minimal httpx2.MockTransport around a Handler (tests only; the project's transports
    live in ``simulator.transports``)."""
    import httpx2

    def handle(request: Any) -> Any:
        sim_req = SimRequest(request.method, request.url.path, dict(request.headers),
                             dict(request.url.params), request.read())
        resp = handler(sim_req)
        if resp.drop_after == 0:
            raise httpx2.RemoteProtocolError("simulated dropped connection", request=request)
        if resp.is_stream:
            events = list(resp.events or [])
            if resp.drop_after is not None:
                events = events[:resp.drop_after]
            content = b"".join(e.encode() for e in events)
        else:
            content = resp.body_bytes()
        return httpx2.Response(resp.status, headers=resp.headers, content=content)

    return httpx2.MockTransport(handle)


def sdk_client(handler: Any, **kw: Any) -> Any:
    import anthropic
    import httpx2
    return anthropic.Anthropic(api_key="sk-test-not-a-key", base_url="http://simulator.test",
                               http_client=httpx2.Client(transport=mock_transport(handler)), **kw)


def record_sleeps(monkeypatch: Any, time_module: Any) -> list[float]:
    """Make ``time_module.sleep`` return at once and record its argument, for this thread only.

    ``time`` is the process's one module: patching its ``sleep`` patches it for every thread, and a
    background thread of the harness (the load sampler of ``conformance.subjects.timing``, started
    by an earlier test in the same xdist worker) would then spin and fill the record (a CI run spent
    minutes printing a list of millions of its sleeps). Other threads keep sleeping for real.
    """
    slept: list[float] = []
    real_sleep, me = time_module.sleep, threading.get_ident()

    def fake_sleep(seconds: float) -> None:
        if threading.get_ident() == me:
            slept.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time_module, "sleep", fake_sleep)
    return slept
