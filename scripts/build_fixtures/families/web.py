"""web_search / web_fetch 20260209 with dynamic filtering: they need code_execution 20260120 or
later (seed 000 §"Versi alat", PROTOCOL.md §2 "Dynamic filtering")."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import Any

from simulator.registry import WEB_ERROR_CODES_SOURCE, WEB_FETCH_ERROR_CODES, WEB_SEARCH_ERROR_CODES
from simulator.sources import SEED_CODE_EXECUTION, capture, protocol, seed

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


SEARCH_DIRECT = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
S_CITED = capture("pydai__481", "vercel__096", "vercel__099")
S_CITATIONS = protocol("6. Streaming (SSE)")
WEATHER_PAGES = (
    ("https://www.accuweather.com/en/us/san-francisco/94103/weather-forecast/347629",
     "San Francisco, CA Weather Forecast | AccuWeather", "3 hours ago"),
    ("https://www.wunderground.com/weather/us/ca/san-francisco",
     "San Francisco, CA Weather Conditions | Weather Underground", "1 day ago"),
)


def _opaque(key: str, length: int) -> str:
    """A deterministic stand-in for the API's encrypted fields (base64, as they are)."""
    raw = b"".join(hashlib.sha256(f"{key}#{i}".encode()).digest() for i in range(length // 40 + 1))
    return "Eq" + base64.b64encode(raw).decode()[:length - 2]


def _location(page: tuple[str, str, str], cited_text: str, key: str) -> dict[str, Any]:
    url, title, _ = page
    return {"type": "web_search_result_location", "url": url, "title": title,
            "encrypted_index": _opaque(key, 140), "cited_text": cited_text}


def search_cited(streamed: bool) -> CassetteBuilder:
    """web_search 20250305 called directly (no code execution): the results, then an answer
    whose cited claims are text blocks with ``web_search_result_location`` citations; a second
    turn sends the search and the cited answer back in the history."""
    cb = CassetteBuilder("web", "web_search_20250305", "search_cited",
                         "web_search 20250305: an answer citing the search results, sent back "
                         "in the next turn", [S_CITED, *([S_CITATIONS] if streamed else [])],
                         model="claude-sonnet-4-5-20250929", tools=[SEARCH_DIRECT],
                         streamed=streamed)
    c = Conversation(cb).user("What is the weather in San Francisco today?")
    qid = cb.ids.make("srvtoolu")
    results = {"type": "web_search_tool_result", "tool_use_id": qid, "content": [
        {"type": "web_search_result", "url": url, "title": title, "page_age": age,
         "encrypted_content": _opaque(f"{cb.key}{url}", 400)} for url, title, age in WEATHER_PAGES]}
    first, second = WEATHER_PAGES
    c.turn([b.text("I'll search for the current weather in San Francisco."),
            b.server_tool_use(qid, "web_search", {"query": "San Francisco weather today"}),
            results,
            b.text("Based on the search results, here's the weather in San Francisco today:\n\n- "),
            b.cited("Temperature: 66°F with clear skies",
                    _location(first, "Current Weather 66°F Clear. RealFeel® 68°", "q1")),
            b.text("\n- "),
            b.cited("Winds W at 10 to 20 mph",
                    _location(second, "Winds W at 10 to 20 mph. ", "q2")),
            b.text("\n\nA mild, clear day overall.")], "end_turn",
           usage=_usage(search=1))
    c.user("Should I take a jacket tonight?")
    c.turn([b.text("Yes: with a west wind of 10 to 20 mph the evening will feel cool, so a light "
                   "jacket is a good idea.")], "end_turn")
    return cb


FETCH_DIRECT = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3,
                "citations": {"enabled": True}}
FETCH_0318 = {"type": "web_fetch_20260318", "name": "web_fetch", "response_inclusion": "excluded",
              "use_cache": False}
SEARCH_0318 = {"type": "web_search_20260318", "name": "web_search"}


def fetch_direct(streamed: bool) -> CassetteBuilder:
    """web_fetch 20250910 called directly: the page in a ``web_fetch_tool_result``, sent back in
    the history of the next turn [3P: real_traffic pydai__458, pydai__459]."""
    cb = CassetteBuilder("web", "web_fetch_20250910", "fetch_direct",
                         "web_fetch 20250910: a page fetched directly, sent back in the next turn",
                         [capture("pydai__458", "pydai__459"),
                          *([S_CITATIONS] if streamed else [])],
                         model="claude-sonnet-4-5-20250929", tools=[FETCH_DIRECT],
                         streamed=streamed)
    c = Conversation(cb).user("Fetch https://example.com and tell me what the page is for.")
    fid = cb.ids.make("srvtoolu")
    # With citations enabled on the tool, the fetched document says so (issue 25: live web
    # fetch documents carry ``citations``).
    fetched = {"type": "web_fetch_tool_result", "tool_use_id": fid, "content": {
        "type": "web_fetch_result", "url": "https://example.com", "retrieved_at": "2026-08-20T09:58:00Z",
        "content": {"type": "document", "title": "Example Domain", "citations": {"enabled": True},
                    "source": {"type": "text", "media_type": "text/plain", "data": PAGE}}}}
    c.turn([b.server_tool_use(fid, "web_fetch", {"url": "https://example.com"}), fetched,
            b.text("The page is a placeholder: the domain is reserved for documentation "
                   "examples.")], "end_turn", usage=_usage(fetch=1))
    c.user("Can I use it in my own docs without asking?")
    c.turn([b.text("Yes: the page says it may be used in documentation examples without "
                   "needing permission.")], "end_turn")
    return cb


def filtered_0318(tool: dict[str, Any]) -> CassetteBuilder:
    """The 20260318 web tools alone: the API filters with code it runs itself (a
    ``code_execution`` call and its result, no code execution tool in the request); with
    ``response_inclusion: "excluded"`` the raw page stays out of the answer [3P: real_traffic
    pydai__250, pydai__252]."""
    name = tool["name"]
    cb = CassetteBuilder("web", tool["type"], "filtered_by_own_code",
                         f"{name} 20260318 alone: filtered by code the API runs",
                         [capture("pydai__250", "pydai__252")], model=MODEL, tools=[tool])
    c = Conversation(cb).user("Fetch https://example.com and reply with only the page title."
                              if name == "web_fetch" else
                              "What is the mass of the Sun? Reply with the number only.")
    sid = cb.ids.make("srvtoolu")
    if name == "web_fetch":
        code = ("import json\nresult = await web_fetch({\"url\": \"https://example.com\"})\n"
                "entry = json.loads(result)[0]\nprint(\"Title:\", entry.get(\"title\"))\n")
        result = b.code_result(sid, "Title: Example Domain\n")
        answer, usage = "The page title is **Example Domain**.", _usage(fetch=1)
    else:
        code = ("r = await web_search({\"query\": \"mass of the Sun kg\"})\n"
                "print(r[0]['title'])\n")
        result = {"type": "code_execution_tool_result", "tool_use_id": sid, "content": {
            "type": "encrypted_code_execution_result",
            "encrypted_stdout": _opaque(f"{cb.key}stdout", 60), "stderr": "", "return_code": 0,
            "content": []}}
        answer, usage = "1.989 × 10³⁰ kg", _usage(search=1)
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code}), result, b.text(answer)],
           "end_turn", container=True, usage=usage)
    return cb


@family("web")
def build() -> Iterator[CassetteBuilder]:
    yield fetch(False, True)
    yield fetch(True, True)
    yield fetch(False, False)
    yield search()
    yield search_cited(False)
    yield search_cited(True)
    yield fetch_direct(False)
    yield fetch_direct(True)
    yield filtered_0318(FETCH_0318)
    yield filtered_0318(SEARCH_0318)
    yield reject_old_ce()
    yield haiku_direct_only()
    for code in WEB_FETCH_ERROR_CODES:
        yield tool_error(FETCH, code)
    for code in WEB_SEARCH_ERROR_CODES:
        yield tool_error(SEARCH, code)
