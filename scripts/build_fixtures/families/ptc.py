"""Programmatic tool calling on code_execution 20260120 and 20260521 (seed 002, PROTOCOL.md §1):
pause/resume with ``caller``, parallel calls, several pauses, the 270 s TimeoutError, REPL state,
``detection_timeout`` (20260521), Haiku 4.5 without PTC, and every documented rejection."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from simulator.sources import SEED_CODE_EXECUTION, SEED_PTC, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

VERSIONS = ("code_execution_20260120", "code_execution_20260521")
MODEL = "claude-opus-4-6"
HAIKU = "claude-haiku-4-5-20251001"

S_WHAT = seed(SEED_PTC, "Ce qui se passe réellement")
S_ENABLE = seed(SEED_PTC, "L'activer")
S_VERSIONS = seed(SEED_PTC, "Les chaînes de version, décodées")
S_FAILS = seed(SEED_PTC, "Les cinq façons dont cela casse")
S_P2 = protocol("1. Programmatic tool calling: Paused response")
S_CONT = protocol("1. Programmatic tool calling: Continuation request")
S_DONE = protocol("1. Programmatic tool calling: Completion")
S_TIMEOUT = protocol("1. Programmatic tool calling: Timeout")
S_ERRS = protocol("1. Programmatic tool calling: Error texts and conditions", "3P")
S_REPL = protocol("1. Programmatic tool calling: REPL persistence")
S_521 = protocol("1. Programmatic tool calling: code_execution_20260521", "?")
S_HAIKU = seed(SEED_CODE_EXECUTION, "Versi alat")
S_STREAM = seed(SEED_CODE_EXECUTION, "Streaming")

QUERY_DATABASE: dict[str, Any] = {
    "name": "query_database",
    "description": "Execute a SQL query against the sales database. Returns a list of rows as JSON objects.",
    "input_schema": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    "allowed_callers": ["code_execution_20260120"],
}
GET_WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "Lookup the weather for a city. Returns a JSON object with temperature and conditions.",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}},
                     "required": ["location"]},
    "allowed_callers": ["code_execution_20260120"],
}
ZERO_USAGE = {"input_tokens": 0, "output_tokens": 0,
              "server_tool_use": {"web_fetch_requests": 0, "web_search_requests": 0}}
SQL = "SELECT customer, SUM(amount) AS revenue FROM purchases GROUP BY customer"
CODE = ("import json\n\nrows = json.loads(await query_database({'sql': '" + SQL + "'}))\n"
        "top = sorted(rows, key=lambda r: r['revenue'], reverse=True)[:5]\n"
        "print(f'Top 5 customers: {top}')")
ROWS = json.dumps([{"customer": "Acme", "revenue": 1200}, {"customer": "Globex", "revenue": 950}])
TOP = "Top 5 customers: [{'customer': 'Acme', 'revenue': 1200}, {'customer': 'Globex', 'revenue': 950}]\n"


def _tools(v: str, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The code execution tool and ``extra``; on 20260521 the tools name that version in
    ``allowed_callers`` (interchangeable with 20260120; responses still tag callers 20260120)."""
    tools = [copy.deepcopy(t) for t in extra]
    for t in tools:
        if v != "code_execution_20260120" and t.get("allowed_callers") == ["code_execution_20260120"]:
            t["allowed_callers"] = [v]
    return [{"type": v, "name": "code_execution"}, *tools]


def _cb(v: str, scenario: str, title: str, sources: list, streamed: bool = False,
        tools: list | None = None, model: str = MODEL) -> CassetteBuilder:
    return CassetteBuilder("ptc", v, scenario, f"{v}: {title}",
                           [*sources, S_STREAM] if streamed else sources, model=model,
                           tools=tools if tools is not None else _tools(v, QUERY_DATABASE),
                           streamed=streamed)


def _pause(cb: CassetteBuilder, c: Conversation, code: str = CODE) -> tuple[str, str]:
    """The first response: a code_execution run paused on one query_database call."""
    sid, tid = cb.ids.make("srvtoolu"), cb.ids.make("toolu")
    c.turn([b.text("I'll query the purchase history and analyze the results."),
            b.server_tool_use(sid, "code_execution", {"code": code}, caller=b.direct()),
            b.tool_use(tid, "query_database", {"sql": SQL}, caller=b.code_caller(sid))],
           "tool_use", container=True)
    return sid, tid


