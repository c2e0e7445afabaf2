"""Validate every request body, response body and event list of a cassette."""

from __future__ import annotations

from typing import Any

from ..cassette import Cassette
from ._detect import detect_kind
from ._validate import validate
from ._violation import Violation


def _request_kind(path: str, body: Any) -> str | None:
    if path.rstrip("/").endswith("/v1/messages"):
        return "request"
    if path.rstrip("/").endswith("/v1/messages/count_tokens"):
        return "count_tokens_request"
    kind = detect_kind(body)
    return None if kind == "unknown" else kind


def _is_messages(path: str) -> bool:
    return "/v1/messages" in path and "count_tokens" not in path


def validate_cassette(cassette: Cassette, *, strict: bool = False) -> list[Violation]:
    """Violations of every body and SSE event list in ``cassette``, with pointers into its file
    (``/exchanges/0/response/body/content/1/...``). Bodies whose kind cannot be told are skipped;
    Managed Agents event lists (``{"events": [...]}``) are checked event by event."""
    out: list[Violation] = []
    for j, tool in enumerate(cassette.tools):
        out += [v.at(f"/tools/{j}") for v in validate(tool, "tool_definition", strict=strict)]
    for ex in cassette.exchanges:
        base = f"/exchanges/{ex.index}"
        path = str(ex.request.get("path", ""))
        body = ex.request.get("body")
        if isinstance(body, dict) and isinstance(body.get("events"), list) and "/sessions/" in path:
            for k, ev in enumerate(body["events"]):
                out += [v.at(f"{base}/request/body/events/{k}")
                        for v in validate(ev, "ma_event", strict=strict)]
        elif body is not None:
            kind = _request_kind(path, body)
            if kind:
                out += [v.at(f"{base}/request/body") for v in validate(body, kind, strict=strict)]
        resp = ex.response
        status = resp.get("status", 200)
        if "events" in resp:
            events = resp["events"]
            if "/sessions/" in path:
                for k, ev in enumerate(events):
                    data = ev.get("data") if isinstance(ev, dict) and "data" in ev else ev
                    out += [v.at(f"{base}/response/events/{k}/data")
                            for v in validate(data, "ma_event", strict=strict)]
            else:
                out += [v.at(f"{base}/response/events")
                        for v in validate(events, "sse_events", strict=strict)]
        elif "body" in resp and resp["body"] is not None:
            rb = resp["body"]
            if isinstance(status, int) and status >= 400:
                kind = "error"
            elif _is_messages(path):
                kind = "response"
            else:
                kind = detect_kind(rb)
            if kind != "unknown":
                out += [v.at(f"{base}/response/body") for v in validate(rb, kind, strict=strict)]
    return out
