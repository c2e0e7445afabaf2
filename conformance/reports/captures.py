"""Captured traffic directories (one artifact per file) as conversations for ``tooluse diff``.

A capture file wraps one artifact: ``{"source": ..., "kind": "request|response|sse_events|error",
"note": ..., "data": <verbatim JSON>}`` (the layout of ``../shared/real_traffic``). Files are
ordered by name (``<source>__<nnn>__<test>_i<k>_<kind>...json``); each request is paired with the
artifact after it (a response without a request is kept, with no request body), and the
exchanges of the same test form one conversation. The result is a list of
:class:`~simulator.cassette.Cassette` built by the cassette parser, so the traffic statistics and
the rule replay treat captures and cassettes alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from simulator.cassette import Cassette, parse_cassette

_NAME = re.compile(r"^(?P<src>[^_]+)__(?P<num>\d+)__(?P<rest>.*)\.json$")
_ITER = re.compile(r"(_i\d+)?_(request|reques|response|respon|sse|error)(_\d{3})?$")
_STATUS = re.compile(r"_(?:response|error)_(\d{3})$")
_KINDS = ("request", "response", "sse_events", "error")
_SOURCE = {"document": "PROTOCOL.md", "section": "captured traffic", "tag": "3P"}


def is_capture(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") in _KINDS and "data" in data


def is_capture_dir(path: Path) -> bool:
    """A directory whose first JSON file (by name) is a capture artifact."""
    for p in sorted(path.glob("*.json")):
        try:
            return is_capture(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return False
    return False


def _conversation(stem: str) -> str:
    m = _NAME.match(stem + ".json")
    rest = m.group("rest") if m else stem
    return f"{m.group('src')}/{_ITER.sub('', rest)}" if m else _ITER.sub("", rest)


def _request(data: Any) -> dict[str, Any]:
    """``{"method", "url", "headers"?, "body"}`` wrappers, or a bare request body."""
    if isinstance(data, dict) and "url" in data and "body" in data:
        path = urlsplit(str(data["url"])).path or "/v1/messages"
        raw = data.get("headers")
        headers: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return {"method": str(data.get("method", "POST")), "path": path,
                "headers": {str(k).lower(): str(v) for k, v in headers.items()},
                "body": data["body"] if isinstance(data["body"], dict) else {}}
    return {"method": "POST", "path": "/v1/messages", "headers": {},
            "body": data if isinstance(data, dict) else {}}


def _response(kind: str, data: Any, stem: str) -> dict[str, Any]:
    m = _STATUS.search(stem)
    if kind == "sse_events":
        return {"status": 200, "headers": {}, "events": data if isinstance(data, list) else []}
    status = int(m.group(1)) if m else (400 if kind == "error" else 200)
    return {"status": status, "headers": {}, "body": data}


def load_capture_dir(path: str | Path) -> list[Cassette]:
    """Conversations of a capture directory (unreadable or unpaired files are skipped)."""
    conversations: dict[str, list[dict[str, Any]]] = {}
    models: dict[str, str] = {}
    pending: tuple[str, dict[str, Any]] | None = None
    for p in sorted(Path(path).glob("*.json"), key=lambda p: p.name):
        try:
            art = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not is_capture(art):
            continue
        conv = _conversation(p.stem)
        if art["kind"] == "request":
            pending = (conv, _request(art["data"]))
            body = pending[1]["body"]
            if isinstance(body.get("model"), str):
                models.setdefault(conv, body["model"])
            continue
        # a response without its request (some sources kept only responses) still counts as
        # traffic; with no request body the rule replay skips it
        request = pending[1] if pending is not None and pending[0] == conv else {
            "method": "POST", "path": "/v1/messages"}
        conversations.setdefault(conv, []).append(
            {"request": request, "response": _response(art["kind"], art["data"], p.stem)})
        pending = None
    return [parse_cassette({"version": 1, "id": cid, "title": cid, "source": _SOURCE,
                            "model": models.get(cid), "exchanges": exchanges},
                           Path(path) / cid)
            for cid, exchanges in sorted(conversations.items())]