def _complete(cb: CassetteBuilder, c: Conversation, sid: str, stdout: str = TOP,
              stderr: str = "", return_code: int = 0, final: str = "Acme leads with 1200.",
              advance_seconds: float = 7.0) -> None:
    c.turn([b.code_result(sid, stdout, stderr, return_code), b.text(final)], "end_turn", container=True,
           advance_seconds=advance_seconds)


def pause_resume(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "pause_resume", "a full pause/resume conversation with caller on the tool_use",
             [S_WHAT, S_ENABLE, S_P2, S_CONT, S_DONE, S_VERSIONS], streamed)
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c)
    c.tool_results(b.tool_result(tid, ROWS))
    _complete(cb, c, sid)
    return cb


def parallel_calls(v: str) -> CassetteBuilder:
    cb = _cb(v, "parallel_calls", "parallel programmatic calls from one script (asyncio.gather)",
             [S_WHAT, S_P2, S_CONT], tools=_tools(v, GET_WEATHER))
    c = Conversation(cb).user("What is the weather in SF, NY and London?")
    sid = cb.ids.make("srvtoolu")
    cities = ["San Francisco, CA", "New York, NY", "London, UK"]
    code = ("import asyncio, json\nres = await asyncio.gather(*[get_weather({'location': c}) for c in "
            + repr(cities) + "])\nfor c, r in zip(" + repr(cities) + ", res):\n    print(c, json.loads(r))")
    ids = [cb.ids.make("toolu") for _ in cities]
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code}, caller=b.direct()),
            *[b.tool_use(t, "get_weather", {"location": city}, caller=b.code_caller(sid))
              for t, city in zip(ids, cities, strict=True)]], "tool_use", container=True)
    temps = [18, 24, 12]
    c.tool_results(*[b.tool_result(t, json.dumps({"temperature_c": k, "conditions": "clear"}))
                     for t, k in zip(ids, temps, strict=True)])
    out = "".join(f"{city} {{'temperature_c': {k}, 'conditions': 'clear'}}\n"
                  for city, k in zip(cities, temps, strict=True))
    _complete(cb, c, sid, out, final="SF 18 °C, NY 24 °C, London 12 °C; all clear.")
    return cb


def several_pauses(v: str) -> CassetteBuilder:
    cb = _cb(v, "several_pauses", "one run pausing several times (dependent calls)",
             [S_WHAT, protocol("1. Programmatic tool calling: Step 4")])
    c = Conversation(cb).user("Find our biggest customer, then list their last orders.")
    code = ("import json\ntop = json.loads(await query_database({'sql': 'SELECT customer FROM totals "
            "ORDER BY revenue DESC LIMIT 1'}))[0]\norders = json.loads(await query_database({'sql': "
            "f\"SELECT id FROM orders WHERE customer = '{top['customer']}'\"}))\nprint(top, orders)")
    sid, t1 = cb.ids.make("srvtoolu"), cb.ids.make("toolu")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code}, caller=b.direct()),
            b.tool_use(t1, "query_database", {"sql": "SELECT customer FROM totals ORDER BY revenue DESC LIMIT 1"},
                       caller=b.code_caller(sid))], "tool_use", container=True)
    c.tool_results(b.tool_result(t1, '[{"customer": "Acme"}]'))
    t2 = cb.ids.make("toolu")
    c.turn([b.tool_use(t2, "query_database", {"sql": "SELECT id FROM orders WHERE customer = 'Acme'"},
                       caller=b.code_caller(sid))], "tool_use", container=True, usage=dict(ZERO_USAGE))
    c.tool_results(b.tool_result(t2, '[{"id": 17}, {"id": 42}]'))
    _complete(cb, c, sid, "{'customer': 'Acme'} [{'id': 17}, {'id': 42}]\n",
              final="Acme is the biggest customer; its last orders are 17 and 42.")
    return cb


