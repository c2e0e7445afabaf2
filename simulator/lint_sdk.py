"""Fixture lint step ``sdk``: every recorded response parses with the ``anthropic`` SDK's own types
(``BetaMessage``, the raw stream events, the Managed Agents session events) without losing a field.

A stream is also reassembled into its final message, which must parse as a ``BetaMessage`` too: a
client accumulating the events gets a well-formed message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from .cassette import Cassette

_SESSION_EVENTS = re.compile(r"^/v1/sessions/[^/]+/events$")
_SESSION_STREAM = re.compile(r"^/v1/sessions/[^/]+/events/stream$")


@cache
def _adapters() -> dict[str, Any]:
    from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
    from anthropic.types.beta.sessions.beta_managed_agents_send_session_events import (
        BetaManagedAgentsSendSessionEvents,
    )
    from anthropic.types.beta.sessions.beta_managed_agents_session_event import (
        BetaManagedAgentsSessionEvent,
    )
    from anthropic.types.beta.sessions.beta_managed_agents_stream_session_events import (
        BetaManagedAgentsStreamSessionEvents,
    )
    from pydantic import TypeAdapter

    return {
        "message": TypeAdapter(BetaMessage),
        "stream_event": TypeAdapter(BetaRawMessageStreamEvent),
        "session_send": TypeAdapter(BetaManagedAgentsSendSessionEvents),
        "session_event": TypeAdapter(BetaManagedAgentsSessionEvent),
        "session_stream": TypeAdapter(BetaManagedAgentsStreamSessionEvents),
    }


def dropped_keys(raw: Any, parsed: Any, ptr: str) -> Iterator[str]:
    """Pointers of keys present in ``raw`` but missing after the SDK parsed it."""
    if isinstance(raw, dict) and isinstance(parsed, dict):
        for k, v in raw.items():
            if k not in parsed:
                yield f"{ptr}/{k}"
            else:
                yield from dropped_keys(v, parsed[k], f"{ptr}/{k}")
    elif isinstance(raw, list) and isinstance(parsed, list):
        for i, (a, b) in enumerate(zip(raw, parsed, strict=False)):
            yield from dropped_keys(a, b, f"{ptr}/{i}")


def _parse(kind: str, raw: Any, ptr: str) -> Iterator[tuple[str, str]]:
    from pydantic import ValidationError

    adapter = _adapters()[kind]
    try:
        obj = adapter.validate_python(raw)
    except ValidationError as e:
        for err in e.errors()[:5]:
            loc = "/".join(str(p) for p in err["loc"])
            yield f"{ptr}/{loc}" if loc else ptr, f"the SDK type does not accept it: {err['msg']}"
        return
    dumped = adapter.dump_python(obj, mode="json", exclude_unset=True, by_alias=True)
    for lost in dropped_keys(raw, dumped, ptr):
        yield lost, "the SDK drops this field when parsing"


def reassemble(events: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, list[str]]:
    """The final message a client accumulating ``events`` ends with, and any incoherence."""
    msg: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    issues: list[str] = []
    for i, ev in enumerate(events):
        data = ev.get("data") or {}
        t = data.get("type")
        if t == "message_start":
            msg = json.loads(json.dumps(data["message"]))
        elif msg is None:
            if t not in ("ping", "error"):
                issues.append(f"/{i}: {t} before message_start")
            continue
        elif t == "content_block_start":
            if data["index"] != len(msg["content"]):
                issues.append(f"/{i}: content_block_start index {data['index']} out of order")
            msg["content"].append(json.loads(json.dumps(data["content_block"])))
        elif t == "content_block_delta":
            idx, d = data["index"], data["delta"]
            if d.get("type") == "text_delta":
                msg["content"][idx]["text"] += d["text"]
            elif d.get("type") == "input_json_delta":
                partial[idx] = partial.get(idx, "") + d["partial_json"]
            elif d.get("type") == "thinking_delta":
                msg["content"][idx]["thinking"] += d["thinking"]
            elif d.get("type") == "signature_delta":
                msg["content"][idx]["signature"] = d["signature"]
            elif d.get("type") == "citations_delta":
                block = msg["content"][idx]
                block["citations"] = [*(block.get("citations") or []), d["citation"]]
        elif t == "content_block_stop":
            idx = data["index"]
            if idx in partial:
                try:
                    msg["content"][idx]["input"] = json.loads(partial.pop(idx) or "{}")
                except json.JSONDecodeError as e:
                    issues.append(f"/{i}: input_json_delta chunks are not JSON ({e.msg})")
        elif t == "message_delta":
            for k, v in data.get("delta", {}).items():
                msg[k] = v
            msg["usage"].update(data.get("usage") or {})
    return msg, issues


def check_sdk(c: Cassette) -> Iterator[tuple[str, str]]:
    for i, ex in enumerate(c.exchanges):
        path = str(ex.request.get("path", "")).split("?")[0]
        resp = ex.response
        base = f"/exchanges/{i}/response"
        if resp.get("status") != 200:
            continue
        if path == "/v1/messages":
            if "events" in resp:
                yield from _check_message_stream(resp["events"], f"{base}/events")
            else:
                yield from _parse("message", resp.get("body"), f"{base}/body")
        elif _SESSION_STREAM.match(path) and "events" in resp:
            for j, ev in enumerate(resp["events"]):
                yield from _parse("session_stream", ev.get("data"), f"{base}/events/{j}/data")
        elif _SESSION_EVENTS.match(path) and isinstance(resp.get("body"), dict):
            if ex.request.get("method", "").upper() == "POST":
                yield from _parse("session_send", resp["body"], f"{base}/body")
            else:
                for j, item in enumerate(resp["body"].get("data") or []):
                    yield from _parse("session_event", item, f"{base}/body/data/{j}")


def _check_message_stream(events: list[Any], ptr: str) -> Iterator[tuple[str, str]]:
    errored = False
    for j, ev in enumerate(events):
        if not isinstance(ev, dict) or not isinstance(ev.get("data"), dict):
            yield f"{ptr}/{j}", "an event needs 'event' and a JSON object 'data'"
            continue
        name, data = ev.get("event"), ev["data"]
        if data.get("type") != name:
            yield f"{ptr}/{j}/event", f"event name {name!r} differs from data.type {data.get('type')!r}"
        if name == "ping":
            continue
        if name == "error":
            errored = True
            continue
        yield from _parse("stream_event", data, f"{ptr}/{j}/data")
    msg, issues = reassemble([e for e in events if isinstance(e, dict)])
    for issue in issues:
        pos, _, text = issue.partition(": ")
        yield f"{ptr}{pos}", text
    if msg is not None and not errored and not issues:
        for p, m in _parse("message", msg, ptr):
            yield p, f"reassembled message: {m}"
        sdk_msg, why = sdk_accumulate(events)
        if why:
            yield ptr, f"the SDK's stream accumulator fails: {why}"
        elif sdk_msg is not None:
            differs = sorted(k for k in set(msg) | set(sdk_msg)
                             if msg.get(k) != sdk_msg.get(k) and not (k not in msg and sdk_msg[k] is None))
            if differs:
                yield ptr, f"the SDK accumulates a different message (fields {differs})"


def sdk_accumulate(events: list[Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The final message as the SDK's own ``BetaMessageStream`` accumulates ``events``."""
    try:
        import httpx2
        from anthropic.lib.streaming._beta_messages import accumulate_event
    except ImportError:  # pragma: no cover - a different SDK layout: the own reassembly stands
        return None, None
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    try:
        for ev in events:
            if ev.get("event") in ("ping", "error"):
                continue
            snapshot = accumulate_event(event=ev["data"], current_snapshot=snapshot, json_bufs=bufs,
                                        request_headers=httpx2.Headers())
    except Exception as e:  # the SDK raising on our events is exactly what to report
        return None, f"{type(e).__name__}: {e}"
    return (snapshot.to_dict(mode="json") if snapshot is not None else None), None
