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
