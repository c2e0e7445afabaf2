"""Recording: a proxy handler that forwards to a real upstream and writes cassettes.

Each exchange is redacted (:mod:`simulator.secrets`) before it is kept, and every cassette is
scanned again before it is written: one that still holds a credential is refused
(:class:`SecretLeak`, naming the JSON pointers and kinds, never the values) and nothing is
written. A new cassette starts with each ``POST /v1/messages`` whose ``messages`` holds a single
message (a new conversation); other traffic joins the current one. Cassettes are rewritten after
every exchange, so an interrupted recording keeps what it has.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .cassette import CASSETTE_VERSION, parse_cassette
from .envelope import iter_sse_lines
from .errors import api_error
from .http import SimRequest, SimResponse, SSEEvent
from .registry import TOOLS
from .secrets import SecretScanner

log = logging.getLogger("tooluse.record")

#: Request headers worth keeping in a cassette (matchers and rules read them).
KEPT_REQUEST_HEADERS = ("anthropic-version", "anthropic-beta", "content-type", "accept")
#: Hop-by-hop and transport headers never forwarded or recorded.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
                        "trailer", "upgrade", "host", "content-length", "content-encoding",
                        "accept-encoding"})


_FILE_CONTENT = re.compile(r"^/v1/files/(?P<id>[^/]+)/content/?$")
_FILE_METADATA = re.compile(r"^/v1/files/(?P<id>[^/]+)/?$")


class SecretLeak(ValueError):
    """A cassette still holds a credential; it was not written."""

    def __init__(self, target: Path, found: list[tuple[str, str]]) -> None:
        self.target, self.found = target, found
        where = ", ".join(f"{ptr} ({kind})" for ptr, kind in found[:10])
        super().__init__(f"refusing to write {target}: it still contains {len(found)} "
                         f"credential(s) at {where}; remove them or add a --secret-pattern")


def save_cassette(cassette: dict[str, Any], target: Path, scanner: SecretScanner) -> Path:
    """Scan, check the format, and write atomically; raise :class:`SecretLeak` on a credential."""
    found = scanner.find(cassette)
    if found:
        raise SecretLeak(target, found)
    parse_cassette(cassette, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(cassette, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


def _body_value(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _sse(lines: Iterator[str]) -> Iterator[SSEEvent]:
    name, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                payload = "\n".join(data)
                try:
                    yield SSEEvent(name, json.loads(payload))
                except ValueError:
                    yield SSEEvent(name, payload)
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


class Recorder:
    """A :data:`~simulator.http.Handler` that proxies to ``upstream`` and records cassettes."""

    def __init__(self, upstream: str, out_dir: str | Path, *, scanner: SecretScanner | None = None,
                 client: httpx2.Client | None = None,
                 on_write: Callable[[Path], None] | None = None) -> None:
        self.on_write = on_write
        self.upstream = upstream.rstrip("/")
        self.out_dir = Path(out_dir)
        self.scanner = scanner or SecretScanner()
        self.client = client or httpx2.Client(timeout=httpx2.Timeout(600, connect=10))
        self.stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.written: list[Path] = []
        self.refused: list[SecretLeak] = []
        self._exchanges: list[dict[str, Any]] = []
        self._files: dict[str, dict[str, Any]] = {}
        self._count = 0

    def __call__(self, request: SimRequest) -> SimResponse:
        headers = {k: v for k, v in request.headers.items() if k not in HOP_BY_HOP}
        try:
            upstream = self.client.send(self.client.build_request(
                request.method, self.upstream + request.path, params=request.query,
                headers=headers, content=request.body), stream=True)
        except httpx2.HTTPError as e:
            return api_error(502, "api_error", f"upstream {urlsplit(self.upstream).netloc} "
                             f"unreachable: {type(e).__name__}")
        out_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
        if upstream.headers.get("content-type", "").startswith("text/event-stream"):
            return SimResponse(upstream.status_code, headers=out_headers,
                               events=self._relay(request, upstream, out_headers))
        raw = upstream.read()
        upstream.close()
        if request.method == "GET" and upstream.status_code == 200:
            self._note_file(request.path, raw, out_headers.get("content-type", ""))
        self._record(request, {"status": upstream.status_code, "headers": out_headers,
                               "body": None if _FILE_CONTENT.match(request.path)  # in "files"
                               else _body_value(raw, out_headers.get("content-type", ""))})
        return SimResponse(upstream.status_code, headers=out_headers, body=raw)

    def _note_file(self, path: str, raw: bytes, content_type: str) -> None:
        """Keep downloaded files (and their metadata) in the cassette's ``files`` map, which the
        simulator's Files API serves on replay."""
        if (m := _FILE_CONTENT.match(path)) is not None:
            entry = self._files.setdefault(m["id"], {})
            entry["content_base64"] = base64.b64encode(raw).decode()
            entry.setdefault("mime_type", content_type.split(";")[0] or "application/octet-stream")
            entry["downloadable"] = True
        elif (m := _FILE_METADATA.match(path)) is not None:
            meta = _body_value(raw, content_type)
            if isinstance(meta, dict):
                entry = self._files.setdefault(m["id"], {})
                entry.update({k: meta[k] for k in ("filename", "mime_type", "downloadable",
                                                   "created_at") if k in meta})

    def _relay(self, request: SimRequest, upstream: httpx2.Response,
               headers: dict[str, str]) -> Iterator[SSEEvent]:
        events: list[dict[str, Any]] = []
        try:
            # Lines split at CR/LF only (httpx2's iter_lines also splits at U+2028 and U+0085,
            # which live payloads carry raw).
            for event in _sse(iter_sse_lines(upstream.iter_bytes())):
                events.append({"event": event.event, "data": event.data})
                yield event
        finally:
            upstream.close()
            self._record(request, {"status": upstream.status_code, "headers": headers,
                                   "events": events})

    def _record(self, request: SimRequest, response: dict[str, Any]) -> None:
        ctype = request.headers.get("content-type", "")
        # an upload's bytes stay out of the cassette (size, privacy); replay does not need them
        body = None if ctype.startswith("multipart/") else _body_value(request.body, ctype)
        if (request.method == "POST" and request.path.rstrip("/") == "/v1/messages"
                and isinstance(body, dict) and len(body.get("messages") or []) == 1
                and any(e["request"]["path"] == "/v1/messages" for e in self._exchanges)):
            self._exchanges, self._files, self._count = [], {}, self._count + 1
        kept_request = {"method": request.method, "path": request.path,
                        "headers": {k: v for k, v in request.headers.items()
                                    if k in KEPT_REQUEST_HEADERS},
                        "query": dict(request.query), "body": body}
        kept_response = {**response, "headers": {k.lower(): v for k, v in
                                                 response["headers"].items()}}
        self._exchanges.append(self.scanner.redact({"request": kept_request,
                                                    "response": kept_response}))
        self.save()

    def _first_body(self) -> dict[str, Any]:
        return next((e["request"]["body"] for e in self._exchanges
                     if isinstance(e["request"].get("body"), dict)), {})

    def cassette_id(self) -> str:
        """``recorded/<tool type>/<stamp>-<n>``: the corpus's ``<family>/<tool_type>/<scenario>``
        shape, with the first built-in tool type of the conversation (else ``custom``)."""
        tools = self._first_body().get("tools") or []
        types = [t.get("type") for t in tools if isinstance(t, dict)]
        tool_type = next((t for t in types if t in TOOLS and t != "custom"), "custom")
        return f"recorded/{tool_type}/{self.stamp}-{self._count:03d}"

    def cassette(self) -> dict[str, Any]:
        """The current conversation as a cassette (already redacted). Its ``source`` says it was
        recorded: cite the documented behaviour before promoting it to a fixture."""
        first = self._first_body()
        host = urlsplit(self.upstream).hostname or "upstream"
        cid = self.cassette_id()
        return {
            "version": CASSETTE_VERSION, "id": cid,
            "title": f"Conversation {self._count} recorded from {host}",
            "source": {"document": "recorded", "section": f"{host} {self.stamp}", "tag": "?"},
            "model": first.get("model"), "tools": first.get("tools", []),
            "streamed": any("events" in e["response"] for e in self._exchanges),
            "tags": {"family": "recorded", "tool_type": cid.split("/")[1],
                     "recorded_at": self.stamp},
            **({"files": self.scanner.redact(self._files)} if self._files else {}),
            "exchanges": self._exchanges,
        }

    def save(self) -> Path | None:
        """Write the current cassette (``DIR/<id>.json``); a refused one is logged and kept in
        :attr:`refused`."""
        if not self._exchanges:
            return None
        target = self.out_dir / f"{self.cassette_id()}.json"
        try:
            save_cassette(self.cassette(), target, self.scanner)
        except SecretLeak as e:
            log.error("%s", e)
            self.refused.append(e)
            return None
        if target not in self.written:
            self.written.append(target)
            if self.on_write is not None:
                self.on_write(target)
        return target

    def close(self) -> None:
        self.client.close()
