"""Tiny in-memory cassettes shared by the SDK, server and recording tests."""

from __future__ import annotations

from typing import Any

from simulator.cassette import Cassette, parse_cassette

MODEL = "claude-opus-4-6"
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}
WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather", "description": "The current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                     "required": ["city"]}}
TOOL_USE = {"type": "tool_use", "id": "toolu_01WeatherParis", "name": "get_weather",
            "input": {"city": "Paris"}}
ANSWER = "It is 18°C and sunny in Paris."


def message(msg_id: str, content: list[dict[str, Any]], stop_reason: str,
            model: str = MODEL, **extra: Any) -> dict[str, Any]:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 10}, **extra}


def request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
            **extra: Any) -> dict[str, Any]:
    return {"method": "POST", "path": "/v1/messages", "headers": {}, "query": {},
            "body": {"model": MODEL, "max_tokens": 1024, "tools": tools or [WEATHER_TOOL],
                     "messages": messages, **extra}}


def cassette(cid: str, exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
             **extra: Any) -> Cassette:
    return parse_cassette({
        "version": 1, "id": cid, "title": cid, "model": MODEL,
        "source": {"document": "test", "section": cid}, **extra,
        "exchanges": [{"request": rq, "response": {"status": 200, "headers": {}, "body": rs}}
                      for rq, rs in exchanges]})


def weather(tool: dict[str, Any] | None = None, *, result: str = "18°C, sunny") -> Cassette:
    """User asks, the model calls get_weather, the client answers, the model concludes."""
    tool = tool or WEATHER_TOOL
    first = [{"type": "text", "text": "Let me check."}, TOOL_USE]
    return cassette("test/weather", [
        (request([QUESTION], [tool]), message("msg_01Weather1", first, "tool_use")),
        (request([QUESTION, {"role": "assistant", "content": first},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id":
                                                TOOL_USE["id"], "content": result}]}], [tool]),
         message("msg_01Weather2", [{"type": "text", "text": ANSWER}], "end_turn")),
    ])


CODE_EXECUTION = {"type": "code_execution_20260120", "name": "code_execution"}
CONTAINER = "container_011CTestContainer000001"
PTC_QUESTION = {"role": "user", "content": "Who are our top customers by revenue?"}
PTC_ANSWER = "Acme leads with 1200."


def _container(expires: str = "2099-01-01T00:05:00Z") -> dict[str, str]:
    return {"id": CONTAINER, "expires_at": expires}


def ptc(query_tool: dict[str, Any]) -> Cassette:
    """Programmatic tool calling: code calls ``query_database``; the client answers; done."""
    code = {"type": "server_tool_use", "id": "srvtoolu_01Code", "name": "code_execution",
            "caller": {"type": "direct"},
            "input": {"code": "rows = await query_database({'sql': 'SELECT 1'})\nprint(rows)"}}
    call = {"type": "tool_use", "id": "toolu_01Query", "name": "query_database",
            "input": {"sql": "SELECT 1"},
            "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_01Code"}}
    first = [{"type": "text", "text": "I'll query the database."}, code, call]
    done = [{"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_01Code",
             "content": {"type": "code_execution_result", "stdout": "Acme 1200\n", "stderr": "",
                         "return_code": 0, "content": []}},
            {"type": "text", "text": PTC_ANSWER}]
    tools = [CODE_EXECUTION, query_tool]
    answered = [PTC_QUESTION, {"role": "assistant", "content": first},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Query",
                                              "content": '[{"customer": "Acme"}]'}]}]
    return cassette("test/ptc", [
        (request([PTC_QUESTION], tools),
         message("msg_01Ptc1", first, "tool_use", container=_container())),
        (request(answered, tools, container=CONTAINER),
         message("msg_01Ptc2", done, "end_turn", container=_container())),
    ])


PAUSE_QUESTION = {"role": "user", "content": "Run the two analysis steps one by one."}
PAUSE_ANSWER = "Both steps finished."


def pause_turn() -> Cassette:
    """A long server-tool turn paused (``pause_turn``) and resumed by resending it."""
    def step(n: int) -> list[dict[str, Any]]:
        sid = f"srvtoolu_01Step{n}"
        return [{"type": "server_tool_use", "id": sid, "name": "bash_code_execution",
                 "input": {"command": f"python step{n}.py"}},
                {"type": "bash_code_execution_tool_result", "tool_use_id": sid,
                 "content": {"type": "bash_code_execution_result", "stdout": f"step {n} done\n",
                             "stderr": "", "return_code": 0, "content": []}}]

    paused = step(1)
    tools = [CODE_EXECUTION]
    return cassette("test/pause_turn", [
        (request([PAUSE_QUESTION], tools),
         message("msg_01Pause1", paused, "pause_turn", container=_container())),
        (request([PAUSE_QUESTION, {"role": "assistant", "content": paused}], tools,
                 container=CONTAINER),
         message("msg_01Pause2", [*step(2), {"type": "text", "text": PAUSE_ANSWER}], "end_turn",
                 container=_container())),
    ])
