"""The unmodified ``anthropic`` SDK, sync and async, against the simulator, in-process
(``simulator.mock``) and through a real server (``start_server``, as ``tooluse serve`` runs it):
``messages.create``, ``messages.stream``, the beta tool runner (a client tool conversation,
programmatic tool calling, ``pause_turn``), and retries honouring ``retry-after`` and 529."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import pytest
import sim_cassettes as sc
from anthropic import beta_async_tool, beta_tool

import simulator
from simulator.cassette import Cassette
from simulator.faults import Fault, FaultPlan
from simulator.routes import build
from simulator.server import start_server

MODES = ["in-process", "served"]


@contextmanager
def simulated(mode: str, cassette: Cassette, **engine_opts: Any) -> Iterator[tuple[str, Any]]:
    """(base_url, engine) for the cassette, in-process or behind a real loopback server."""
    if mode == "in-process":
        with simulator.mock(cassette, **engine_opts) as api:
            yield api.base_url, api.simulator
        return
    routes = build(cassette, **engine_opts)
    url, stop = start_server(routes)
    try:
        yield url, routes.messages
    finally:
        stop()


def sync_client(base_url: str, **kw: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="placeholder", base_url=base_url, **kw)


def async_client(base_url: str, **kw: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="placeholder", base_url=base_url, **kw)


def _follow_up(first: Any, result: str = "18°C, sunny") -> list[Any]:
    tool_use = next(b for b in first.content if b.type == "tool_use")
    return [sc.QUESTION, {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id,
                                          "content": result}]}]


@pytest.mark.parametrize("mode", MODES)
def test_create_conversation_sync(mode: str) -> None:
    with simulated(mode, sc.weather()) as (url, engine):
        client = sync_client(url)
        first = client.messages.create(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                       messages=[sc.QUESTION])  # type: ignore[list-item]
        assert first.stop_reason == "tool_use"
        final = client.messages.create(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                       messages=_follow_up(first))
        assert final.content[0].text == sc.ANSWER  # type: ignore[union-attr]
        assert engine.done and not engine.violations


@pytest.mark.parametrize("mode", MODES)
def test_stream_conversation_sync(mode: str) -> None:
    with simulated(mode, sc.weather()) as (url, engine):
        client = sync_client(url)
        with client.messages.stream(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                    messages=[sc.QUESTION]) as stream:  # type: ignore[list-item]
            kinds = [event.type for event in stream]
            first = stream.get_final_message()
        assert kinds[0] == "message_start" and "input_json" in kinds and kinds[-1] == "message_stop"
        assert first.content[1].input == {"city": "Paris"}  # type: ignore[union-attr]
        with client.messages.stream(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                    messages=_follow_up(first)) as stream:
            assert stream.get_final_text() == sc.ANSWER
        assert engine.done


@pytest.mark.parametrize("mode", MODES)
def test_create_and_stream_async(mode: str) -> None:
    async def conversation(url: str) -> str:
        async with async_client(url) as client:
            first = await client.messages.create(
                model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                messages=[sc.QUESTION])  # type: ignore[list-item]
            async with client.messages.stream(model=sc.MODEL, max_tokens=1024,
                                              tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                                              messages=_follow_up(first)) as stream:
                return await stream.get_final_text()

    with simulated(mode, sc.weather()) as (url, engine):
        assert asyncio.run(conversation(url)) == sc.ANSWER
        assert engine.done


@beta_tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return "18°C, sunny"


@beta_async_tool
async def aget_weather(city: str) -> str:
    """The current weather in a city."""
    return "18°C, sunny"


aget_weather.name = "get_weather"


@beta_tool(allowed_callers=["code_execution_20260120"])
def query_database(sql: str) -> str:
    """Run a SQL query against the sales database."""
    return '[{"customer": "Acme", "revenue": 1200}]'


# The SDK 2.10 tool runner keeps the conversation server-side by default (`thread`, beta
# message-threads-2026-08-12: follow-ups send only new messages); `thread=False` sends the whole
# history each turn. Both reach the engine as full histories (simulator.routes.MessageThreads).
RUNNER = {"model": sc.MODEL, "max_tokens": 1024}
THREADING = pytest.mark.parametrize("threading", [{}, {"thread": False}],
                                    ids=["threaded", "unthreaded"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
@THREADING
def test_tool_runner_client_tool_conversation(mode: str, stream: bool, threading: dict[str, Any]) -> None:
    with simulated(mode, sc.weather(get_weather.to_dict())) as (url, engine):  # type: ignore[arg-type]
        runner = sync_client(url).beta.messages.tool_runner(
            tools=[get_weather], messages=[sc.QUESTION], stream=stream, **RUNNER, **threading)  # type: ignore[call-overload]
        final = runner.until_done()
        assert final.content[-1].text == sc.ANSWER and final.stop_reason == "end_turn"
        assert engine.done and not engine.violations


@pytest.mark.parametrize("mode", MODES)
def test_async_tool_runner(mode: str) -> None:
    async def run(url: str) -> Any:
        async with async_client(url) as client:
            runner = client.beta.messages.tool_runner(tools=[aget_weather],
                                                      messages=[sc.QUESTION], **RUNNER)  # type: ignore[call-overload]
            return await runner.until_done()

    with simulated(mode, sc.weather(aget_weather.to_dict())) as (url, engine):  # type: ignore[arg-type]
        assert asyncio.run(run(url)).content[-1].text == sc.ANSWER
        assert engine.done


@pytest.mark.parametrize("mode", MODES)
@THREADING
def test_tool_runner_programmatic_tool_calling(mode: str, threading: dict[str, Any]) -> None:
    cassette = sc.ptc(query_database.to_dict())  # type: ignore[arg-type]
    with simulated(mode, cassette) as (url, engine):
        runner = sync_client(url).beta.messages.tool_runner(
            tools=[sc.CODE_EXECUTION, query_database],  # type: ignore[list-item]
            messages=[sc.PTC_QUESTION], **RUNNER, **threading)
        final = runner.until_done()
        assert final.content[-1].text == sc.PTC_ANSWER
        # the engine's ptc.container.required rule saw the container sent back on the follow-up
        assert engine.done and not engine.violations


@pytest.mark.parametrize("mode", MODES)
@THREADING
def test_tool_runner_resends_a_paused_turn(mode: str, threading: dict[str, Any]) -> None:
    with simulated(mode, sc.pause_turn()) as (url, engine):
        runner = sync_client(url).beta.messages.tool_runner(
            tools=[sc.CODE_EXECUTION], messages=[sc.PAUSE_QUESTION], **RUNNER, **threading)  # type: ignore[list-item]
        stops = [message.stop_reason for message in runner]
        assert stops == ["pause_turn", "end_turn"]
        assert engine.done and not engine.violations


def test_a_broken_conversation_gets_the_documented_error() -> None:
    with simulator.mock(sc.weather()) as api:
        client = anthropic.Anthropic(max_retries=0)
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                                   messages=[sc.QUESTION, {"role": "user", "content": [
                                       {"type": "tool_result", "tool_use_id": "toolu_01Nope",
                                        "content": "x"}]}])
        assert info.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        assert info.value.request_id and api.simulator.violations  # type: ignore[union-attr]


# --- retries --------------------------------------------------------------------------------------

@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The SDK's own computed wait before each retry (and no real sleeping)."""
    seen: list[float] = []

    def wrap(cls: Any) -> None:
        real: Callable[..., float] = cls._calculate_retry_timeout

        def recording(self: Any, *args: Any, **kwargs: Any) -> float:
            seen.append(real(self, *args, **kwargs))
            return 0.0

        monkeypatch.setattr(cls, "_calculate_retry_timeout", recording)

    wrap(anthropic.Anthropic)
    wrap(anthropic.AsyncAnthropic)
    return seen


