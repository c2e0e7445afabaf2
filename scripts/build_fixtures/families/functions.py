"""Custom function tools, the client tools every agent framework can declare (PROTOCOL.md §1
"Error texts and conditions" for the pairing rules; the client-tool loop of seed 003 "How it
works" holds for any client tool): one call, several calls in one turn answered in one message,
each plain and streamed. The agent-loop scenarios ``loop.functions.*`` run them, so that a
framework without a bash client tool is judged on the same loop steps."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.sources import SEED_BASH, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

TOOL_TYPE = "custom"
MODEL = "claude-sonnet-4-6"
S_HOW = seed(SEED_BASH, "작동 방식 (How it works)")
S_PAIRING = protocol("1. Programmatic tool calling: Error texts and conditions")
S_STREAM = protocol("6. Streaming (SSE): Grammar")

GET_WEATHER = {
    "name": "get_weather", "description": "Current weather for a city, as JSON.",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}},
                     "required": ["location"]},
}
PARIS = '{"temperature_c": 22, "conditions": "sunny"}'
LONDON = '{"temperature_c": 14, "conditions": "overcast"}'


def _cb(scenario: str, title: str, streamed: bool) -> tuple[CassetteBuilder, Conversation]:
    sources = [S_HOW, S_PAIRING, *([S_STREAM] if streamed else [])]
    cb = CassetteBuilder("functions", TOOL_TYPE, scenario, f"a custom function tool: {title}",
                         sources, model=MODEL, tools=[GET_WEATHER], streamed=streamed)
    return cb, Conversation(cb, max_tokens=1024)


def one_call(streamed: bool) -> CassetteBuilder:
    cb, c = _cb("one_call", "one call and its result", streamed)
    c.user("What is the weather in Paris?")
    tid = cb.ids.make("toolu")
    c.turn([b.text("I'll check the weather in Paris."),
            b.tool_use(tid, "get_weather", {"location": "Paris"})], "tool_use")
    c.tool_results(b.tool_result(tid, PARIS))
    c.turn([b.text("It is sunny in Paris, 22 °C.")], "end_turn")
    return cb


def several_calls(streamed: bool) -> CassetteBuilder:
    cb, c = _cb("several_calls", "two calls in one turn, answered in one message", streamed)
    c.user("Compare the weather in Paris and London.")
    t1, t2 = cb.ids.make("toolu"), cb.ids.make("toolu")
    c.turn([b.text("I'll check both cities."),
            b.tool_use(t1, "get_weather", {"location": "Paris"}),
            b.tool_use(t2, "get_weather", {"location": "London"})], "tool_use")
    c.tool_results(b.tool_result(t1, PARIS), b.tool_result(t2, LONDON))
    c.turn([b.text("Paris is sunny at 22 °C; London is overcast at 14 °C.")], "end_turn")
    return cb


@family("functions")
def build() -> Iterator[CassetteBuilder]:
    for streamed in (False, True):
        yield one_call(streamed)
        yield several_calls(streamed)
