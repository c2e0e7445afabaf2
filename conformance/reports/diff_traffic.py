"""Diff of two fixture sets or recording directories: the model-upgrade report.

Compares what the traffic contains (block types and their fields, stop reasons, error codes,
tools called, turns per conversation) and replays every recorded request of both sides through
the simulator's protocol rules (``simulator.rules``) to list the requests it refuses: a request
that the API accepted when it was recorded but the simulator now refuses is either drift in the
client or a rule to revisit.

Beyond blocks, the message envelope is compared as *shapes*: the keys of the message, its
``usage`` and ``container``, the forms of values a client may parse (``id`` as ``msg_011C…`` or
``msg_01…``, ``container.expires_at`` with or without fractional seconds), the ``caller`` types on
calls and the citation types on text blocks. A shape live traffic has and a fixture set lacks
shows in "appeared in B".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from simulator.cassette import Cassette

from .traffic import TrafficStats, add_cassette, response_message

MAX_LISTED = 50


@dataclass
class Refusal:
    cassette: str
    exchange: int
    rule_id: str
    message: str
    #: The recorded response was a refusal too (``expect_rule`` or an HTTP 4xx).
    recorded_refused: bool

    def to_json(self) -> dict[str, Any]:
        return {"cassette": self.cassette, "exchange": self.exchange, "rule_id": self.rule_id,
                "message": self.message, "recorded_refused": self.recorded_refused}


@dataclass
class TrafficSide:
    stats: TrafficStats = field(default_factory=TrafficStats)
    #: Message shapes (see the module docstring) → number of messages showing them.
    shapes: Counter[str] = field(default_factory=Counter)
    refusals: list[Refusal] = field(default_factory=list)
    #: Why refusals could not be computed (None when they were).
    refusals_unavailable: str | None = None


def _rule_checker() -> tuple[Any, Any]:
    """``(check_request, SimState)`` from the simulator."""
    from simulator.rules import check_request
    from simulator.state import SimState

    return check_request, SimState


def replay_refusals(cassette: Cassette, check_request: Any, state_factory: Any) -> list[Refusal]:
    """Run each recorded request, in order, through the rules with the state a replay builds."""
    from simulator.clock import FakeClock, parse_rfc3339
    from simulator.state import container_param_id

    # Judged on the recording's own days (a model retired since was served then).
    start = parse_rfc3339(cassette.clock_start) if cassette.clock_start else None
    clock = FakeClock(start) if start is not None else None
    state = state_factory(clock) if clock is not None else state_factory()
    # A model the recording shows answered was served to it (a newer model than the
    # simulator's table knows, or a test's placeholder): not a protocol change to report.
    state.extra_models = frozenset(
        str(ex.request_body["model"]) for ex in cassette.exchanges
        if isinstance(ex.request_body, dict) and isinstance(ex.request_body.get("model"), str)
        and isinstance(ex.response.get("status"), int) and ex.response["status"] < 400)
    out: list[Refusal] = []
    for ex in cassette.exchanges:
        at = parse_rfc3339(ex.at) if clock is not None and ex.at else None
        if clock is not None and at is not None and at > clock.now():
            clock.advance((at - clock.now()).total_seconds())
        body = ex.request_body
        path = str(ex.request.get("path", "")).split("?", 1)[0]
        if not isinstance(body, dict) or not path.endswith("/v1/messages"):
            continue  # the rules are about Messages API requests (not Managed Agents, Files...)
        status = ex.response.get("status")
        recorded_refused = bool(ex.expect_rule) or (isinstance(status, int) and 400 <= status < 500)
        cid = container_param_id(body)
        if cid and not recorded_refused and state.container(cid) is None:
            state.seed_container(cid)  # the API knew it: created before this recording
        headers = {str(k).lower(): str(v) for k, v in (ex.request.get("headers") or {}).items()}
        try:
            violations = check_request(body, headers, state)
        except Exception as e:  # a rule crashing on odd traffic must not kill the report
            violations = []
            out.append(Refusal(cassette.id, ex.index, "<rule crashed>", repr(e), recorded_refused))
        out += [Refusal(cassette.id, ex.index, v.rule_id, v.message, recorded_refused)
                for v in violations]
        if violations or recorded_refused:
            continue
        try:
            state.on_request_served(body)
            message, _ = response_message(ex)
            if message is not None:
                state.on_response(message)
        except Exception:  # state bookkeeping is best effort for a diff
            pass
    return out


_FRACTIONAL = re.compile(r"T\d\d:\d\d:\d\d\.\d+")


def message_shapes(message: dict[str, Any]) -> set[str]:
    """The shapes of one response message (see the module docstring)."""
    out = {f"message.{k}" for k in message}
    usage = message.get("usage")
    out |= {f"usage.{k}" for k in usage} if isinstance(usage, dict) else set()
    mid = message.get("id")
    if isinstance(mid, str):
        out.add("id: msg_011C…" if mid.startswith("msg_011C") else
                "id: msg_01…" if mid.startswith("msg_01") else "id: other form")
    container = message.get("container")
    if isinstance(container, dict):
        out |= {f"container.{k}" for k in container}
        expires = container.get("expires_at")
        if isinstance(expires, str):
            out.add("container.expires_at: fractional seconds" if _FRACTIONAL.search(expires)
                    else "container.expires_at: whole seconds")
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        caller = block.get("caller")
        if block.get("type") in ("tool_use", "server_tool_use"):
            kind = caller.get("type") if isinstance(caller, dict) else None
            what = "code execution" if isinstance(kind, str) and kind.startswith(
                "code_execution") else kind or "absent"
            out.add(f"{block['type']}.caller: {what}")
        for citation in block.get("citations") or [] if block.get("type") == "text" else []:
            if isinstance(citation, dict):
                out.add(f"text.citations: {citation.get('type')}")
    return out


def collect_side(cassettes: Iterable[Cassette], *, refusals: bool = True) -> TrafficSide:
    side = TrafficSide()
    checker = _rule_checker() if refusals else "not requested"
    if isinstance(checker, str):
        side.refusals_unavailable = checker
    for c in cassettes:
        add_cassette(side.stats, c)
        for ex in c.exchanges:
            message, _ = response_message(ex)
            if isinstance(message, dict) and message.get("type") == "message":
                side.shapes.update(message_shapes(message))
        if not isinstance(checker, str):
            side.refusals += replay_refusals(c, *checker)
    return side


def _distribution(a: Counter[str], b: Counter[str]) -> dict[str, Any]:
    ta, tb = sum(a.values()), sum(b.values())
    rows = {}
    for k in sorted(set(a) | set(b)):
        rows[k] = {"a": a.get(k, 0), "b": b.get(k, 0),
                   "a_share": round(a.get(k, 0) / ta, 4) if ta else 0.0,
                   "b_share": round(b.get(k, 0) / tb, 4) if tb else 0.0}
    return {"appeared": sorted(set(b) - set(a)), "vanished": sorted(set(a) - set(b)),
            "counts": rows, "total": {"a": ta, "b": tb}}


def _fields(a: TrafficStats, b: TrafficStats) -> dict[str, Any]:
    out = {}
    for btype in sorted(set(a.block_fields) & set(b.block_fields)):
        fa, fb = a.block_fields[btype], b.block_fields[btype]
        if fa != fb:
            out[btype] = {"appeared": sorted(fb - fa), "vanished": sorted(fa - fb)}
    return out


def _refusal_summary(side: TrafficSide) -> dict[str, Any]:
    if side.refusals_unavailable:
        return {"available": False, "reason": side.refusals_unavailable}
    unexpected = [r for r in side.refusals if not r.recorded_refused]
    return {"available": True,
            "by_rule": dict(sorted(Counter(r.rule_id for r in side.refusals).items())),
            "accepted_when_recorded": len(unexpected),
            "examples": [r.to_json() for r in unexpected[:MAX_LISTED]]}


def diff_traffic(a: TrafficSide, b: TrafficSide, *, a_label: str = "A",
                 b_label: str = "B") -> dict[str, Any]:
    sa, sb = a.stats, b.stats
    ta, tb = sa.to_json()["turns"], sb.to_json()["turns"]
    ra, rb = _refusal_summary(a), _refusal_summary(b)
    newly: list[str] = []
    if ra["available"] and rb["available"]:
        newly = sorted(set(rb["by_rule"]) - set(ra["by_rule"]))
    return {
        "kind": "traffic",
        "a": {"path": a_label, "cassettes": sa.cassettes, "exchanges": sa.exchanges,
              "models": dict(sorted(sa.models.items()))},
        "b": {"path": b_label, "cassettes": sb.cassettes, "exchanges": sb.exchanges,
              "models": dict(sorted(sb.models.items()))},
        "block_types": _distribution(sa.block_types, sb.block_types),
        "block_fields": _fields(sa, sb),
        "message_shapes": _distribution(a.shapes, b.shapes),
        "request_block_types": _distribution(sa.request_block_types, sb.request_block_types),
        "stop_reasons": _distribution(sa.stop_reasons, sb.stop_reasons),
        "error_codes": _distribution(sa.error_codes, sb.error_codes),
        "api_errors": _distribution(sa.api_errors, sb.api_errors),
        "tools_called": _distribution(sa.tools_called, sb.tools_called),
        "tool_types": _distribution(sa.tool_types, sb.tool_types),
        "turns": {"a": ta, "b": tb},
        "refusals": {"a": ra, "b": rb, "newly_refused_rules": newly},
    }