def timeout(v: str) -> CassetteBuilder:
    cb = _cb(v, "pending_call_timeout", "a pending call unanswered for ~270 s: TimeoutError in stderr",
             [S_TIMEOUT, S_FAILS, protocol("1. Programmatic tool calling: Timeout", "I")])
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c)
    c.tool_results(b.tool_result(tid, ROWS))
    stderr = "TimeoutError: Calling tool ['query_database'] timed out (no response after 270s)."
    # the late answer arrives after the ~4 minute limit
    _complete(cb, c, sid, "", stderr, 0,
              final="The database call timed out before the result arrived; please try again.",
              advance_seconds=290)
    return cb


def tool_error_string(v: str) -> CassetteBuilder:
    cb = _cb(v, "tool_error_string", "a tool failure returned as the result string the code receives",
             [protocol("1. Programmatic tool calling: Tool error example"), S_WHAT])
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c, code="try:\n    rows = await query_database({'sql': '" + SQL + "'})\n"
                      "    print(rows)\nexcept Exception as e:\n    print('failed:', e)")
    c.tool_results(b.tool_result(tid, "Error: Query timeout - table lock exceeded 30 seconds"))
    _complete(cb, c, sid, "Error: Query timeout - table lock exceeded 30 seconds\n",
              final="The database reported a lock timeout; the query can be retried in a moment.")
    return cb


def repl_state(v: str) -> CassetteBuilder:
    cb = _cb(v, "repl_state", "REPL state kept across requests that reuse the container",
             [S_REPL, seed(SEED_CODE_EXECUTION, "Penggunaan ulang container")])
    c = Conversation(cb).user("Load revenue per customer into a variable called totals.")
    sid, tid = _pause(cb, c, code="import json\ntotals = json.loads(await query_database({'sql': '"
                      + SQL + "'}))\nprint(len(totals), 'rows')")
    c.tool_results(b.tool_result(tid, ROWS))
    _complete(cb, c, sid, "2 rows\n", final="`totals` holds 2 rows.")
    c.user("Using totals, what is the combined revenue?")
    s2 = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(s2, "code_execution", {"code": "print(sum(r['revenue'] for r in totals))"},
                              caller=b.direct()),
            b.code_result(s2, "2150\n"), b.text("Combined revenue is 2150.")], "end_turn", container=True)
    return cb


def detection_timeout(v: str) -> CassetteBuilder:
    cb = _cb(v, "detection_timeout", "a cell over the 90 s wall-clock limit: non-zero return_code and "
             "a detection_timeout status", [S_521, seed(SEED_CODE_EXECUTION, "Versi alat"),
                                              seed(SEED_PTC, "Les chaînes de version, décodées")])
    c = Conversation(cb).user("Run the full simulation.")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": "import time\nwhile True:\n    time.sleep(1)"},
                              caller=b.direct()),
            b.code_result(sid, "", "detection_timeout: the cell exceeded the 90 s wall-clock limit and "
                                   "was stopped.", 1),
            b.text("The simulation cell hit the 90-second limit; I'll split it into smaller steps.")],
           "end_turn", container=True)
    return cb


def haiku_no_ptc(v: str) -> CassetteBuilder:
    cb = _cb(v, "haiku_without_ptc", "Claude Haiku 4.5 accepts the version but calls tools directly "
             "(no programmatic calls, no error)", [S_HAIKU, seed(SEED_PTC, "Les chiffres")], model=HAIKU,
             tools=_tools(v, QUERY_DATABASE))
    c = Conversation(cb).user("Who is our top customer by revenue?")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "query_database", {"sql": SQL}, caller=b.direct())], "tool_use")
    c.tool_results(b.tool_result(tid, ROWS))
    c.turn([b.text("Acme is the top customer with 1200 in revenue.")], "end_turn")
    return cb


# --- documented rejections ---------------------------------------------------------------------


def missing_container(v: str) -> CassetteBuilder:
    cb = _cb(v, "reject_missing_container", "a follow-up without the container id is refused, then sent "
             "with it", [S_WHAT, S_ERRS])
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c)
    c.tool_results(b.tool_result(tid, ROWS))
    keep, c.send_container = c.send_container, None
    c.reject("ptc.container.required", "")
    c.send_container = keep
    _complete(cb, c, sid)
    return cb


