"""Fixture lint step ``replay``: the engine, given a cassette, answers each recorded request with
the recorded response; an ``expect_rule`` exchange gets that rule's error instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .cassette import Cassette
from .clock import parse_rfc3339
from .headers import replay_headers
from .http import SimRequest, SimResponse


def _request(req: dict[str, Any]) -> SimRequest:
    body = req.get("body")
    raw = b"" if body is None else json.dumps(body).encode()
    # A recorded request, replayed: its recorder dropped the key (simulator.headers).
    return SimRequest(method=req["method"], path=req["path"], headers=replay_headers(req.get("headers")),
                      query={k: str(v) for k, v in (req.get("query") or {}).items()}, body=raw)


def _handle(sim: Any, req: SimRequest) -> SimResponse:
    for name in ("handle", "handle_request", "__call__"):
        fn = getattr(sim, name, None)
        if callable(fn):
            return fn(req)
    raise TypeError("simulator.engine.Simulator has no handle()/__call__")


def _events(resp: SimResponse) -> list[dict[str, Any]]:
    return [{"event": e.event, "data": e.data} for e in (resp.events or [])]


def _body(resp: SimResponse) -> Any:
    if isinstance(resp.body, bytes | bytearray):
        try:
            return json.loads(bytes(resp.body).decode("utf-8"))
        except ValueError:
            return resp.body
    return resp.body


def _rule_of(sim: Any, before: int) -> str | None:
    """The rule the engine answered the last request with (its ``RuleViolated`` log entry after
    position ``before``); None when no rule refused it."""
    for ev in list(getattr(sim, "violations", []) or [])[before:]:
        if getattr(ev, "answered", True):
            return str(getattr(ev, "rule_id", "")) or None
    return None


def _is_session_path(path: Any) -> bool:
    return str(path).startswith("/v1/sessions/")


def check_session_flow(c: Cassette) -> Iterator[tuple[str, str]]:
    """Managed Agents exchanges: the engine serves /v1/messages only, so a session cassette is
    checked as the Managed Agents simulator reads it (``scenario_from_cassette``): every
    ``requires_action`` idle names the tool uses before it, every ``user.custom_tool_result``
    answers one of them once, and the scenario read back has the recorded tool calls."""
    from .managed_agents.scenario import scenario_from_cassette

    waiting: set[str] = set()
    answered: set[str] = set()
    uses: list[tuple[str, dict[str, Any]]] = []
    for i, ex in enumerate(c.exchanges):
        for j, ev in enumerate(ex.response.get("events") or []):
            data = ev.get("data") if isinstance(ev, dict) else None
            if not isinstance(data, dict):
                continue
            if data.get("type") == "agent.custom_tool_use":
                uses.append((str(data.get("name")), dict(data.get("input") or {})))
                waiting.add(str(data.get("id")))
            stop = data.get("stop_reason")
            if isinstance(stop, dict) and stop.get("type") == "requires_action":
                missing = waiting - set(stop.get("event_ids") or []) - answered
                if missing:
                    yield (f"/exchanges/{i}/response/events/{j}/data/stop_reason/event_ids",
                           f"requires_action does not name the pending tool uses {sorted(missing)}")
        body = ex.request.get("body")
        for k, ev in enumerate(body.get("events") or [] if isinstance(body, dict) else []):
            if isinstance(ev, dict) and ev.get("type") == "user.custom_tool_result":
                tid = str(ev.get("custom_tool_use_id"))
                ptr = f"/exchanges/{i}/request/body/events/{k}/custom_tool_use_id"
                if tid not in waiting:
                    yield ptr, f"{tid} answers no agent.custom_tool_use recorded before it"
                elif tid in answered:
                    yield ptr, f"{tid} is answered twice"
                answered.add(tid)
    try:
        scenario = scenario_from_cassette(c)
    except Exception as e:
        yield "/", f"the Managed Agents simulator cannot read the session: {e}"
        return
    got = [(u.name, dict(u.input)) for t in scenario.turns for u in t.tool_uses]
    if got != uses:
        yield "/exchanges", f"the scenario read back has tool calls {got}, the traffic {uses}"


def check_replay(c: Cassette) -> Iterator[tuple[str, str]]:
    if any(_is_session_path(ex.request.get("path")) for ex in c.exchanges):
        yield from check_session_flow(c)
        return
    from .clock import FakeClock
    from .engine import Simulator  # the engine: only when the step runs

    start = parse_rfc3339(c.clock_start)
    clock = FakeClock(start)
    try:
        sim = Simulator([c], clock=clock)
    except Exception as e:
        yield "/", f"the engine refuses the cassette: {e}"
        return
    for i, ex in enumerate(c.exchanges):
        ptr = f"/exchanges/{i}"
        at = parse_rfc3339(ex.at)
        if at is not None and at > clock.now():
            clock.advance((at - clock.now()).total_seconds())
        before = len(getattr(sim, "violations", []) or [])
        try:
            got = _handle(sim, _request(ex.request))
        except Exception as e:
            yield f"{ptr}/request", f"the engine raised {type(e).__name__}: {e}"
            return
        want = ex.response
        body = _body(got) if not got.is_stream else None
        if ex.expect_rule:
            rule = _rule_of(sim, before)
            etype = body.get("error", {}).get("type") if isinstance(body, dict) else None
            want_status, want_type = want.get("status"), (
                want.get("body", {}).get("error", {}).get("type")
                if isinstance(want.get("body"), dict) else None) or "invalid_request_error"
            if got.status != want_status or etype != want_type or rule is None:
                yield f"{ptr}/expect_rule", (f"expected rule {ex.expect_rule} to reject the request "
                                             f"with a {want_status} {want_type}; got {got.status} "
                                             f"{body!r:.200}")
            elif rule != ex.expect_rule:
                yield f"{ptr}/expect_rule", f"expected rule {ex.expect_rule}; the engine applied {rule}"
            continue
        if got.status != want["status"]:
            detail = f": {body!r:.300}" if body is not None else ""
            yield f"{ptr}/response/status", f"replayed status {got.status}, recorded {want['status']}{detail}"
            continue
        if "events" in want:
            if not got.is_stream:
                yield f"{ptr}/response/events", "recorded a stream; the engine answered with a body"
            elif _events(got) != want["events"]:
                yield f"{ptr}/response/events", "the replayed events differ from the recorded ones"
        elif body != want.get("body"):
            yield f"{ptr}/response/body", "the replayed body differs from the recorded one"
