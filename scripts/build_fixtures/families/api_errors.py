"""API errors (PROTOCOL.md §5) and the stop reasons a Messages client must handle (§6): each
error status with its type and headers, the documented retries (429 with ``retry-after``, 500,
529), an ``error`` event in the middle of a stream, and end_turn's siblings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.sources import capture, protocol

from .. import blocks as b
from .. import sse
from ..core import API_ERRORS, CassetteBuilder, Conversation, family

MODEL = "claude-sonnet-4-6"
TOOLS = [{"type": "bash_20250124", "name": "bash"}]
S_BODY = protocol("5. Error responses: Body")
S_STATUS = protocol("5. Error responses: Status to type")
S_HEADERS = protocol("5. Error responses: Headers")
S_SSE = protocol("6. Streaming (SSE): Error event")
S_STOP = protocol("6. Streaming (SSE): Stop reasons")
S_BETA = protocol("5. Error responses: Bad beta name")

STATUS_NAMES = {400: "invalid_request", 401: "authentication", 403: "permission", 404: "not_found",
                413: "request_too_large", 429: "rate_limit", 500: "api_error", 529: "overloaded"}
RETRY_HEADERS: dict[int, dict[str, str]] = {
    429: {"retry-after": "2", "x-should-retry": "true"},
    500: {"x-should-retry": "true"},
    529: {"x-should-retry": "true"},
}


def _cb(scenario: str, title: str, sources: list, streamed: bool = False, model: str = MODEL,
        family_: str = "api_errors") -> tuple[CassetteBuilder, Conversation]:
    cb = CassetteBuilder(family_, "messages", scenario, title, sources, model=model, tools=TOOLS,
                         streamed=streamed)
    return cb, Conversation(cb, max_tokens=1024)


def _answer(c: Conversation) -> None:
    c.turn([b.text("Python 3.11 is the version in use.")], "end_turn")


def error_status(status: int) -> CassetteBuilder:
    name = STATUS_NAMES[status]
    retried = status in RETRY_HEADERS
    cb, c = _cb(f"http_{status}_{name}", f"HTTP {status} {API_ERRORS[status][0]}"
                + (", then the retry succeeds" if retried else ""), [S_BODY, S_STATUS, S_HEADERS])
    c.user("Which Python version do we use?")
    if status == 404:
        cb.model = "claude-nonexistent-model"
    cb.tick()
    message = f"model: {cb.model}" if status == 404 else None
    cb.add(c.request(), cb.error_response(status, message, headers=RETRY_HEADERS.get(status)))
    if retried:
        c.turn([b.text("Python 3.11 is the version in use.")], "end_turn",
               advance_seconds=float(RETRY_HEADERS[status].get("retry-after", "1")))
    return cb


def schema_400() -> CassetteBuilder:
    cb, c = _cb("http_400_request_schema", "HTTP 400 for a malformed request (max_tokens as a string), then "
                "the corrected request", [S_BODY, S_STATUS])
    c.user("Which Python version do we use?")
    c.reject("request.schema", "", mutate=lambda body: body.update(max_tokens="1024"))
    _answer(c)
    return cb


def unknown_beta() -> CassetteBuilder:
    cb, c = _cb("reject_unknown_beta", "an anthropic-beta value that names no beta", [S_BETA])
    c.user("Which Python version do we use?")
    c.reject("beta.header_known", "", headers={**c.headers(), "anthropic-beta": "invalid-beta-name"})
    _answer(c)
    return cb


def mid_stream_error() -> CassetteBuilder:
    cb, c = _cb("mid_stream_error", "an error event in the middle of a stream (after HTTP 200)",
                [S_SSE, protocol("6. Streaming (SSE): SDK parsing")], streamed=True)
    c.user("Write a long explanation of Python's GIL.")
    msg = c.message([b.text("The global interpreter lock (GIL) is a mutex that "),
                     b.text("unfinished")], "end_turn")
    events = sse.message_events(msg, seed=cb.stream_seed(), error_after_blocks=1,
                                error={"type": "overloaded_error", "message": "Overloaded"})
    cb.tick()
    cb.add(c.request(), {"status": 200, "headers": cb.response_headers(stream=True), "events": events})
    return cb


#: Why a refusal stopped, as the API says it (real_traffic vercel__072, llmanth__037: type,
#: category, explanation; ``recommended_model`` is left out, as in llmanth__037).
REFUSAL_DETAILS = {"type": "refusal", "category": "cyber",
                   "explanation": "This request triggered restrictions on violative cyber content "
                                  "and was blocked under Anthropic's Usage Policy."}


def stop_reason(reason: str) -> CassetteBuilder:
    cb, c = _cb(reason, f"stop_reason {reason}", [S_STOP, protocol("2. Code execution tool: pause_turn")
                                                  if reason == "pause_turn" else S_STOP],
                family_="messages")
    extra: dict[str, Any] = {}
    content: list[dict[str, Any]] = [b.text("Python 3.11 is the version")]
    if reason == "stop_sequence":
        extra = {"stop_sequences": ["END"]}
        content = [b.text("Python 3.11 is the version in use.\n")]
    elif reason == "refusal":
        content = []
    elif reason == "max_tokens":
        c.max_tokens = 8
    c.extra_body = extra
    c.user("Which Python version do we use? Finish with END.")
    msg = c.turn(content, reason, stop_details=REFUSAL_DETAILS if reason == "refusal" else None)
    if reason == "stop_sequence":
        msg["stop_sequence"] = "END"
        cb.exchanges[-1]["response"]["body"]["stop_sequence"] = "END"
    return cb


#: Requests the live API refused that the simulator's rules refuse too (issue 16): the refused
#: request, then the corrected one answered. (rule, scenario, title, source, mutation, betas)
LIVE_REFUSALS: tuple[tuple[str, str, str, Any, Any, str | None], ...] = (
    ("model.known", "reject_misspelled_model", "a misspelled model id is answered 404",
     capture("pydai__055", "pydai__056"), lambda body: body.update(model="claude-sonet-4-5"),
     None),
    ("model.known", "reject_unknown_model_name", "a model name the API does not serve (any "
     "spelling) is answered 404", capture("pydai__326"),
     lambda body: body.update(model="this-model-does-not-exist-12345"), None),
    ("model.not_retired", "reject_retired_model", "a retired model is answered 404 like an "
     "unknown one", protocol("3. Text editor tool", "I"),
     lambda body: body.update(model="claude-3-5-sonnet-latest"), None),
    ("container.param_is_string", "reject_container_object",
     "`container` sent as an object (without the skills beta)", capture("pydai__323", "pydai__324"),
     lambda body: body.update(container={"id": "container_011CWHPPTDTn1XufeRB9uHeH"}), None),
    ("effort.supported_level", "reject_unsupported_effort",
     "an effort level the model does not support", capture("pydai__368", "pydai__369"),
     lambda body: body.update(model="claude-opus-4-6", output_config={"effort": "xhigh"}), None),
    ("thinking.budget_below_max_tokens", "reject_thinking_budget",
     "`max_tokens` not above `thinking.budget_tokens`", capture("pydai__505", "pydai__506"),
     lambda body: body.update(thinking={"type": "enabled", "budget_tokens": 2048}), None),
    ("content.file_source_needs_files_beta", "reject_file_source_without_beta",
     "a document with a `file` source, without the Files API beta",
     capture("pydai__530", "pydai__531"),
     lambda body: body["messages"][-1].update(content=[
         {"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}},
         {"type": "text", "text": "Which Python version does this document name?"}]), None),
    # Closed sets and ranges (simulator/rules/fields.py), each worded as live answers quoted in
    # public reports show it (the module cites them).
    ("tool_choice.type_known", "reject_unknown_tool_choice_type",
     "a `tool_choice` type outside auto, any, tool and none (another API's `required`)",
     protocol("5. Error responses: Status to type", "I"),
     lambda body: body.update(tool_choice={"type": "required"}), None),
    ("messages.roles.known", "reject_unknown_role",
     "a message role the API does not know (another API's `developer`)",
     protocol("5. Error responses: Status to type", "3P"),
     lambda body: body["messages"].insert(0, {"role": "developer", "content": "Answer briefly."}),
     None),
    ("content.block_type_known", "reject_unknown_block_type",
     "a content block type the API does not know (another API's `image_url`)",
     protocol("5. Error responses: Status to type", "3P"),
     lambda body: body["messages"][-1].update(content=[
         {"type": "text", "text": "Which Python version does this screenshot show?"},
         {"type": "image_url", "image_url": {"url": "https://example.com/python.png"}}]), None),
    ("sampling.temperature_range", "reject_temperature_out_of_range", "`temperature` above 1",
     protocol("5. Error responses: Status to type", "I"),
     lambda body: body.update(temperature=1.2), None),
    ("sampling.top_p_range", "reject_top_p_out_of_range", "`top_p` above 1",
     protocol("5. Error responses: Status to type", "I"), lambda body: body.update(top_p=1.5),
     None),
    ("request.known_fields", "reject_unknown_field",
     "a top-level field the API does not know (another API's `response_format`)",
     protocol("5. Error responses: Status to type", "3P"),
     lambda body: body.update(response_format={"type": "json_object"}), None),
)


def live_refusal(rule: str, scenario: str, title: str, source: Any, mutate: Any,
                 beta: str | None) -> CassetteBuilder:
    cb, c = _cb(scenario, title, [source], family_="messages")
    c.beta = beta
    c.user("Which Python version do we use?")
    c.reject(rule, "", mutate=mutate)
    _answer(c)
    return cb


@family("api_errors")
def build() -> Iterator[CassetteBuilder]:
    for status in (401, 403, 404, 413, 429, 500, 529):
        yield error_status(status)
    yield schema_400()
    yield unknown_beta()
    yield mid_stream_error()
    for reason in ("max_tokens", "stop_sequence", "refusal", "model_context_window_exceeded"):
        yield stop_reason(reason)
    for refusal in LIVE_REFUSALS:
        yield live_refusal(*refusal)