def text_next_to_results(v: str) -> CassetteBuilder:
    cb = _cb(v, "reject_text_next_to_results", "text next to the tool results while calls are pending is "
             "refused; the results alone pass", [S_FAILS, S_ERRS])
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c)
    c.user([b.tool_result(tid, ROWS), b.text("Here are the rows.")])
    c.reject("ptc.pending.only_tool_results", "")
    c.messages[-1]["content"] = [b.tool_result(tid, ROWS)]
    _complete(cb, c, sid)
    return cb


def image_result(v: str) -> CassetteBuilder:
    cb = _cb(v, "reject_non_text_result", "an image in a programmatic call's result is refused",
             [S_CONT, protocol("1. Programmatic tool calling: Continuation request", "I")])
    c = Conversation(cb).user("Who are our top customers by revenue?")
    sid, tid = _pause(cb, c)
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    c.tool_results(b.tool_result(tid, [img]))
    c.reject("ptc.tool_result.text_content_only", "")
    c.messages[-1]["content"] = [b.tool_result(tid, [b.text(ROWS)])]
    _complete(cb, c, sid)
    return cb


def _config_reject(v: str, scenario: str, title: str, rule: str, tools: list, extra: dict | None = None,
                   beta: str | None = None, sources: list | None = None) -> CassetteBuilder:
    cb = _cb(v, scenario, title, sources or [S_FAILS], tools=tools)
    c = Conversation(cb, beta=beta, extra_body=extra).user("Who are our top customers by revenue?")
    c.reject(rule, "")
    return cb


def rejections(v: str) -> Iterator[CassetteBuilder]:
    yield missing_container(v)
    yield text_next_to_results(v)
    yield image_result(v)
    yield _config_reject(v, "reject_tool_choice_code_only", "tool_choice naming a code-only tool",
                         "tool_choice.requires_direct_caller", _tools(v, QUERY_DATABASE),
                         {"tool_choice": {"type": "tool", "name": "query_database"}})
    yield _config_reject(v, "reject_strict", "strict: true on a code-callable tool",
                         "ptc.strict_unsupported", _tools(v, {**QUERY_DATABASE, "strict": True}))
    yield _config_reject(v, "reject_disable_parallel_tool_use", "disable_parallel_tool_use with "
                         "programmatic calling", "ptc.disable_parallel_tool_use_unsupported",
                         _tools(v, QUERY_DATABASE),
                         {"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}})
    tree = {**QUERY_DATABASE, "name": "save_tree", "description": "Store a tree of nodes. Returns 'ok'.",
            "input_schema": {"type": "object", "$defs": {"node": {"type": "object", "properties": {
                "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
                "properties": {"root": {"$ref": "#/$defs/node"}}, "required": ["root"]}}
    yield _config_reject(v, "reject_recursive_ref", "a self-referencing $ref in a code-callable tool",
                         "ptc.recursive_ref", _tools(v, tree), sources=[S_FAILS, S_ERRS])
    mcp = {"type": "mcp_toolset", "mcp_server_name": "crm", "allowed_callers": [v]}
    yield _config_reject(v, "reject_mcp_code_callable", "an MCP connector tool made code-callable",
                         "ptc.mcp_not_code_callable", _tools(v, mcp),
                         {"mcp_servers": [{"type": "url", "url": "https://mcp.example.com/mcp", "name": "crm"}]},
                         beta="mcp-client-2025-11-20",
                         sources=[S_FAILS, protocol("1. Programmatic tool calling: allowed_callers", "I")])


@family("ptc")
def build() -> Iterator[CassetteBuilder]:
    for v in VERSIONS:
        yield pause_resume(v, False)
        yield pause_resume(v, True)
        yield parallel_calls(v)
        yield several_pauses(v)
        yield timeout(v)
        yield repl_state(v)
        yield tool_error_string(v)
        if v == "code_execution_20260521":
            yield detection_timeout(v)
        yield haiku_no_ptc(v)
        yield from rejections(v)
