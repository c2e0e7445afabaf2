"""Cassette builders: one :class:`CassetteBuilder` per scenario, one :class:`Conversation` per
Messages thread. Requests carry the full history; responses get fixed ids from a seeded counter,
fixed timestamps from a simulated clock, realistic envelopes (``msg_01…``, ``usage``,
``request-id``) and, for streamed variants, the SSE events of :mod:`.sse`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from simulator.cassette import CASSETTE_VERSION
from simulator.models import lookup
from simulator.sources import Source

from . import sse
from .ids import CLOCK_START, Clock, Ids, rfc3339, rfc3339_micro

JSON = dict[str, Any]

ANTHROPIC_VERSION = "2023-06-01"
#: Placeholder organisation id: recorded traffic carries one; never a real value.
ORGANIZATION_ID = "00000000-0000-4000-8000-000000000000"

#: HTTP status → (error type, message) for API errors (PROTOCOL.md §5).
API_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "max_tokens: Field required"),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "This request would exceed the rate limit for your organization. "
                              "Please reduce the prompt length or try again later."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


#: Models whose message ids take the newer ``msg_011C…`` form (live: every claude-opus-4-7
#: message, 39 of 98 claude-sonnet-4-6 ones; the older models of the corpus keep ``msg_01…``)
#: [3P: real_traffic vercel__096, pydai__252].
MSG_011C_MODELS = frozenset({"claude-sonnet-4-6", "claude-opus-4-7"})
#: Models that tag a call of a custom tool made directly with ``caller: {"type": "direct"}``
#: (live: 92 of 103 such tool_use blocks from claude-haiku-4-5, claude-sonnet-4-5,
#: claude-sonnet-4-6 and later; never on the built-in bash / text editor client tools, never
#: from claude-sonnet-4 or 3.x) [3P: real_traffic pydai__101, rubyllm__042, vercel__043].
DIRECT_CALLER_MODELS = frozenset({"claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929",
                                  "claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7"})
#: Models whose ``code_execution_result`` says ``abort_reason`` (null: the cell ran to its end;
#: every live claude-sonnet-4-6 one) [3P: real_traffic pydai__250, pydai__256, vercel__090].
#: Models that count thinking tokens in ``usage.output_tokens_details`` on every message (live:
#: claude-opus-4-7 and later, ``{"thinking_tokens": 0}`` without thinking); other models send it
#: with a thinking block only [3P: real_traffic llmanth__031, vercel__096, pydai__269].
THINKING_DETAILS_MODELS = frozenset({"claude-opus-4-7"})
ABORT_REASON_MODELS = frozenset({"claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7"})


def live_shapes(content: list[JSON], model: str | None, custom_tools: set[str]) -> list[JSON]:
    """``content`` as ``model`` sends it: ``caller`` on direct calls of custom tools,
    ``abort_reason`` on Python results (see :data:`DIRECT_CALLER_MODELS`,
    :data:`ABORT_REASON_MODELS`)."""
    out = copy.deepcopy(content)
    for block in out:
        if (block.get("type") == "tool_use" and "caller" not in block
                and block.get("name") in custom_tools and model in DIRECT_CALLER_MODELS):
            block["caller"] = {"type": "direct"}
        # A web tool called directly: its result says so too (26 web_search and 7 web_fetch
        # live results carry caller direct [3P: real_traffic, e.g. rubyllm__066, pydai__458]).
        if (block.get("type") in ("web_search_tool_result", "web_fetch_tool_result")
                and "caller" not in block and model in DIRECT_CALLER_MODELS):
            block["caller"] = {"type": "direct"}
        inner = block.get("content")
        if (block.get("type") == "code_execution_tool_result" and isinstance(inner, dict)
                and inner.get("type") == "code_execution_result" and model in ABORT_REASON_MODELS):
            inner.setdefault("abort_reason", None)
    return out


class CassetteBuilder:
    """Collects the exchanges of one scenario and renders the cassette JSON."""

    def __init__(self, family: str, tool_type: str, scenario: str, title: str,
                 sources: Iterable[Source], *, model: str | None, tools: list[JSON] | None = None,
                 streamed: bool = False) -> None:
        self.family, self.tool_type, self.scenario = family, tool_type, scenario
        self.id = f"{family}/{tool_type}/{scenario}{'_streamed' if streamed else ''}"
        self.title = title + (" (streamed)" if streamed else "")
        self.sources = list(sources)
        self.clock = Clock()
        self.exchanges: list[JSON] = []
        self.model = model
        self.tools = tools or []
        self.streamed = streamed
        #: Keyed by the scenario, not the variant: a streamed cassette carries the same ids as
        #: its plain sibling, so both hold the same conversation.
        #: The scenario, without the variant (``_streamed``): what both variants share.
        self.key = f"{family}/{tool_type}/{scenario}"
        self.ids = Ids(self.key)
        self.error_codes: set[str] = set()
        self.stop_reasons: set[str] = set()
        self.rules: set[str] = set()
        self.statuses: set[int] = set()
        self.extra_tags: dict[str, Any] = {}

    @property
    def model(self) -> str | None:
        return self._model

    @model.setter
    def model(self, value: str | None) -> None:
        """The cassette's model; one retired by :data:`CLOCK_START` moves the clock back to a day
        it was served (140 days before its retirement), so the recording stays true to its day."""
        self._model = value
        m = lookup(value) if value else None
        if m is not None and m.retired_on is not None and not self.exchanges \
                and m.retired_on <= CLOCK_START.date():
            self.clock = Clock(datetime.combine(m.retired_on - timedelta(days=140),
                                                CLOCK_START.timetz()))

    # --- envelopes -----------------------------------------------------------------------

    def response_headers(self, *, stream: bool = False, extra: dict[str, str] | None = None) -> JSON:
        h = {"content-type": "text/event-stream; charset=utf-8" if stream else "application/json",
             "request-id": self.ids.make("req"), "anthropic-organization-id": ORGANIZATION_ID}
        if extra:
            h.update(extra)
        return h

    def stream_seed(self) -> str:
        """Seed of the chunk lengths of the next exchange's stream (cassette id, exchange index)."""
        return f"{self.id}#{len(self.exchanges)}"

    def tick(self, seconds: float = 7.0) -> None:
        """Move the simulated clock before the next exchange (not before the first)."""
        if self.exchanges:
            self.clock.advance(seconds=seconds)

    def add(self, request: JSON, response: JSON, *, expect_rule: str | None = None) -> JSON:
        """Record an exchange at the current simulated time (call :meth:`tick` first)."""
        ex: JSON = {"request": request, "response": response}
        if expect_rule:
            ex["expect_rule"] = expect_rule
            self.rules.add(expect_rule)
        ex["at"] = rfc3339(self.clock.now)
        self.statuses.add(int(response["status"]))
        self.exchanges.append(ex)
        return ex

    def error_response(self, status: int, message: str | None = None, *,
                       error_type: str | None = None, headers: dict[str, str] | None = None) -> JSON:
        etype, default = API_ERRORS.get(status, ("invalid_request_error", ""))
        h = self.response_headers(extra=headers)
        body = {"type": "error", "error": {"type": error_type or etype, "message": message or default},
                "request_id": h["request-id"]}
        return {"status": status, "headers": h, "body": body}

    def build(self) -> JSON:
        data: JSON = {
            "version": CASSETTE_VERSION, "id": self.id, "title": self.title,
            "source": [s.to_json() for s in self.sources], "model": self.model,
            "tools": copy.deepcopy(self.tools), "streamed": self.streamed,
            "clock_start": rfc3339(self.clock.start),
            "tags": {"family": self.family, "tool_type": self.tool_type, "scenario": self.scenario,
                     "error_codes": sorted(self.error_codes), "stop_reasons": sorted(self.stop_reasons),
                     "rules": sorted(self.rules), "statuses": sorted(self.statuses),
                     **self.extra_tags},
            "exchanges": self.exchanges,
        }
        return data


