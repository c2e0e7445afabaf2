"""Recording what the SDK exchanges: an ``httpx2`` transport under the unmodified ``anthropic``
client, and the per-scenario cassette it fills.

Each response is read whole before the SDK sees it (a stream is parsed from the bytes received;
time to first token is not measured). Every exchange is redacted as the recorder does
(:class:`simulator.secrets.SecretScanner`: credential headers dropped, credential values
replaced) before it is kept, and the cassette is scanned again when written
(:func:`simulator.record.save_cassette` refuses one that still holds a credential).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx2

from simulator.cassette import CASSETTE_VERSION
from simulator.envelope import sse_lines
from simulator.record import HOP_BY_HOP, KEPT_REQUEST_HEADERS, _sse, save_cassette
from simulator.secrets import SecretScanner


def _json_or_text(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class RecordingTransport(httpx2.BaseTransport):
    """Forwards to ``inner`` and keeps every exchange (redacted) in :attr:`exchanges`."""

    def __init__(self, inner: httpx2.BaseTransport, scanner: SecretScanner) -> None:
        self.inner, self.scanner = inner, scanner
        self.exchanges: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        upstream = self.inner.handle_request(request)
        try:
            raw = upstream.read()
        finally:
            upstream.close()
        headers = {k.lower(): v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
        response: dict[str, Any] = {"status": upstream.status_code, "headers": headers}
        if headers.get("content-type", "").startswith("text/event-stream"):
            lines = sse_lines(raw.decode("utf-8", errors="replace"))  # CR/LF only, not U+2028
            response["events"] = [{"event": e.event, "data": e.data} for e in _sse(iter(lines + [""]))]
        else:
            response["body"] = _json_or_text(raw)
        kept = {"method": request.method, "path": request.url.path,
                "headers": {k.lower(): v for k, v in request.headers.items()
                            if k.lower() in KEPT_REQUEST_HEADERS},
                "query": dict(request.url.params), "body": _json_or_text(body)}
        with self._lock:
            self.exchanges.append(self.scanner.redact({"request": kept, "response": response}))
        passed = [(k, v) for k, v in upstream.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        return httpx2.Response(upstream.status_code, headers=passed, content=raw, request=request, extensions=upstream.extensions)

    def close(self) -> None:
        """Nothing to close: ``inner`` (its connection pool and TLS context, costly to build) is
        shared by a run's scenarios and closed by the run."""


def cassette_of(scenario_id: str, model: str, exchanges: list[dict[str, Any]],
                tools: list[Any]) -> dict[str, Any]:
    """The probe's recording of one scenario as a cassette (``probe/<scenario id>``)."""
    return {
        "version": CASSETTE_VERSION, "id": f"probe/{scenario_id}",
        "title": f"{scenario_id} probed with {model}",
        "source": {"document": "recorded", "section": f"tooluse probe {model}", "tag": "?"},
        "model": model, "tools": tools,
        "streamed": any("events" in e["response"] for e in exchanges),
        "tags": {"family": "probe", "tool_type": scenario_id.split("/")[1]
                 if scenario_id.count("/") >= 2 else "custom", "scenario": scenario_id},
        "exchanges": exchanges,
    }


def write_cassette(target: Path, cassette: dict[str, Any], scanner: SecretScanner) -> Path:
    """Scan and write (raises :class:`simulator.record.SecretLeak`, writing nothing, on a
    credential)."""
    return save_cassette(cassette, target, scanner)
