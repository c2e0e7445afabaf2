"""web_search / web_fetch 20260209 with dynamic filtering: they need code_execution 20260120 or
later (seed 000 §"Versi alat", PROTOCOL.md §2 "Dynamic filtering")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.registry import WEB_ERROR_CODES_SOURCE, WEB_FETCH_ERROR_CODES, WEB_SEARCH_ERROR_CODES
from simulator.sources import SEED_CODE_EXECUTION, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

MODEL = "claude-sonnet-4-6"
CE = "code_execution_20260120"
S_VER = seed(SEED_CODE_EXECUTION, "Versi alat")
S_DF = protocol("2. Code execution tool: Dynamic filtering")
S_PRICE = seed(SEED_CODE_EXECUTION, "Penggunaan dan harga")
S_STREAM = seed(SEED_CODE_EXECUTION, "Streaming")
S_ENC = protocol("1. Programmatic tool calling: encrypted_code_execution_result", "S")

FETCH = {"type": "web_fetch_20260209", "name": "web_fetch"}
SEARCH = {"type": "web_search_20260209", "name": "web_search"}
PAGE = ("# Example Domain\n\nThis domain is for use in documentation examples without needing "
        "permission.")


def _usage(fetch: int = 0, search: int = 0) -> dict[str, Any]:
    return {"input_tokens": 7198, "output_tokens": 112, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "global", "service_tier": "standard",
            "server_tool_use": {"web_fetch_requests": fetch, "web_search_requests": search}}


def _fetch_turn(cb: CassetteBuilder, c: Conversation) -> None:
    sid, fid = cb.ids.make("srvtoolu"), cb.ids.make("srvtoolu")
    code = "result = await web_fetch({\"url\": \"https://example.com\"})\nprint(result['content']['title'])"
    caller = b.code_caller(sid)
    fetched = {"type": "web_fetch_tool_result", "tool_use_id": fid, "caller": caller, "content": {
        "type": "web_fetch_result", "url": "https://example.com", "retrieved_at": "2026-08-20T09:58:00Z",
        "content": {"type": "document", "title": "Example Domain",
                    "source": {"type": "text", "media_type": "text/plain", "data": PAGE}}}}
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code}),
            b.server_tool_use(fid, "web_fetch", {"url": "https://example.com"}, caller=caller),
            fetched, b.code_result(sid, "Example Domain\n"), b.text("**Example Domain**")],
           "end_turn", container=True, usage=_usage(fetch=1))


def fetch(streamed: bool, explicit_ce: bool) -> CassetteBuilder:
    tools = [FETCH, {"type": CE, "name": "code_execution"}] if explicit_ce else [FETCH]
    scen = "fetch_with_code_execution" if explicit_ce else "fetch_provisions_code_execution"
    title = ("web_fetch filtered by code_execution 20260120" if explicit_ce else
             "web_fetch alone: code execution is provisioned automatically")
    cb = CassetteBuilder("web", "web_fetch_20260209", scen, title,
                         [S_VER, S_DF, S_PRICE, *([S_STREAM] if streamed else [])], model=MODEL,
                         tools=tools, streamed=streamed)
    _fetch_turn(cb, Conversation(cb).user("Fetch https://example.com and reply with only the page title."))
    return cb


def search() -> CassetteBuilder:
    cb = CassetteBuilder("web", "web_search_20260209", "search_with_code_execution",
                         "web_search filtered by code_execution 20260120 (encrypted stdout)",
                         [S_VER, S_DF, S_ENC], model=MODEL,
                         tools=[SEARCH, {"type": CE, "name": "code_execution"}])
    c = Conversation(cb).user("What is the mass of the Sun? Reply with the number only.")
    sid, qid = cb.ids.make("srvtoolu"), cb.ids.make("srvtoolu")
    caller = b.code_caller(sid)
    results = {"type": "web_search_tool_result", "tool_use_id": qid, "caller": caller, "content": [
        {"type": "web_search_result", "url": "https://en.wikipedia.org/wiki/Sun", "title": "Sun - Wikipedia",
         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2MSDGJ1c3kgc2VhcmNo",
         "page_age": "2 days ago"}]}
    enc = {"type": "code_execution_tool_result", "tool_use_id": sid, "content": {
        "type": "encrypted_code_execution_result", "encrypted_stdout": "RW5jcnlwdGVkU3Rkb3V0RXhhbXBsZQ==",
        "stderr": "", "return_code": 0, "content": []}}
    c.turn([b.server_tool_use(sid, "code_execution",
                              {"code": "r = await web_search({\"query\": \"mass of the Sun kg\"})\nprint(r[0]['title'])"}),
            b.server_tool_use(qid, "web_search", {"query": "mass of the Sun kg"}, caller=caller),
            results, enc, b.text("1.989 × 10³⁰ kg")], "end_turn", container=True, usage=_usage(search=1))
    return cb


def reject_old_ce() -> CassetteBuilder:
    cb = CassetteBuilder("web", "web_fetch_20260209", "reject_with_code_execution_20250825",
                         "web_fetch 20260209 next to code_execution 20250825 is refused",
                         [S_VER, S_DF], model=MODEL,
                         tools=[FETCH, {"type": "code_execution_20250825", "name": "code_execution"}])
    c = Conversation(cb).user("Fetch https://example.com and reply with only the page title.")
    c.reject("tools.web_tools_need_code_execution_20260120", "")
    cb.tools = [FETCH, {"type": CE, "name": "code_execution"}]
    _fetch_turn(cb, c)
    return cb


def haiku_direct_only() -> CassetteBuilder:
    """On a model without programmatic calling the 20260209 web tools need allowed_callers
    ["direct"] (they default to the code-execution caller): refused without it, then called directly."""
    cb = CassetteBuilder("web", "web_fetch_20260209", "haiku_direct_only",
                         "web_fetch 20260209 on Claude Haiku 4.5: refused until allowed_callers is "
                         "[\"direct\"], then fetched directly", [S_DF, S_VER], model="claude-haiku-4-5-20251001",
                         tools=[FETCH])
    c = Conversation(cb).user("Fetch https://example.com and reply with only the page title.")
    c.reject("tools.model_compatibility", "")
    cb.tools = [{**FETCH, "allowed_callers": ["direct"]}]
    fid = cb.ids.make("srvtoolu")
    fetched = {"type": "web_fetch_tool_result", "tool_use_id": fid, "content": {
        "type": "web_fetch_result", "url": "https://example.com", "retrieved_at": "2026-08-20T09:58:00Z",
        "content": {"type": "document", "title": "Example Domain",
                    "source": {"type": "text", "media_type": "text/plain", "data": PAGE}}}}
    c.turn([b.server_tool_use(fid, "web_fetch", {"url": "https://example.com"}), fetched,
            b.text("**Example Domain**")], "end_turn", usage=_usage(fetch=1))
    return cb


def tool_error(tool: dict[str, Any], code: str) -> CassetteBuilder:
    """A web tool called from the filtering code fails: ``*_tool_result`` with an error content."""
    name = tool["name"]
    cb = CassetteBuilder("web", tool["type"], f"error_{code}", f"{name} result error {code}",
                         [WEB_ERROR_CODES_SOURCE, S_DF], model=MODEL,
                         tools=[tool, {"type": CE, "name": "code_execution"}])
    c = Conversation(cb).user("Fetch https://example.com and reply with only the page title."
                              if name == "web_fetch" else "What is the mass of the Sun?")
    sid, wid = cb.ids.make("srvtoolu"), cb.ids.make("srvtoolu")
    caller = b.code_caller(sid)
    arg = {"url": "https://example.com"} if name == "web_fetch" else {"query": "mass of the Sun kg"}
    err_type = "web_fetch_tool_result_error" if name == "web_fetch" else "web_search_tool_result_error"
    result = {"type": f"{name}_tool_result", "tool_use_id": wid, "caller": caller,
              "content": {"type": err_type, "error_code": code}}
    c.turn([b.server_tool_use(sid, "code_execution", {"code": f"r = await {name}({arg!r})\nprint(r)"}),
            b.server_tool_use(wid, name, arg, caller=caller), result,
            b.code_result(sid, f"{{'type': '{err_type}', 'error_code': '{code}'}}\n"),
            b.text(f"The {name.replace('_', ' ')} failed ({code}).")], "end_turn", container=True,
           usage=_usage(fetch=int(name == "web_fetch"), search=int(name == "web_search")),
           error_codes=[code])
    return cb


@family("web")
def build() -> Iterator[CassetteBuilder]:
    yield fetch(False, True)
    yield fetch(True, True)
    yield fetch(False, False)
    yield search()
    yield reject_old_ce()
    yield haiku_direct_only()
    for code in WEB_FETCH_ERROR_CODES:
        yield tool_error(FETCH, code)
    for code in WEB_SEARCH_ERROR_CODES:
        yield tool_error(SEARCH, code)
