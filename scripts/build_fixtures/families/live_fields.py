"""Fields live answers carry that the other families do not show (issue 25): citations of
search results returned by a tool (``search_result_location``), ``context_management`` on a
message, the structured-output ``output_format`` parameter, and the computer use tools."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.sources import capture, protocol

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

KB = {"name": "knowledge_base", "description": "Searches the company knowledge base",
      "input_schema": {"type": "object", "properties": {"query": {
          "type": "string", "description": "What to look for"}}, "required": ["query"]}}
FACT = "The Ruby programming language was created by Yukihiro Matsumoto in 1993."


def search_result_citations() -> CassetteBuilder:
    """A tool returns ``search_result`` blocks with citations enabled; the answer cites them with
    ``search_result_location`` [3P: real_traffic rubyllm__023, rubyllm__024]."""
    cb = CassetteBuilder("messages", "custom", "search_result_citations",
                         "a tool's search results cited with search_result_location",
                         [capture("rubyllm__023", "rubyllm__024")],
                         model="claude-haiku-4-5-20251001", tools=[KB])
    c = Conversation(cb).user("Who created the Ruby programming language? Use the knowledge base.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "knowledge_base", {"query": "Who created Ruby programming language"})],
           "tool_use")
    c.tool_results(b.tool_result(tid, [{
        "type": "search_result", "source": "https://example.com/ruby-facts", "title": "Ruby Facts",
        "content": [{"type": "text", "text": FACT}], "citations": {"enabled": True}}]))
    c.turn([b.cited(FACT, {"type": "search_result_location", "cited_text": FACT,
                           "source": "https://example.com/ruby-facts", "title": "Ruby Facts",
                           "search_result_index": 0, "start_block_index": 0,
                           "end_block_index": 1})], "end_turn")
    return cb


def context_management() -> CassetteBuilder:
    """A request with context management edits: the answer reports the edits it applied
    (``context_management.applied_edits``, empty when nothing was cleared) [3P: real_traffic
    vercel__008]."""
    cb = CassetteBuilder("messages", "messages", "context_management_applied_edits",
                         "context management: the answer lists the edits applied",
                         [capture("vercel__007", "vercel__008")], model="claude-sonnet-4-5", tools=[])
    c = Conversation(cb, beta="context-management-2025-06-27", extra_body={
        "context_management": {"edits": [{"type": "clear_thinking_20251015",
                                          "keep": {"type": "thinking_turns", "value": 1}}]},
        "thinking": {"type": "enabled", "budget_tokens": 1024}})
    c.user("What is 2 + 2?")
    c.turn([b.thinking("Simple arithmetic: 4.", "EqQBCkYIBxgCKkB2x9c0ZmFrZXNpZ25hdHVyZQ=="),
            b.text("4")], "end_turn", extra={"context_management": {"applied_edits": []}})
    return cb


def output_format() -> CassetteBuilder:
    """Structured outputs: ``output_format`` with a JSON schema; the answer is JSON that
    validates against it [issue 25: 15 live 2xx requests; real_traffic pydai__233]."""
    cb = CassetteBuilder("messages", "messages", "output_format_json_schema",
                         "structured outputs: output_format with a JSON schema",
                         [capture("pydai__233")], model="claude-sonnet-4-5", tools=[])
    c = Conversation(cb, beta="structured-outputs-2025-11-13", extra_body={"output_format": {
        "type": "json_schema", "schema": {
            "type": "object", "additionalProperties": False, "required": ["city", "country"],
            "properties": {"city": {"type": "string"}, "country": {"type": "string"}}}}})
    c.user("What is the largest city in Japan?")
    c.turn([b.text('{"city": "Tokyo", "country": "Japan"}')], "end_turn")
    return cb


def computer(version: str, beta: str, model: str) -> CassetteBuilder:
    """A computer use tool: a screenshot requested, taken by the client and returned as an
    image (PROTOCOL.md §4: the version and its beta header)."""
    tool = {"type": version, "name": "computer", "display_width_px": 1024,
            "display_height_px": 768, **({"display_number": 1} if version == "computer_20250124"
                                         else {"enable_zoom": True})}
    cb = CassetteBuilder("computer", version, "screenshot",
                         f"{version}: a screenshot taken and returned",
                         [protocol("4. Bash tool: Versions")], model=model, tools=[tool])
    c = Conversation(cb, beta=beta)
    c.user("Take a screenshot and tell me what is on the screen.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "computer", {"action": "screenshot"})], "tool_use")
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==")
    c.tool_results(b.tool_result(tid, [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": png}}]))
    c.turn([b.text("The screen shows a single white pixel: the display is blank.")], "end_turn")
    return cb


@family("live_fields")
def build() -> Iterator[CassetteBuilder]:
    yield search_result_citations()
    yield context_management()
    yield output_format()
    yield computer("computer_20250124", "computer-use-2025-01-24", "claude-sonnet-4-5")
    yield computer("computer_20251124", "computer-use-2025-11-24", "claude-opus-4-7")
