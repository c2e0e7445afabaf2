"""Managed Agents custom tools on ``/v1/sessions/{id}/events`` (seed 004, PROTOCOL.md §7):
``agent.custom_tool_use`` → ``session.status_idle`` (``requires_action``) →
``user.custom_tool_result`` → running → idle (``end_turn``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.sources import SEED_MANAGED_AGENTS, protocol, seed

from ..core import CassetteBuilder, family
from ..ids import rfc3339

BETA = "managed-agents-2026-04-01"
S_CUSTOM = seed(SEED_MANAGED_AGENTS, "Alat kustom")
S_PAUSE = seed(SEED_MANAGED_AGENTS, "Worker hanya menjawab alat yang didaftarkan padanya")
S_MCP = seed(SEED_MANAGED_AGENTS, "Membungkus server MCP sebagai alat kustom")
S_MCP_ERR = seed(SEED_MANAGED_AGENTS, "Kegagalan alat muncul sebagai hasil alat error")
S_FLOW = protocol("7. Managed Agents: Custom-tool flow")
S_EVENTS = protocol("7. Managed Agents: Events", "S")
S_SSE_NAMES = protocol("7. Managed Agents: Session endpoints", "I")

ORDER_TOOL = {"type": "custom", "name": "get_order_status",
              "description": "Look up the shipping status of an order by id.",
              "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}
MCP_TOOL = {"type": "custom", "name": "crm_lookup_customer",
            "description": "Find a customer in the CRM (served by the internal MCP server).",
            "input_schema": {"type": "object", "properties": {"email": {"type": "string"}},
                             "required": ["email"]}}


class Session:
    """One session's traffic: POSTs of user events, GETs of the event stream."""

    def __init__(self, cb: CassetteBuilder) -> None:
        self.cb = cb
        self.sid = cb.ids.make("sesn")

    def _headers(self, stream: bool = False) -> dict[str, str]:
        h = {"anthropic-version": "2023-06-01", "anthropic-beta": BETA}
        if stream:
            h["accept"] = "text/event-stream"
        else:
            h["content-type"] = "application/json"
        return h

    def _event(self, type_: str, **fields: Any) -> dict[str, Any]:
        self.cb.clock.advance(seconds=1)
        return {"id": self.cb.ids.make("sevt"), "type": type_, "processed_at": rfc3339(self.cb.clock.now),
                **fields}

    def send(self, *events: dict[str, Any], processed: bool) -> list[dict[str, Any]]:
        """POST events; tool results are processed on receipt, messages are queued."""
        self.cb.tick(3)
        echoed = []
        for ev in events:
            e = {"id": self.cb.ids.make("sevt"), **ev,
                 "processed_at": rfc3339(self.cb.clock.now) if processed else None}
            echoed.append(e)
        req = {"method": "POST", "path": f"/v1/sessions/{self.sid}/events", "headers": self._headers(),
               "query": {}, "body": {"events": list(events)}}
        self.cb.add(req, {"status": 200, "headers": self.cb.response_headers(), "body": {"data": echoed}})
        return echoed

    def open_stream(self) -> None:
        """The client opens the event stream (the request time); events follow it."""
        self.cb.tick(1)
        self._opened = self.cb.clock.now

    def stream(self, events: list[dict[str, Any]]) -> None:
        req = {"method": "GET", "path": f"/v1/sessions/{self.sid}/events/stream",
               "headers": self._headers(stream=True), "query": {}}
        now = self.cb.clock.now
        self.cb.clock.now = self._opened  # recorded at the time the stream was opened
        self.cb.add(req, {"status": 200, "headers": self.cb.response_headers(stream=True),
                          "events": [{"event": e["type"], "data": e} for e in events]})
        self.cb.clock.now = now

    def tool_uses(self, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [self._event("agent.custom_tool_use", name=n, input=i) for n, i in calls]

    def running(self) -> dict[str, Any]:
        return self._event("session.status_running")

    def idle(self, stop: dict[str, Any]) -> dict[str, Any]:
        self.cb.stop_reasons.add(stop["type"])
        return self._event("session.status_idle", stop_reason=stop)

    def message(self, text: str) -> dict[str, Any]:
        return self._event("agent.message", content=[{"type": "text", "text": text}])


def _cb(scenario: str, title: str, sources: list, tools: list) -> CassetteBuilder:
    return CassetteBuilder("managed_agents", "custom", scenario, f"Managed Agents custom tools: {title}",
                           [*sources, S_EVENTS, S_SSE_NAMES], model=None, tools=tools)


def _user(text: str) -> dict[str, Any]:
    return {"type": "user.message", "content": [{"type": "text", "text": text}]}


def _result(use: dict[str, Any], text: str, is_error: bool = False) -> dict[str, Any]:
    r: dict[str, Any] = {"type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
                         "content": [{"type": "text", "text": text}]}
    if is_error:
        r["is_error"] = True
    return r


def _turn(scenario: str, title: str, sources: list, tools: list,
          calls: list[tuple[str, dict[str, Any]]], answers: list[tuple[str, bool]] | None,
          final: str, client_error: str | None = None) -> CassetteBuilder:
    cb = _cb(scenario, title, sources, tools)
    if client_error:
        cb.extra_tags["client_errors"] = [client_error]
    s = Session(cb)
    s.send(_user("Where is order 1042?" if tools[0] is ORDER_TOOL else "Find customer ada@example.com"),
           processed=False)
    s.open_stream()
    running = s.running()  # events in the order their processed_at says
    uses = s.tool_uses(*calls)
    s.stream([running, *uses, s.idle({"type": "requires_action", "event_ids": [u["id"] for u in uses]})])
    if answers is None:
        return cb
    s.send(*[_result(u, text, err) for u, (text, err) in zip(uses, answers, strict=True)], processed=True)
    s.open_stream()
    running = s.running()
    said = s.message(final)
    s.stream([running, said, s.idle({"type": "end_turn"})])
    return cb


@family("managed_agents")
def build() -> Iterator[CassetteBuilder]:
    yield _turn("one_tool_use", "one custom tool use answered, the turn ends", [S_CUSTOM, S_FLOW],
                [ORDER_TOOL], [("get_order_status", {"order_id": "1042"})],
                [('{"order_id": "1042", "status": "shipped"}', False)], "Order 1042 has shipped.")
    yield _turn("several_tool_uses", "several custom tool uses in one turn, all answered", [S_CUSTOM, S_FLOW],
                [ORDER_TOOL], [("get_order_status", {"order_id": "1042"}),
                               ("get_order_status", {"order_id": "1043"})],
                [('{"status": "shipped"}', False), ('{"status": "processing"}', False)],
                "Order 1042 has shipped; 1043 is still processing.")
    yield _turn("requires_action_unanswered", "nothing serves the tool: the session stays idle with "
                "requires_action", [S_PAUSE, S_FLOW], [ORDER_TOOL],
                [("get_order_status", {"order_id": "1042"})], None, "")
    yield _turn("error_result", "the worker answers with is_error: true", [S_CUSTOM, S_FLOW, S_MCP_ERR],
                [ORDER_TOOL], [("get_order_status", {"order_id": "9999"})],
                [("Error: order 9999 not found", True)], "I could not find order 9999.",
                client_error="tool_error")
    yield _turn("mcp_wrapped_tool_fails", "an MCP server wrapped as a custom tool reports a tool error",
                [S_MCP, S_MCP_ERR], [MCP_TOOL], [("crm_lookup_customer", {"email": "ada@example.com"})],
                [("MCP tool error: upstream CRM timed out after 30s", True)],
                "The CRM did not answer in time; please try again later.", client_error="mcp_tool_error")
