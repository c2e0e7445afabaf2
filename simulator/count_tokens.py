"""``POST /v1/messages/count_tokens`` and the token estimate it (and the context-window rule) use.

The simulator has no tokenizer, so the count is an **estimate**, computed from the request as
sent (``system``, ``messages``, ``tools``, ``tool_choice``):

- text: every string of those fields (keys included, so tool schemas count) adds its length in
  characters; numbers and booleans their printed length; the total is divided by
  :data:`CHARS_PER_TOKEN` (4, the usual rule of thumb for English) and rounded up;
- an image block adds :data:`IMAGE_TOKENS` (the documented cost of a full-size image, about
  1,600 tokens) whatever its bytes; a base64 document adds one token per
  :data:`DOCUMENT_BYTES_PER_TOKEN` characters of its data, not its characters;
- a request with ``tools`` adds the documented tool-use system prompt (:data:`TOOL_SYSTEM_PROMPT`:
  346 tokens with ``tool_choice`` auto/none, 313 with any/tool, the tool-use pricing table of
  the docs), and each client built-in tool its documented definition cost
  (:data:`BUILTIN_TOOL_TOKENS`: bash 245, text editor 700); other built-in tools add nothing
  (their cost is not documented).

Measured against live counts (real_traffic pydai__327/329: 1,581 and 641 tokens) the estimate is
366 and 424: low where a built-in tool's undocumented prompt dominates (memory).

It is neither the API's count nor a bound on it; it is stable (the same request always gets the
same number) and grows with the prompt. The answer's shape is the API's:
``{"input_tokens": N}`` (SDK ``MessageTokensCount``). A model the API does not serve (simulator.models; any spelling) is answered as the API does
(real_traffic ``pydai__325/326``): 404 ``not_found_error``, ``model: <id>``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import api_error, invalid_request
from .http import SimRequest, SimResponse, json_headers
from .models import is_model_id

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1600
DOCUMENT_BYTES_PER_TOKEN = 64
COUNTED_FIELDS = ("system", "messages", "tools", "tool_choice")
TOOL_SYSTEM_PROMPT = {"auto": 346, "none": 346, "any": 313, "tool": 313}
BUILTIN_TOOL_TOKENS = {"bash": 245, "text_editor": 700}


def _chars(value: Any) -> int:
    """Characters of ``value`` as the estimate counts them (iterative: no recursion limit)."""
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
                total += IMAGE_TOKENS * CHARS_PER_TOKEN
                continue
            if kind == "document" and isinstance(src, dict) and src.get("type") == "base64":
                data = src.get("data")
                size = len(data) if isinstance(data, str) else 0
                total += math.ceil(size / DOCUMENT_BYTES_PER_TOKEN) * CHARS_PER_TOKEN
                continue
            for k, v in node.items():
                total += len(k)
                stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, bool) or node is None:
            total += 4
        elif isinstance(node, int | float):
            total += len(str(node))
    return total


def message_chars(message: Any) -> int:
    """What one message adds to the estimate, in characters (a pure function of the message:
    callers may keep it with the message's cached facts)."""
    return _chars(message)


def estimate_tokens(body: Mapping[str, Any], *, messages_chars: int | None = None) -> int:
    """The simulator's estimate of a request's input tokens (see the module docstring);
    ``messages_chars``: the sum of :func:`message_chars` over ``messages``, when known."""
    if messages_chars is None:
        chars = sum(_chars(body[f]) for f in COUNTED_FIELDS if f in body)
    else:
        chars = messages_chars + sum(_chars(body[f]) for f in COUNTED_FIELDS
                                     if f in body and f != "messages")
    tokens = math.ceil(chars / CHARS_PER_TOKEN)
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        from .registry import TOOLS
        choice = body.get("tool_choice")
        kind = choice.get("type") if isinstance(choice, dict) else "auto"
        tokens += TOOL_SYSTEM_PROMPT.get(str(kind), TOOL_SYSTEM_PROMPT["auto"])
        for t in tools:
            tv = TOOLS.get(str(t.get("type"))) if isinstance(t, dict) else None
            if tv is not None:
                tokens += BUILTIN_TOOL_TOKENS.get(tv.family, 0)
    return tokens


def count_tokens_response(body: Any, *, request_id: str | None = None,
                          models: Iterable[str] = ()) -> SimResponse:
    """The answer to a ``count_tokens`` request body (errors carry ``request_id`` when given)."""
    rid = request_id
    if not isinstance(body, dict):
        return invalid_request(f"The request body must be a JSON object, got {type(body).__name__}.",
                               request_id=rid)
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
    try:
        body = request.json()
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        return invalid_request(f"There was an error parsing the body of your request: {e}. The "
                               "body must be a JSON object.", request_id=request_id)
    return count_tokens_response(body, request_id=request_id, models=models)


__all__ = ["CHARS_PER_TOKEN", "IMAGE_TOKENS", "count_tokens_response", "estimate_tokens",
           "handle_count_tokens", "message_chars"]