def _retry_plan() -> FaultPlan:
    return FaultPlan(at={0: [Fault("overloaded"), Fault("rate_limit", retry_after=7),
                             Fault("drop")]})


@pytest.mark.parametrize("mode", MODES)
def test_sdk_retries_529_and_429_honouring_retry_after(mode: str, waits: list[float]) -> None:
    with simulated(mode, sc.weather(), faults=_retry_plan()) as (url, engine):
        client = sync_client(url, max_retries=3)
        response = client.messages.with_raw_response.create(
            model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
            messages=[sc.QUESTION])  # type: ignore[list-item]
        assert response.parse().stop_reason == "tool_use"
        assert response.retries_taken == 3
    assert len(waits) == 3
    assert 0 < waits[0] <= 1.0  # 529 without retry-after: the SDK's own backoff
    assert waits[1] == 7.0  # 429 retry-after: 7
    assert 0 < waits[2] <= 2.0  # dropped connection: backoff again


@pytest.mark.parametrize("mode", MODES)
def test_a_stalled_stream_ends_in_a_dropped_connection(mode: str) -> None:
    import httpx2

    from simulator.clock import FakeClock

    clock = FakeClock()
    plan = FaultPlan(at={0: Fault("stall", after_events=2, stall_seconds=3600)})
    with simulated(mode, sc.weather(), faults=plan, clock=clock) as (url, _):
        seen: list[str] = []
        # The drop as the transport reports it: raised as it is (SDK <= 2.16), or as the SDK's
        # APIConnectionError from it (2.17 wraps a failed read of the body).
        with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as caught:
            with sync_client(url, max_retries=0).messages.stream(
                    model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                    messages=[sc.QUESTION]) as stream:  # type: ignore[list-item]
                seen.extend(event.type for event in stream)
    assert isinstance(caught.value, httpx2.RemoteProtocolError) or \
        isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    assert 0 < len(seen) <= 2


def test_async_sdk_retries_honouring_retry_after(waits: list[float]) -> None:
    async def run(url: str) -> Any:
        async with async_client(url, max_retries=2) as client:
            return await client.messages.create(
                model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                messages=[sc.QUESTION])  # type: ignore[list-item]

    plan = FaultPlan(at={0: [Fault("rate_limit", retry_after=3), Fault("overloaded")]})
    with simulated("in-process", sc.weather(), faults=plan) as (url, _):
        assert asyncio.run(run(url)).stop_reason == "tool_use"
    assert waits[0] == 3.0 and len(waits) == 2


