"""Captures of live API traffic (the layout of ``../shared/real_traffic``), paired by recording.

Each capture file wraps one artifact: ``{"source": "<repo>/<path>@<commit>", "kind":
"request|response|sse_events|error", "note": ..., "data": <verbatim JSON>}``. The ``source``
names the recording (one cassette or snapshot file at one commit); the ``note`` names the
artifact's place in it (``interaction 3``, ``exchange 1``, ``step 2``). A request is paired with
the answer of the *same recording and index*, never by file name: file numbers interleave
recordings, and a recorder may keep an answer whose request it dropped (or the other way round).

    caps = load_captures(Path("../shared/real_traffic"))
    for rec in recordings(caps):               # Recording(source, exchanges in index order)
        for ex in rec.exchanges:                # CapturedExchange(index, request, answer)
            ex.body, ex.headers, ex.path, ex.status, ex.message

``CapturedExchange.message`` is the answer as a Message (an ``sse_events`` answer assembled), for
learning state from earlier answers of the same recording.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KINDS = ("request", "response", "sse_events", "error")
_INDEX = re.compile(r"\b(?:interaction|exchange|step) (\d+)\b")
_STATUS = re.compile(r"\bHTTP (?:status )?(\d{3})\b")
_NAME_STATUS = re.compile(r"_(?:response|error)_(\d{3})\.json$")
#: A ``date`` response header a recorder kept in the note (``"date": "Wed, 20 Aug 2025 …"``).
_DATE = re.compile(r'"date":\s*"([A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} [\d:]{8} GMT)"',
                   re.IGNORECASE)


class CaptureError(ValueError):
    """A file that is not a capture artifact (named in the message)."""


@dataclass(frozen=True)
class Capture:
    """One capture file."""

    #: ``<prefix>__<nnn>`` (``pydai__055``): the short name the docs and tests use.
    id: str
    name: str
    #: The recording: ``<repo>/<path>@<commit>``.
    source: str
    kind: str
    #: Interaction / exchange / step index inside the recording (None when the note has none).
    index: int | None
    note: str
    data: Any

    @property
    def prefix(self) -> str:
        return self.id.split("__")[0]

    @property
    def status(self) -> int | None:
        """The HTTP status of an answer (200 for a stream; from the note, else the file name)."""
        if self.kind == "request":
            return None
        m = _STATUS.search(self.note) or _NAME_STATUS.search(self.name)
        if m:
            return int(m.group(1))
        return 200 if self.kind in ("response", "sse_events") else None


def recorded_on(capture: Capture) -> date | None:
    """The day the capture was recorded, when its recorder kept the answer's ``date`` header
    (in the note, or in a ``headers`` mapping of the data); None when unknown."""
    texts = [capture.note]
    d = capture.data
    h = d.get("headers") if isinstance(d, dict) else None
    if isinstance(h, dict):
        texts += [f'"date": "{v}"' for k, v in h.items() if str(k).lower() == "date"]
    for t in texts:
        m = _DATE.search(t)
        if m:
            try:
                return parsedate_to_datetime(m.group(1)).date()
            except (TypeError, ValueError):
                continue
    return None


def read_capture(path: Path) -> Capture:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise CaptureError(f"{path}: not JSON ({e})") from e
    if not (isinstance(obj, dict) and obj.get("kind") in KINDS and "data" in obj
            and isinstance(obj.get("source"), str)):
        raise CaptureError(f"{path}: not a capture artifact (needs source, kind in {KINDS}, data)")
    note = str(obj.get("note") or "")
    m = _INDEX.search(note)
    return Capture("__".join(path.name.split("__")[:2]), path.name, obj["source"], obj["kind"],
                   int(m.group(1)) if m else None, note, obj["data"])


def load_captures(root: Path) -> list[Capture]:
    """Every capture under ``root`` (``*.json``, in file-name order)."""
    if not root.is_dir():
        raise CaptureError(f"{root}: no such captures directory")
    return [read_capture(p) for p in sorted(root.glob("*.json"))]


@dataclass(frozen=True)
class CapturedExchange:
    """A request and its real answer (either may be missing from the captures)."""

    source: str
    index: int | None
    request: Capture | None
    answer: Capture | None

    @property
    def id(self) -> str:
        """The request's capture id (else the answer's)."""
        c = self.request or self.answer
        assert c is not None
        return c.id

    @property
    def _wrapped(self) -> dict[str, Any] | None:
        d = self.request.data if self.request is not None else None
        return d if isinstance(d, dict) and "body" in d and ("url" in d or "method" in d) else None

    @property
    def body(self) -> Any:
        """The request body (a bare body capture is its own body)."""
        if self.request is None:
            return None
        w = self._wrapped
        return w["body"] if w is not None else self.request.data

    @property
    def method(self) -> str:
        w = self._wrapped
        return str(w.get("method", "POST")).upper() if w is not None else "POST"

    @property
    def path(self) -> str:
        w = self._wrapped
        url = str(w.get("url") or "") if w is not None else ""
        return (urlsplit(url).path.rstrip("/") or "/v1/messages") if url else "/v1/messages"

    @property
    def headers(self) -> dict[str, str] | None:
        """Request headers as recorded (lower-case names); None when the recorder kept none, or
        kept a partial set: every request the API answers carries ``anthropic-version``, so a set
        without it is one the recorder filtered (go-vcr keeps a few generic headers, R's vcr
        writes ``{}``), and says nothing of the ``anthropic-*`` headers that were sent."""
        w = self._wrapped
        h = w.get("headers") if w is not None else None
        if not isinstance(h, dict):
            return None
        low = {str(k).lower(): str(v) for k, v in h.items()}
        return low if "anthropic-version" in low else None

    @property
    def status(self) -> int | None:
        return self.answer.status if self.answer is not None else None

    @property
    def error(self) -> dict[str, Any] | None:
        """``{"type", "message"}`` of an error answer."""
        d = self.answer.data if self.answer is not None else None
        e = d.get("error") if isinstance(d, dict) else None
        return e if isinstance(e, dict) else None

    @property
    def message(self) -> dict[str, Any] | None:
        """The answer as a Message (a stream assembled); None for errors and non-messages."""
        a = self.answer
        if a is None or a.kind == "error":
            return None
        d = a.data
        if a.kind == "sse_events" or (isinstance(d, str) and "data:" in d):
            from .http import SSEEvent
            from .sse import assemble_message
            try:
                return assemble_message([SSEEvent(name, data) for name, data in _events(d)])
            except (ValueError, KeyError, TypeError, AttributeError):
                return None
        return d if isinstance(d, dict) and d.get("type") == "message" else None


def _events(data: Any) -> list[tuple[str, Any]]:
    """(event name, payload) of a stream capture: a list of ``{"event", "data"}`` or the raw SSE
    text a recorder kept as it came (``event:``/``data:`` lines; payloads parsed here)."""
    if isinstance(data, str):
        from .envelope import parse_raw_sse
        out: list[tuple[str, Any]] = []
        for name, raw in parse_raw_sse(data):
            try:
                payload = json.loads(raw)
            except ValueError:
                continue
            out.append((str(payload.get("type", name)) if isinstance(payload, dict) else name,
                        payload))
        return out
    return [(str(e.get("event")), e.get("data")) for e in data or () if isinstance(e, dict)]


@dataclass
class Recording:
    """The exchanges of one recording, in index order (unindexed ones last, in file order)."""

    source: str
    exchanges: list[CapturedExchange] = field(default_factory=list)

    @property
    def prefix(self) -> str:
        return self.exchanges[0].id.split("__")[0] if self.exchanges else ""

    @property
    def recorded_on(self) -> date | None:
        """The earliest day any of its captures says it was recorded (None: unknown)."""
        days = [d for ex in self.exchanges for c in (ex.request, ex.answer) if c is not None
                for d in (recorded_on(c),) if d is not None]
        return min(days) if days else None


def recordings(captures: Iterable[Capture]) -> list[Recording]:
    """Captures grouped by ``source`` and paired by index: the request and the answer of the same
    recording and index form one exchange. Captures without an index pair only when their
    recording holds exactly one request and one answer (a ``{request, response}`` wrapper);
    otherwise each stands alone."""
    by_source: dict[str, list[Capture]] = {}
    for c in captures:
        by_source.setdefault(c.source, []).append(c)
    out = []
    for source, caps in by_source.items():
        rec = Recording(source)
        indexed: dict[int, dict[str, Capture]] = {}
        loose: list[Capture] = []
        for c in caps:
            if c.index is None:
                loose.append(c)
                continue
            slot = indexed.setdefault(c.index, {})
            role = "request" if c.kind == "request" else "answer"
            if role in slot:
                raise CaptureError(f"{c.name}: a second {role} for index {c.index} of {source}")
            slot[role] = c
        for i in sorted(indexed):
            slot = indexed[i]
            rec.exchanges.append(CapturedExchange(source, i, slot.get("request"),
                                                  slot.get("answer")))
        reqs = [c for c in loose if c.kind == "request"]
        answers = [c for c in loose if c.kind != "request"]
        if len(reqs) == 1 and len(answers) == 1:
            rec.exchanges.append(CapturedExchange(source, None, reqs[0], answers[0]))
        else:
            rec.exchanges.extend(CapturedExchange(source, None, c if c.kind == "request" else None,
                                                  None if c.kind == "request" else c)
                                 for c in loose)
        out.append(rec)
    return out


def exchanges(captures: Iterable[Capture]) -> list[CapturedExchange]:
    """Every exchange of every recording (see :func:`recordings`)."""
    return [ex for rec in recordings(captures) for ex in rec.exchanges]


__all__ = ["Capture", "CaptureError", "CapturedExchange", "Recording", "exchanges",
           "load_captures", "read_capture", "recorded_on", "recordings"]
