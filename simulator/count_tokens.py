"""``POST /v1/messages/count_tokens`` and the token estimate it (and the context-window rule) use.

The simulator has no tokenizer, so the count is an **estimate** of what the model reads, computed
from the request as sent (``system``, ``messages``, ``tools``):

- text the model reads (message text, tool inputs as JSON, tool results, the system prompt, each
  custom tool's definition as JSON) adds its characters, divided by :data:`CHARS_PER_TOKEN` (4,
  the usual rule of thumb for English; custom tool definitions :data:`TOOL_CHARS_PER_TOKEN`, 3)
  and rounded up; the JSON structure of the request (its
  keys, ``type`` tags, ids, signatures) is not read by the model and adds nothing;
- each message adds :data:`PER_MESSAGE` tokens (its turn marker) and the prompt
  :data:`BASE_TOKENS`; each tool call and tool result :data:`CALL_TOKENS` (the markup the model
  reads around them);
- an image block adds its documented cost, ``width × height / 750`` tokens after the API's
  scaling, read from its bytes (:mod:`simulator.image_tokens`), or :data:`IMAGE_TOKENS` (the
  documented ceiling, about 1,600 tokens) when its size cannot be read; a base64 PDF :data:`PDF_PAGE_TOKENS` a page (each page is
  read as text and as an image: 1,500 to 3,000 tokens a page, the PDF support docs; the pages
  counted in the file), another base64 document one token per :data:`DOCUMENT_BYTES_PER_TOKEN`
  characters of its data;
- thinking blocks of earlier turns add nothing: the API strips them from the context window
  ("previous thinking blocks are automatically stripped from the context window calculation",
  the context-windows docs); only the thinking of the turn being continued (the last assistant
  turn, answered with tool results) is read;
- a request that asks for thinking adds :data:`THINKING_SYSTEM_PROMPT`, one with
  ``output_format`` :data:`OUTPUT_FORMAT_TOKENS` (the instructions the API adds);
- a request with a document or search result whose citations are enabled adds :data:`CITATIONS_TOKENS` once (the
  instructions for citing: live counts of one short cited document are 524 (pydai__359/361,
  Sonnet 4.5) and 588 (rubyllm__019/025, Haiku 4.5) tokens above the estimate without them);
- a request with ``tools`` adds the documented tool-use system prompt of its model
  (:func:`tool_system_prompt`: the tool-use pricing table of the docs, :data:`TOOL_SYSTEM_PROMPTS`;
  346 tokens with ``tool_choice`` auto/none and 313 with any/tool for current models), and each client built-in tool its definition cost (:data:`BUILTIN_TOOL_TOKENS`:
  bash 245 and text editor 700 documented; memory measured live).

Measured against live counts (``tests/test_count_tokens_live.py``): the docs' two examples (14 and
403 tokens), real_traffic pydai__327/329 (1,581 and 641): every estimate within 25 %; and against
the live ``usage`` of answered Messages requests without server tools (``tooluse fidelity``). An earlier
estimate counted the request's JSON keys as text and was up to 2x high on small requests (issue
25: 67 for a live 36, 20 for 11).

It is neither the API's count nor a bound on it; it is stable (the same request always gets the
same number) and grows with the prompt. The answer's shape is the API's:
``{"input_tokens": N}`` (SDK ``MessageTokensCount``). A model the API does not serve
(simulator.models; any spelling) is answered as the API does (real_traffic ``pydai__325/326``):
404 ``not_found_error``, ``model: <id>``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import api_error, invalid_request
from .http import SimRequest, SimResponse, json_headers
from .image_tokens import MAX_IMAGE_TOKENS, source_tokens
from .json_body import NOT_AN_OBJECT, lone_surrogate, not_valid_json
from .json_body import PREFIX as JSON_PREFIX
from .models import is_model_id

CHARS_PER_TOKEN = 4
#: An image whose size cannot be read from the request (the documented ceiling).
IMAGE_TOKENS = MAX_IMAGE_TOKENS
DOCUMENT_BYTES_PER_TOKEN = 64
#: Custom tool definitions are JSON, denser in tokens than prose: about 3 characters a token
#: [3P: real_traffic, answered Messages requests with custom tools only and no server tools, in
#: six projects: with 4 those with one tool and one message sat at 0.72-0.74 of the live count
#: (pysdk__081, rubyllm__039, llmanth__020, tssdk__025, pydai__061 ...); with 3, 113 of 131
#: such requests are within 25 % (101 with 4) and the docs' tool example stays within (449 for
#: 403)].
TOOL_CHARS_PER_TOKEN = 3
#: A PDF page: the middle of the documented 1,500-3,000 (text and the page's image).
PDF_PAGE_TOKENS = 2250
#: Citation instructions, once a request has a citations-enabled document [3P: real_traffic
#: pydai__359/361 524 and rubyllm__019/025 588 above the estimate without them: about 560].
CITATIONS_TOKENS = 560
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
#: The prompt's own tokens, each message's turn marker, each tool call's and result's markup
#: [I: fitted to the docs' count_tokens examples and real_traffic pydai__329, within 25 %].
BASE_TOKENS = 3
PER_MESSAGE = 3
CALL_TOKENS = 40
TOOL_SYSTEM_PROMPT = {"auto": 346, "none": 346, "any": 313, "tool": 313}
#: The tool-use system prompt by model (the first prefix of the model id that matches), as
#: (auto/none, any/tool) [D: the tool-use pricing table, "Tool use system prompt token count":
#: Claude 3 Opus 530/281, Claude 3 Sonnet 159/235, Claude 3 Haiku and Haiku 3.5 264/340, every
#: later model 346/313]. Claude Haiku 4.5 is measured [3P: real_traffic, 37 answered requests
#: with custom tools only: the live count less the rest of the estimate has a median of 480 with
#: tool_choice auto, against 279-313 for Sonnet 4 and 207-260 for Haiku 3.5, which fit the table;
#: with 346 its one-tool requests sat at 0.73 of live]; its any/tool keeps the table's 33 less.
TOOL_SYSTEM_PROMPTS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("claude-3-opus", (530, 281)),
    ("claude-3-sonnet", (159, 235)),
    ("claude-3-haiku", (264, 340)),
    ("claude-3-5-haiku", (264, 340)),
    ("claude-haiku-4-5", (480, 447)),
)
#: Thinking's own instructions [3P: real_traffic llmanth__036, adaptive thinking and one short
#: message: 97 live, 43 estimated without them; with a custom tool, Sonnet 4.5 and Haiku 4.5
#: (pydai__005/007, llmanth__030/032) 30-100 above their tool-only twins].
THINKING_SYSTEM_PROMPT = 54
#: Structured outputs' instructions (``output_format``): [3P: issue 40's fresh captures, live 38
#: for a request estimated at 10 without them].
OUTPUT_FORMAT_TOKENS = 28
_THINKING = frozenset({"thinking", "redacted_thinking"})
#: Built-in client tools' definition cost: bash 245, text editor 700 (the tools' docs); memory
#: 1,225 [3P: real_traffic pydai__327/328, 1,581 live for one short message with it].
BUILTIN_TOOL_TOKENS = {"bash": 245, "text_editor": 700, "memory": 1225}
#: Keys whose values the model does not read (tags, ids, signatures, cache settings).
_UNREAD = frozenset({"type", "id", "tool_use_id", "signature", "cache_control", "media_type"})
_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use", "tool_result",
                    "mcp_tool_result"})


def _chars(value: Any) -> int:
    """Characters of ``value`` the model reads, in characters (iterative: no recursion limit);
    images, documents and tool-call markup counted in their token cost times 4."""
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += len(node)
        elif isinstance(node, dict):
            kind = node.get("type")
            src = node.get("source")
            if kind == "image" and isinstance(src, dict):
                total += source_tokens(src) * CHARS_PER_TOKEN
                continue
            if kind in _THINKING:  # earlier turns' are dropped; the current turn's: _current
                continue
            if kind == "document" and isinstance(src, dict) and src.get("type") == "base64":
                data = src.get("data")
                pages = pdf_pages(data) if src.get("media_type") == "application/pdf" else None
                if pages is not None:
                    total += pages * PDF_PAGE_TOKENS * CHARS_PER_TOKEN
                    continue
                size = len(data) if isinstance(data, str) else 0
                total += math.ceil(size / DOCUMENT_BYTES_PER_TOKEN) * CHARS_PER_TOKEN
                continue
            if kind in _CALLS:
                total += CALL_TOKENS * CHARS_PER_TOKEN
            for k, v in node.items():
                if k in _UNREAD:
                    continue
                if k == "input" and isinstance(v, dict | list):
                    total += len(json.dumps(v, ensure_ascii=False))  # read as JSON
                    continue
                stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, bool):
            total += 4
        elif isinstance(node, int | float):
            total += len(str(node))
    return total


def pdf_pages(data: Any) -> int | None:
    """The pages of a base64 PDF (page objects in the file, at least one), or None when ``data``
    is not a base64 PDF."""
    if not isinstance(data, str):
        return None
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, binascii.Error):
        return None
    if not raw.startswith(b"%PDF"):
        return None
    return max(1, len(_PDF_PAGE.findall(raw)))


def cites_documents(message: Any) -> bool:
    """Whether ``message`` holds a document or a search result (top level or in a tool result)
    with citations enabled [3P: real_traffic rubyllm__023, a cited search result in a tool
    result: 1,253 live, 594 estimated without the citation instructions]."""
    content = message.get("content") if isinstance(message, dict) else None
    stack = list(content) if isinstance(content, list) else []
    while stack:
        block = stack.pop()
        if not isinstance(block, dict):
            continue
        cit = block.get("citations")
        if block.get("type") in ("document", "search_result") and isinstance(cit, dict) \
                and cit.get("enabled") is True:
            return True
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            stack.extend(block["content"])
    return False


def message_chars(message: Any) -> int:
    """What one message adds to the estimate, in characters (its turn marker included; a pure
    function of the message: callers may keep it with the message's cached facts)."""
    return PER_MESSAGE * CHARS_PER_TOKEN + _chars(message)


def _current_thinking_chars(messages: list[Any]) -> int:
    """Characters of the thinking the model still reads: that of the last assistant turn when the
    request continues it (it is the last message, or the user answers it with tool results; "the
    extended thinking block must be returned with the corresponding tool results", the
    context-windows docs). Every other turn's thinking is stripped."""
    turns = [m for m in messages[-2:] if isinstance(m, dict)]
    if not turns:
        return 0
    last = turns[-1]
    if last.get("role") == "assistant":
        current = last
    elif len(turns) == 2 and turns[0].get("role") == "assistant" and _has_tool_result(last):
        current = turns[0]
    else:
        return 0
    content = current.get("content")
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") in _THINKING] \
        if isinstance(content, list) else []
    return sum(len(str(b.get("thinking") or b.get("data") or "")) for b in blocks)


def _has_tool_result(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def tool_system_prompt(model: Any, tool_choice: Any) -> int:
    """The tool-use system prompt's tokens for ``model`` and ``tool_choice`` (a dict or None)."""
    kind = tool_choice.get("type") if isinstance(tool_choice, dict) else "auto"
    forced = kind in ("any", "tool")
    name = str(model or "")
    for prefix, (auto, anyof) in TOOL_SYSTEM_PROMPTS:
        if name.startswith(prefix):
            return anyof if forced else auto
    return TOOL_SYSTEM_PROMPT["any" if forced else "auto"]


def _tools_chars(tools: list[Any]) -> tuple[int, int]:
    """(characters of the custom tools' definitions as JSON, tokens of built-in tools)."""
    from .registry import TOOLS
    chars, builtin = 0, 0
    for t in tools:
        if not isinstance(t, dict):
            continue
        kind = t.get("type")
        if kind not in (None, "custom"):
            # A built-in tool (its family: the registry's, else the type without its date).
            tv = TOOLS.get(str(kind))
            family = tv.family if tv is not None else str(kind).rsplit("_", 1)[0]
            builtin += BUILTIN_TOOL_TOKENS.get(family, 0)
            continue
        seen = {k: t[k] for k in ("name", "description", "input_schema") if k in t}
        chars += len(json.dumps(seen, ensure_ascii=False))
    return chars, builtin


def estimate_tokens(body: Mapping[str, Any], *, messages_chars: int | None = None,
                    citations: bool | None = None) -> int:
    """The simulator's estimate of a request's input tokens (see the module docstring);
    ``messages_chars``: the sum of :func:`message_chars` over ``messages``, and ``citations``:
    whether :func:`cites_documents` holds for one of them, when known."""
    msgs = body.get("messages")
    if messages_chars is None:
        messages_chars = sum(message_chars(m) for m in msgs) if isinstance(msgs, list) else 0
    if citations is None:
        citations = isinstance(msgs, list) and any(cites_documents(m) for m in msgs)
    chars = messages_chars + (_chars(body["system"]) if "system" in body else 0)
    if isinstance(msgs, list):
        chars += _current_thinking_chars(msgs)
    tools = body.get("tools")
    extra = BASE_TOKENS + (CITATIONS_TOKENS if citations else 0)
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        extra += THINKING_SYSTEM_PROMPT
    if isinstance(body.get("output_format"), dict) or isinstance(
            (body.get("output_config") or {}).get("format") if isinstance(
                body.get("output_config"), dict) else None, dict):
        extra += OUTPUT_FORMAT_TOKENS
    if isinstance(tools, list) and tools:
        tool_chars, builtin = _tools_chars(tools)
        chars += math.ceil(tool_chars * CHARS_PER_TOKEN / TOOL_CHARS_PER_TOKEN)
        extra += tool_system_prompt(body.get("model"), body.get("tool_choice")) + builtin
    return extra + math.ceil(chars / CHARS_PER_TOKEN)


def count_tokens_response(body: Any, *, request_id: str | None = None,
                          models: Iterable[str] = ()) -> SimResponse:
    """The answer to a ``count_tokens`` request body (errors carry ``request_id`` when given)."""
    rid = request_id
    if not isinstance(body, dict):
        return invalid_request(NOT_AN_OBJECT, request_id=rid)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return invalid_request("model: Field required", request_id=rid)  # [I] as pydantic says
    if not isinstance(body.get("messages"), list):
        return invalid_request("messages: Field required", request_id=rid)
    if not is_model_id(model, models):
        return api_error(404, "not_found_error", f"model: {model}", request_id=rid)
    return SimResponse(200, headers=json_headers(), body={"input_tokens": estimate_tokens(body)})


def handle_count_tokens(request: SimRequest, *, request_id: str | None = None,
                        models: Iterable[str] = ()) -> SimResponse:
    """A :data:`~simulator.http.Handler` for ``/v1/messages/count_tokens`` (the engine passes its
    seeded ``request_id``)."""
    if request.method != "POST":
        return api_error(405, "invalid_request_error", f"Method `{request.method}` is not allowed "
                         "on /v1/messages/count_tokens; send the request with POST.",
                         headers={"allow": "POST"}, request_id=request_id)
    lone = lone_surrogate(request.body)
    if lone is not None:
        return invalid_request(f"{JSON_PREFIX}: {lone}", request_id=request_id)
    try:
        body = request.json()
    except RecursionError:
        return invalid_request(f"{JSON_PREFIX}: nested too deeply", request_id=request_id)  # [I]
    except (ValueError, UnicodeDecodeError) as e:
        return invalid_request(not_valid_json(e), request_id=request_id)
    return count_tokens_response(body, request_id=request_id, models=models)


__all__ = ["BASE_TOKENS", "BUILTIN_TOOL_TOKENS", "CALL_TOKENS", "CHARS_PER_TOKEN", "CITATIONS_TOKENS",
           "IMAGE_TOKENS", "OUTPUT_FORMAT_TOKENS", "PDF_PAGE_TOKENS", "PER_MESSAGE",
           "THINKING_SYSTEM_PROMPT", "TOOL_CHARS_PER_TOKEN", "TOOL_SYSTEM_PROMPT",
           "TOOL_SYSTEM_PROMPTS", "cites_documents", "count_tokens_response", "estimate_tokens",
           "handle_count_tokens", "message_chars", "pdf_pages", "tool_system_prompt"]