def test_sdk_gives_up_after_max_retries(waits: list[float]) -> None:
    plan = FaultPlan(at={0: [Fault("overloaded")] * 3})
    with simulated("in-process", sc.weather(), faults=plan) as (url, _):
        with pytest.raises(anthropic.APIStatusError) as info:
            sync_client(url, max_retries=2).messages.create(
                model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                messages=[sc.QUESTION])  # type: ignore[list-item]
    assert info.value.status_code == 529 and len(waits) == 2


# --- message threads ------------------------------------------------------------------------------

def test_the_default_tool_runner_really_continues_a_server_side_thread() -> None:
    import json

    with simulator.mock(sc.weather(get_weather.to_dict())) as api:  # type: ignore[arg-type]
        anthropic.Anthropic().beta.messages.tool_runner(
            tools=[get_weather], messages=[sc.QUESTION], **RUNNER).until_done()  # type: ignore[call-overload]
        sent = [json.loads(call.request.content) for call in api.calls]
        assert api.simulator.done  # type: ignore[union-attr]
    assert sent[0]["thread"] == {"type": "create"}
    assert sent[1]["thread"] == {"type": "continue", "previous_message_id": "msg_01Weather1"}
    assert len(sent[1]["messages"]) == 1 and "tools" not in sent[1]


class _Seen:
    def __init__(self, reply: dict[str, Any] | None = None, stream: bool = False) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.reply = reply or sc.message("msg_A", [{"type": "text", "text": "a"}], "end_turn")
        self.stream = stream

    def __call__(self, request: Any) -> Any:
        from simulator.http import SimResponse
        from simulator.sse import synthesize_events

        self.bodies.append(request.json())
        if self.stream:
            return SimResponse(200, events=synthesize_events(self.reply))
        return SimResponse(200, body=self.reply)


def _post(handler: Any, body: dict[str, Any]) -> Any:
    import json

    from simulator.http import SimRequest

    return handler(SimRequest("POST", "/v1/messages", {"content-type": "application/json",
                                                       "x-api-key": "test-key",
                                                       "anthropic-version": "2023-06-01"},
                              body=json.dumps(body).encode()))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_threads_expand_a_continue_to_the_full_request(stream: bool) -> None:
    from simulator.routes import MessageThreads

    seen = _Seen(stream=stream)
    threads = MessageThreads(seen)
    first = _post(threads, {"model": sc.MODEL, "system": "be brief", "tools": [sc.WEATHER_TOOL],
                            "messages": [sc.QUESTION], "thread": {"type": "create"}})
    if stream:
        list(first.events)  # the reply is remembered once the stream has been read
    more = {"role": "user", "content": "and tomorrow?"}
    _post(threads, {"model": sc.MODEL, "messages": [more],
                    "thread": {"type": "continue", "previous_message_id": "msg_A"}})
    assert "thread" not in seen.bodies[0] and "thread" not in seen.bodies[1]
    assert seen.bodies[1]["tools"] == [sc.WEATHER_TOOL] and seen.bodies[1]["system"] == "be brief"
    assert seen.bodies[1]["messages"] == [sc.QUESTION, {"role": "assistant", "content": [
        {"type": "text", "text": "a"}]}, more]


def test_thread_errors_carry_the_codes_the_sdk_recovers_from() -> None:
    from simulator.routes import MessageThreads

    seen = _Seen()
    threads = MessageThreads(seen)
    unknown = _post(threads, {"messages": [], "thread": {"type": "continue",
                                                         "previous_message_id": "msg_X"}})
    assert unknown.status == 400 and unknown.body["error"]["details"] == {"error_code": "thread_not_found"}
    _post(threads, {"messages": [sc.QUESTION], "thread": {"type": "create"}})
    again = {"messages": [], "thread": {"type": "continue", "previous_message_id": "msg_A"}}
    assert _post(threads, again).status == 200
    twice = _post(threads, again)
    assert twice.body["error"]["details"] == {"error_code": "thread_already_continued"}
    assert len(seen.bodies) == 2  # refused continues never reach the engine


def test_the_pytest_plugin_fixture(tooluse_simulator: Any) -> None:
    api = tooluse_simulator(sc.weather())
    client = anthropic.Anthropic()
    first = client.messages.create(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                                   messages=[sc.QUESTION])  # type: ignore[list-item]
    assert first.stop_reason == "tool_use" and len(api.simulator.served) == 1


def test_mock_serves_an_unmodified_async_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

    async def run() -> Any:
        async with anthropic.AsyncAnthropic() as client:
            return await client.messages.create(
                model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],  # type: ignore[list-item]
                messages=[sc.QUESTION])  # type: ignore[list-item]

    with simulator.mock(sc.weather()):
        assert asyncio.run(run()).content[1].input == {"city": "Paris"}  # type: ignore[union-attr]