class Conversation:
    """A Messages API thread: every request carries the whole history and the same tools."""

    def __init__(self, cb: CassetteBuilder, *, max_tokens: int = 4096, system: str | None = None,
                 beta: str | None = None, reuse_container: bool = True,
                 extra_body: JSON | None = None) -> None:
        self.cb = cb
        self.messages: list[JSON] = []
        self.max_tokens = max_tokens
        self.system = system
        self.beta = beta
        self.reuse_container = reuse_container
        self.extra_body = extra_body or {}
        self.container_id: str | None = None
        self.container_created: str | None = None
        self.send_container: str | None = None

    # --- requests ------------------------------------------------------------------------

    def user(self, content: Any) -> Conversation:
        self.messages.append({"role": "user", "content": copy.deepcopy(content)})
        return self

    def headers(self) -> JSON:
        h = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
        if self.beta:
            h["anthropic-beta"] = self.beta
        return h

    def body(self) -> JSON:
        b: JSON = {"model": self.cb.model, "max_tokens": self.max_tokens,
                   "messages": copy.deepcopy(self.messages)}
        if self.system:
            b["system"] = self.system
        if self.cb.tools:
            b["tools"] = copy.deepcopy(self.cb.tools)
        if self.send_container:
            b["container"] = self.send_container
        if self.cb.streamed:
            b["stream"] = True
        b.update(copy.deepcopy(self.extra_body))
        return b

    def request(self, body: JSON | None = None, headers: JSON | None = None) -> JSON:
        return {"method": "POST", "path": "/v1/messages",
                "headers": headers if headers is not None else self.headers(),
                "query": {"beta": "true"} if self.beta else {},
                "body": body if body is not None else self.body()}

    # --- responses -----------------------------------------------------------------------

    def usage(self, content: list[JSON], server_tools: bool) -> JSON:
        hist = len(json.dumps(self.messages)) + len(json.dumps(self.cb.tools))
        u: JSON = {"input_tokens": 380 + hist // 4, "output_tokens": 12 + len(json.dumps(content)) // 5,
                   "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                   "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
                   "inference_geo": "global", "service_tier": "standard"}
        if server_tools:
            u["server_tool_use"] = {"web_fetch_requests": 0, "web_search_requests": 0}
        thinking = sum(len(str(b.get("thinking", ""))) // 4 for b in content
                       if b.get("type") == "thinking")
        if thinking or self.cb.model in THINKING_DETAILS_MODELS:
            u["output_tokens_details"] = {"thinking_tokens": thinking}
        return u

    def new_container(self) -> str:
        self.container_id = self.cb.ids.make("container")
        self.container_created = rfc3339(self.cb.clock.now)
        return self.container_id

    def message(self, content: list[JSON], stop_reason: str, *, container: bool = False,
                usage: JSON | None = None, stop_details: JSON | None = None) -> JSON:
        """The response message, shaped as the model sends it (:func:`live_shapes`; the
        history keeps ``content`` as most clients send it back: without ``caller`` on direct
        calls, 656 of 663 live tool_use blocks sent back)."""
        custom = {str(t.get("name")) for t in self.cb.tools if t.get("type") in (None, "custom")}
        kind = "msg_011C" if self.cb.model in MSG_011C_MODELS else "msg"
        msg: JSON = {"id": self.cb.ids.make(kind), "type": "message", "role": "assistant",
                     "model": self.cb.model,
                     "content": live_shapes(content, self.cb.model, custom),
                     "stop_reason": stop_reason, "stop_sequence": None,
                     "stop_details": copy.deepcopy(stop_details),
                     "usage": usage or self.usage(content, server_tools=container)}
        if container:
            cid = self.container_id or self.new_container()
            expires = self.cb.clock.now + timedelta(minutes=5)
            msg["container"] = {"id": cid, "expires_at": rfc3339_micro(expires, f"{cid}@{expires}")}
        return msg

    def turn(self, content: list[JSON], stop_reason: str, *, container: bool = False,
             usage: JSON | None = None, error_codes: Iterable[str] = (),
             advance_seconds: float = 7.0, stop_details: JSON | None = None,
             extra: JSON | None = None) -> JSON:
        """One request (the history so far) and its response; the reply joins the history.
        ``extra``: more message fields (``context_management``)."""
        request = self.request()
        self.cb.tick(advance_seconds)
        msg = self.message(content, stop_reason, container=container, usage=usage,
                           stop_details=stop_details)
        msg.update(copy.deepcopy(extra or {}))
        if self.cb.streamed:
            response = {"status": 200, "headers": self.cb.response_headers(stream=True),
                        "events": sse.message_events(msg, seed=self.cb.stream_seed())}
        else:
            response = {"status": 200, "headers": self.cb.response_headers(), "body": msg}
        self.cb.add(request, response)
        self.cb.stop_reasons.add(stop_reason)
        self.cb.error_codes.update(error_codes)
        self.messages.append({"role": "assistant", "content": copy.deepcopy(content)})
        if container and self.reuse_container:
            self.send_container = self.container_id
        return msg

    def reject(self, rule: str, message: str, *, mutate: Callable[[JSON], None] | None = None,
               headers: JSON | None = None) -> JSON:
        """A request that breaks ``rule``; the recorded response is that rule's 400."""
        body = self.body()
        if mutate:
            mutate(body)
        self.cb.tick()
        return self.cb.add(self.request(body, headers), self.cb.error_response(400, message),
                           expect_rule=rule)

    def tool_results(self, *results: JSON) -> Conversation:
        return self.user(list(results))


# --- scenario registry -----------------------------------------------------------------------

Builder = Callable[[], Iterator[CassetteBuilder]]
FAMILIES: dict[str, Builder] = {}


def family(name: str) -> Callable[[Builder], Builder]:
    """Register the generator of one family's cassettes; a duplicate name fails at import."""
    def deco(fn: Builder) -> Builder:
        if name in FAMILIES:
            raise ValueError(f"fixture family {name!r} registered twice")
        FAMILIES[name] = fn
        return fn
    return deco
