"""Client and server tools in one turn (seed 000 §"Cara kerja eksekusi kode" step 5, PROTOCOL.md §2
"Client tool alongside code execution"): the server_tool_use waits without its result next to the
client tool_use; the next response opens with the deferred result."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.sources import SEED_CODE_EXECUTION, capture, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

V = "code_execution_20250825"
MODEL = "claude-sonnet-4-6"
S_HOW = seed(SEED_CODE_EXECUTION, "Cara kerja eksekusi kode")
S_OTHER = seed(SEED_CODE_EXECUTION, "Menggunakan eksekusi kode dengan alat eksekusi lainnya")
S_MIXED = protocol("2. Code execution tool: Client tool alongside code execution")
S_PENDING = protocol("2. Code execution tool: pause_turn")
S_STREAM = seed(SEED_CODE_EXECUTION, "Streaming")

GET_WEATHER = {
    "name": "get_weather", "description": "Current weather for a city, as JSON.",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}},
                     "required": ["location"]},
}


def _cb(scenario: str, title: str, sources: list, streamed: bool = False) -> CassetteBuilder:
    return CassetteBuilder("mixed", V, scenario, f"{V} + a client tool: {title}",
                           [*sources, S_STREAM] if streamed else sources, model=MODEL,
                           tools=[{"type": V, "name": "code_execution"}, GET_WEATHER], streamed=streamed)


def _first(cb: CassetteBuilder, c: Conversation) -> tuple[str, str]:
    sid, tid = cb.ids.make("srvtoolu"), cb.ids.make("toolu")
    c.turn([b.text("I'll start the statistics run and fetch the weather."),
            b.server_tool_use(sid, "bash_code_execution", {"command": "python3 stats.py"}),
            b.tool_use(tid, "get_weather", {"location": "Paris"})], "tool_use", container=True)
    return sid, tid


def _last(c: Conversation, sid: str) -> None:
    c.turn([b.bash_result(sid, "mean=21.4\n"),
            b.text("The statistics run gives a mean of 21.4, and Paris is sunny at 22 °C.")],
           "end_turn", container=True)


def deferred_result(streamed: bool) -> CassetteBuilder:
    cb = _cb("deferred_server_result", "the deferred result opens the next response",
             [S_HOW, S_OTHER, S_MIXED], streamed)
    c = Conversation(cb).user("Run stats.py and tell me the weather in Paris.")
    sid, tid = _first(cb, c)
    c.tool_results(b.tool_result(tid, '{"temperature_c": 22, "conditions": "sunny"}'))
    _last(c, sid)
    return cb


def reject_missing_tool() -> CassetteBuilder:
    cb = _cb("reject_resume_without_server_tool", "resuming without the waiting server tool in tools is "
             "refused", [S_MIXED, S_PENDING, protocol("1. Programmatic tool calling: Error texts and conditions")])
    c = Conversation(cb).user("Run stats.py and tell me the weather in Paris.")
    sid, tid = _first(cb, c)
    c.tool_results(b.tool_result(tid, '{"temperature_c": 22, "conditions": "sunny"}'))
    c.reject("server_tool_use.pending.same_tools", "", mutate=lambda body: body.update(tools=[GET_WEATHER]))
    _last(c, sid)
    return cb


def reject_text() -> CassetteBuilder:
    cb = _cb("reject_text_next_to_results", "text next to the client results while the server tool "
             "waits is refused", [S_MIXED, protocol("1. Programmatic tool calling: Error texts and conditions")])
    c = Conversation(cb).user("Run stats.py and tell me the weather in Paris.")
    sid, tid = _first(cb, c)
    c.user([b.tool_result(tid, '{"temperature_c": 22, "conditions": "sunny"}'), b.text("Thanks!")])
    c.reject("ptc.pending.only_tool_results", "")
    c.messages[-1]["content"] = [b.tool_result(tid, '{"temperature_c": 22, "conditions": "sunny"}')]
    _last(c, sid)
    return cb


S_THINKING = capture("llmanth__030", "llmanth__031", "llmanth__032")
SIGNATURE = ("EqQBCkYIBxgCKkB2vJ5iSv3pTzYfN0b1vKq0c8QWm8Qm2d0mQm4c0fWcXrQd3n9C1xg8u5aJwB1Kj0yM7mX"
             "mE8Q8lS0eO3mT1mKEgz4o9VgU2sR0dJYq8XUaDOqv1xQ2wq4nT9mC2iIwVbq5wzh4mJ0GkR8Yw==")


def thinking_client_tool(streamed: bool) -> CassetteBuilder:
    """Extended thinking before a client tool call: the thinking block (with its signature) goes
    back unchanged with the tool result; streamed, thinking_delta chunks then a signature_delta
    (PROTOCOL.md §6). A budget not below max_tokens is refused first (thinking rule)."""
    cb = _cb("thinking_client_tool", "extended thinking, then a client tool call; the thinking "
             "block goes back with the result", [S_THINKING, protocol("6. Streaming (SSE)")],
             streamed)
    c = Conversation(cb, max_tokens=4096,
                     extra_body={"thinking": {"type": "enabled", "budget_tokens": 2048}})
    c.user("Should I take an umbrella in Paris today?")
    c.reject("thinking.budget_below_max_tokens", "", mutate=lambda body: body.update(max_tokens=2048))
    tid = cb.ids.make("toolu")
    c.turn([b.thinking("The user wants to know about rain in Paris today. I should check the "
                       "current weather there with get_weather before answering.", SIGNATURE),
            b.text("Let me check the weather in Paris."),
            b.tool_use(tid, "get_weather", {"location": "Paris"})], "tool_use")
    c.tool_results(b.tool_result(tid, '{"temperature_c": 17, "conditions": "light rain"}'))
    c.turn([b.text("Yes: it is 17 °C with light rain in Paris, so take an umbrella.")], "end_turn")
    return cb


@family("mixed")
def build() -> Iterator[CassetteBuilder]:
    yield deferred_result(False)
    yield deferred_result(True)
    yield reject_missing_tool()
    yield reject_text()
    yield thinking_client_tool(False)
    yield thinking_client_tool(True)
