"""Server-sent events: synthesize a faithful stream from a message, and assemble one back.

:func:`synthesize_events` turns a Messages API ``message`` into the event sequence the API streams
(PROTOCOL.md §6; seed 000 § Streaming), with the envelope of live streams (measured over the 136
live streams of ``../shared/real_traffic``; ``tests/test_stream_fidelity.py`` holds the
measurement)::

    message_start   {"message": {..., "content": [], "stop_reason": null}}: no ``container``
                    (live: never there, 0 of 136); usage without ``server_tool_use`` (0 of 136)
                    and the counts of the message end (iterations, output_tokens_details); its
                    ``output_tokens`` as live streams count them when the first block starts
                    (:func:`start_output_tokens`)
    per block:      content_block_start → content_block_delta* → content_block_stop
                    text: text_delta chunks; tool_use/server_tool_use: "input": {} then
                    input_json_delta chunks (the first is ""), the input as ``json.dumps`` spaces
                    it (``{"command": "ls"}``: 123 of 127 live inputs), except calls made from
                    code (``caller`` not direct), which arrive whole; thinking: thinking_delta
                    chunks then signature_delta; compaction: one compaction_delta; result blocks
                    and anything else: whole in the start event
    ping            drawn per stream as live streams send them (:mod:`simulator.envelope`): the
                    first right after the first ``content_block_start`` or after its first or
                    second delta, or none, or one after each of the first 3 to 7 deltas; later
                    ones rarely, anywhere; mostly none when the first block arrives whole (a
                    continuation opening with a result: 4 of 6 live such streams have no ping).
                    Written ``{"type": "ping"}``; every other payload padded with 0 to 15 spaces
                    before its closing brace, as the API pads them
    message_delta   {"delta": {"stop_reason", "stop_sequence", "container"?}, "usage": cumulative,
                    without ``cache_creation``, ``service_tier``, ``inference_geo`` (live: 0 of
                    136; they are in message_start)}
    message_stop

Chunk sizes vary as live ones do, each stream with its own scale (text chunks' 90th percentile
15 to 162 characters; tool input JSON 2 to 12, or coarser in some streams; see
:class:`Chunker`), drawn from a random generator seeded by ``seed`` (default: the message id), so
a stream is the same at every run. ``chunk=N`` cuts fixed N-character chunks. ``envelope``
names another profile (:data:`simulator.envelope.PROFILES`): ``minimal`` or ``adversarial``.

:func:`assemble_message` folds events (``SSEEvent``, ``{"event", "data"}`` or bare payloads) back
into the message, as the SDK's accumulator does; an ``error`` event raises :class:`StreamError`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .envelope import (
    JSON_FINE,
    LIVE,
    TEXT_SHAPE,
    EnvelopeProfile,
    draw_line_endings,
    draw_pad,
    ping_slots,
    profile_named,
    rng_for,
)
from .http import SSEEvent
from .stream_blocks import TOOL_INPUT_BLOCKS, called_by_code, streams_deltas

#: ``message_start.usage.output_tokens`` of live streams, by their first block: one the model
#: writes in deltas (text, thinking, compaction: 1 to 8, 63 % above 1) or a call (tool_use,
#: server_tool_use, mcp_tool_use: up to 71, the call's tokens counted before it streams); a
#: stream opening with a block that arrives whole (a result, a fallback) starts at 1 (6 of 6).
#: Value → number of live streams [3P: the 136 live streams of ``../shared/real_traffic``].
WRITTEN_START_TOKENS: Mapping[int, int] = {1: 33, 2: 11, 3: 11, 4: 3, 5: 8, 6: 5, 7: 5, 8: 13}
CALL_START_TOKENS: Mapping[int, int] = {
    1: 6, 3: 2, 7: 1, 8: 3, 10: 1, 12: 1, 16: 4, 20: 1, 21: 2, 22: 1, 23: 1, 25: 5, 26: 4, 35: 1,
    37: 1, 38: 1, 40: 1, 42: 1, 55: 1, 62: 1, 69: 1, 71: 1}
#: Usage keys live streams send in ``message_start`` (the others come in ``message_delta``).
START_USAGE_KEYS = frozenset({"input_tokens", "output_tokens", "cache_creation_input_tokens",
                              "cache_read_input_tokens", "cache_creation", "service_tier",
                              "inference_geo"})
#: Usage keys live streams never repeat in ``message_delta`` (sent once, in ``message_start``).
START_ONLY_USAGE_KEYS = frozenset({"cache_creation", "service_tier", "inference_geo"})
_WRITTEN_FIRST = frozenset({"text", "thinking", "compaction"})


class StreamError(ValueError):
    """An ``error`` event in a stream (it can arrive after HTTP 200)."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error = dict(error)
        super().__init__(f"{error.get('type')}: {error.get('message')}")


class Chunker:
    """Cuts text and JSON into chunks: fixed ``size``, or lengths drawn as the envelope
    ``profile`` says (live: each stream its own scale, drawn from the live range), from a
    generator seeded by ``seed`` (reproducible)."""

    def __init__(self, seed: str | int, size: int | None = None,
                 profile: EnvelopeProfile = LIVE) -> None:
        if size is not None and size < 1:
            raise ValueError(f"chunk={size}: a chunk needs at least 1 character")
        self.size = size if size is not None else profile.chunk
        digest = hashlib.sha256(str(seed).encode("utf-8")).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        #: This stream's scale: the 90th percentile of its text chunks, the largest of its JSON
        #: chunks (drawn once per stream, from the profile's spans).
        self.text_p90 = profile.text_p90.draw(self.rng)
        coarse = self.rng.random() < profile.json_coarse.draw(self.rng)
        self.json_largest = round(profile.json_largest.draw(self.rng)) if coarse else 0

    def _length(self, quantiles: Sequence[float], scale: float = 1.0) -> int:
        """A length of the distribution ``quantiles`` (times ``scale``) describes (linear between
        quantiles)."""
        pos = self.rng.random() * (len(quantiles) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(quantiles) - 1)
        return max(1, round(scale * (quantiles[lo] + (pos - lo) * (quantiles[hi] - quantiles[lo]))))

    def _json_length(self) -> int:
        if self.json_largest > JSON_FINE[1]:
            return self.rng.randint(JSON_FINE[0], self.json_largest)
        return self.rng.randint(*JSON_FINE)

    def cut(self, text: str, *, json_text: bool = False) -> list[str]:
        if self.size == 0:  # whole
            return [text] if text else []
        out, i = [], 0
        while i < len(text):
            if self.size is not None:
                n = self.size
            elif json_text:
                n = self._json_length()
            else:
                n = self._length(TEXT_SHAPE, self.text_p90)
            out.append(text[i:i + n])
            i += n
        return out

    def pick(self, weights: Mapping[int, int]) -> int:
        values = sorted(weights)
        return self.rng.choices(values, weights=[weights[v] for v in values])[0]


def _ev(data: dict[str, Any]) -> SSEEvent:
    return SSEEvent(str(data["type"]), data)


def _block_events(index: int, block: Mapping[str, Any], chunks: Chunker) -> Iterator[SSEEvent]:
    t = block.get("type")
    if t == "text":
        start: dict[str, Any] = {k: v for k, v in block.items() if k != "citations"}
        start["text"] = ""
        if "citations" in block:
            start["citations"] = None if block["citations"] is None else []
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        for c in block.get("citations") or []:
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "citations_delta", "citation": c}})
        for part in chunks.cut(str(block.get("text", ""))):
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": part}})
    elif t in TOOL_INPUT_BLOCKS and called_by_code(block):
        # A call made from code arrives whole, input included, with no deltas (real traffic:
        # pydai__456, vercel__065, vercel__090).
        yield _ev({"type": "content_block_start", "index": index, "content_block": dict(block)})
    elif t in TOOL_INPUT_BLOCKS:
        start = dict(block)
        start["input"] = {}
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        # Spaced as live inputs are: json.dumps's default separators, characters unescaped.
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        for part in ["", *chunks.cut(raw if raw != "{}" else "", json_text=True)]:
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": part}})
    elif t == "compaction":
        start = {k: None if k in ("content", "encrypted_content") else v for k, v in block.items()}
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        delta = {"type": "compaction_delta", "content": block.get("content")}
        if "encrypted_content" in block:
            delta["encrypted_content"] = block["encrypted_content"]
        yield _ev({"type": "content_block_delta", "index": index, "delta": delta})
    elif t == "thinking":
        start = dict(block)
        start["thinking"], start["signature"] = "", ""
        yield _ev({"type": "content_block_start", "index": index, "content_block": start})
        for part in chunks.cut(str(block.get("thinking", ""))):
            yield _ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "thinking_delta", "thinking": part}})
        yield _ev({"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": block.get("signature", "")}})
    else:
        # Server tool results, redacted_thinking, container_upload...: whole in the start event.
        yield _ev({"type": "content_block_start", "index": index, "content_block": dict(block)})
    yield _ev({"type": "content_block_stop", "index": index})


def start_output_tokens(message: Mapping[str, Any], chunks: Chunker) -> int:
    """``message_start.usage.output_tokens`` as live streams report it, never above the final
    count: drawn from the live values for a stream opening with the same kind of block
    (:data:`WRITTEN_START_TOKENS`, :data:`CALL_START_TOKENS`), 1 for one opening with a block
    that arrives whole."""
    final = int((message.get("usage") or {}).get("output_tokens") or 0)
    content = message.get("content") or []
    first = content[0] if content and isinstance(content[0], Mapping) else {}
    if first.get("type") in _WRITTEN_FIRST:
        value = chunks.pick(WRITTEN_START_TOKENS)
    elif first.get("type") in TOOL_INPUT_BLOCKS and streams_deltas(first):
        value = chunks.pick(CALL_START_TOKENS)
    else:
        value = 1
    return max(0, min(value, final))


def synthesize_events(message: Mapping[str, Any], *, chunk: int | None = None,
                      ping_every: int = 0, seed: str | int | None = None,
                      envelope: str | EnvelopeProfile | None = None) -> list[SSEEvent]:
    """The SSE events the API would stream for ``message`` (see the module docstring).

    ``envelope``: the profile the pings, chunks, padding and line endings are drawn from
    (:data:`simulator.envelope.PROFILES`; default ``live``), seeded by ``seed`` (default: the
    message id). ``chunk``: a fixed chunk length instead. With ``ping_every`` > 0 another
    ``ping`` is sent after every that many block events.
    """
    profile = profile_named(envelope)
    msg = copy.deepcopy(dict(message))
    chunks = Chunker(seed if seed is not None else str(msg.get("id", "")), chunk, profile)
    content = msg.get("content") or []
    usage = dict(msg.get("usage") or {})
    # container and context_management come at the end, in message_delta (PROTOCOL.md §6)
    start_msg = {k: v for k, v in msg.items() if k not in ("container", "context_management")}
    start_msg.update(content=[], stop_reason=None, stop_sequence=None)
    if "stop_details" in start_msg:
        start_msg["stop_details"] = None
    start_usage = {k: v for k, v in usage.items() if k in START_USAGE_KEYS}
    start_usage["output_tokens"] = start_output_tokens(msg, chunks) if profile.draw_start_tokens \
        else min(1, int(usage.get("output_tokens") or 0))
    start_msg["usage"] = start_usage
    body: list[SSEEvent] = [_ev({"type": "message_start", "message": start_msg})]
    for i, block in enumerate(content):
        body.extend(_block_events(i, block, chunks))
    delta: dict[str, Any] = {"stop_reason": msg.get("stop_reason"),
                             "stop_sequence": msg.get("stop_sequence")}
    if "stop_details" in msg:
        delta["stop_details"] = msg["stop_details"]
    if msg.get("container") is not None:
        delta["container"] = msg["container"]
    end_usage = {k: v for k, v in usage.items() if k not in START_ONLY_USAGE_KEYS}
    md: dict[str, Any] = {"type": "message_delta", "delta": delta, "usage": end_usage}
    if "context_management" in msg:
        md["context_management"] = msg["context_management"]
    body.append(_ev(md))
    body.append(_ev({"type": "message_stop"}))
    return apply_envelope(body, streams_deltas(content[0]) if content else False,
                    seed if seed is not None else str(msg.get("id", "")), ping_every, profile)


def apply_envelope(events: list[SSEEvent], first_streams_deltas: bool, seed: str | int,
             ping_every: int = 0, profile: EnvelopeProfile = LIVE) -> list[SSEEvent]:
    """``events`` (no pings) with an envelope drawn for ``seed`` from ``profile``: pings,
    each payload's padding and its line endings (:mod:`simulator.envelope`). With
    ``ping_every`` > 0 a ping also follows every that many block events."""
    slots = Counter(ping_slots([e.event for e in events], first_streams_deltas,
                               rng_for(seed, "pings"), profile))
    pads = rng_for(seed, "padding")
    eols = rng_for(seed, "line endings")
    out: list[SSEEvent] = []
    n = 0
    for i, e in enumerate(events):
        out.append(SSEEvent(e.event, e.data, draw_pad(pads, profile),
                            draw_line_endings(eols, profile)))
        if e.event.startswith("content_block_"):
            n += 1
        pings = slots.get(i, 0) + (1 if ping_every and e.event.startswith("content_block_")
                                   and n % ping_every == 0 else 0)
        out.extend(SSEEvent("ping", {"type": "ping"}, 0, draw_line_endings(eols, profile))
                   for _ in range(pings))
    return out


#: Delta fields that carry text a stream may cut anywhere (the accumulator concatenates them).
_CUTTABLE = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def dress_recorded(events: Sequence[SSEEvent], seed: str | int,
                   profile: EnvelopeProfile = LIVE) -> list[SSEEvent]:
    """Recorded ``events`` with the envelope ``profile`` gives a recorded stream: their own
    pings and chunks kept (``live``, ``minimal``), or, for a profile that cuts recorded streams
    again (``adversarial``), every text, thinking and tool input delta cut into ``chunk``-long
    deltas and pings drawn between events; padding and line endings drawn. Values unchanged:
    the stream assembles into the same message."""
    if not profile.recut_recorded:
        pads = rng_for(seed, "padding")
        eols = rng_for(seed, "line endings")
        return [SSEEvent(e.event, e.data, draw_pad(pads, profile),
                         draw_line_endings(eols, profile)) for e in events]
    size = profile.chunk or 1
    cut: list[SSEEvent] = []
    for e in events:
        data = e.data
        if e.event == "ping" or (isinstance(data, dict) and data.get("type") == "ping"):
            continue  # drawn again below
        delta = data.get("delta") if isinstance(data, dict) else None
        field = _CUTTABLE.get(str(delta.get("type"))) if isinstance(delta, dict) else None
        text = delta.get(field) if field and isinstance(delta, dict) else None
        if not isinstance(text, str) or len(text) <= size or not isinstance(delta, dict):
            cut.append(e)
            continue
        for i in range(0, len(text), size):
            cut.append(SSEEvent(e.event, {**data, "delta": {**delta, field: text[i:i + size]}}))
    return apply_envelope(cut, False, seed, 0, profile)


def recorded_events(raw: Iterable[Any]) -> list[SSEEvent]:
    """Cassette ``events`` (``{"event", "data"}`` or bare payloads) as :class:`SSEEvent`."""
    out = []
    for e in raw:
        if isinstance(e, SSEEvent):
            out.append(e)
        elif isinstance(e, dict) and "data" in e and ("event" in e or len(e) <= 2):
            data = e["data"]
            name = e.get("event") or (data.get("type") if isinstance(data, dict) else "message")
            out.append(SSEEvent(str(name), data))
        elif isinstance(e, dict):
            out.append(SSEEvent(str(e.get("type", "message")), e))
    return out


def _payload(e: Any) -> tuple[str, Any]:
    if isinstance(e, SSEEvent):
        return e.event, e.data
    if isinstance(e, dict) and "data" in e and "event" in e:
        return str(e["event"]), e["data"]
    if isinstance(e, dict):
        return str(e.get("type")), e
    raise TypeError(f"not an SSE event: {e!r}")


def assemble_message(events: Iterable[Any]) -> dict[str, Any]:
    """The message a stream describes (as the SDK accumulates it).

    Raises :class:`StreamError` on an ``error`` event and ``ValueError`` when the stream has no
    ``message_start`` or a tool input's JSON does not parse.
    """
    msg: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    stopped: set[int] = set()
    for e in events:
        name, data = _payload(e)
        kind = data.get("type", name) if isinstance(data, dict) else name
        if kind == "error" or name == "error":
            raise StreamError(data.get("error", {}) if isinstance(data, dict) else {})
        if not isinstance(data, dict) or kind == "ping":
            continue
        if kind == "message_start":
            if msg is not None:
                continue  # a second message_start is ignored, as by the SDK's accumulator
            msg = copy.deepcopy(data["message"])
            msg["content"] = list(msg.get("content") or [])
            continue
        if msg is None:
            if kind in ("content_block_start", "content_block_delta", "message_delta"):
                raise ValueError(f"`{kind}` before `message_start`")
            continue
        if kind == "content_block_start":
            # Appended, as the SDK's accumulator does (deltas then address blocks by index).
            msg["content"].append(copy.deepcopy(data["content_block"]))
        elif kind == "content_block_delta":
            idx = int(data["index"])
            block = msg["content"][idx] if idx < len(msg["content"]) else None
            if block is None:
                raise ValueError(f"`content_block_delta` for index {idx} before its "
                                 "`content_block_start`")
            d = data["delta"]
            dt = d.get("type")
            if dt == "text_delta":
                block["text"] = block.get("text", "") + d.get("text", "")
            elif dt == "input_json_delta":
                partial[idx] = partial.get(idx, "") + d.get("partial_json", "")
            elif dt == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + d.get("thinking", "")
            elif dt == "signature_delta":
                block["signature"] = d.get("signature", "")
            elif dt == "compaction_delta":
                block["content"] = d.get("content")
                if "encrypted_content" in d:
                    block["encrypted_content"] = d["encrypted_content"]
            elif dt == "citations_delta":
                block["citations"] = [*(block.get("citations") or []), d.get("citation")]
        elif kind == "content_block_stop":
            idx = int(data["index"])
            if partial.get(idx) and idx < len(msg["content"]) and msg["content"][idx] is not None:
                stopped.add(idx)
                try:
                    msg["content"][idx]["input"] = json.loads(partial[idx])
                except json.JSONDecodeError as err:
                    raise ValueError(f"content block {idx}: tool input JSON does not parse: "
                                     f"{err.msg}") from None
        elif kind == "message_delta":
            d = data.get("delta") or {}
            for key in ("stop_reason", "stop_sequence", "stop_details", "container"):
                if key in d:
                    msg[key] = d[key]
            if "context_management" in data:
                msg["context_management"] = data["context_management"]
            usage = data.get("usage")
            if isinstance(usage, dict):
                merged = dict(msg.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                msg["usage"] = merged
    if msg is None:
        raise ValueError("the stream has no `message_start` event")
    for idx, buf in partial.items():
        if buf and idx not in stopped and msg["content"][idx] is not None:
            # A stream cut short (max_tokens) leaves a block open: keep what parses, as the SDK.
            msg["content"][idx]["input"] = _partial_json(buf)
    msg["content"] = [b for b in msg["content"] if b is not None]
    return msg


def _partial_json(buf: str) -> Any:
    try:
        from jiter import from_json  # the SDK's own partial-JSON parser (an anthropic dependency)
    except ImportError:  # pragma: no cover
        return {}
    try:
        return from_json(buf.encode(), partial_mode=True)
    except ValueError:
        return {}


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> SSEEvent:
    """A mid-stream ``error`` event (PROTOCOL.md §6)."""
    return SSEEvent("error", {"type": "error", "error": {"type": error_type, "message": message}})


def stream_headers(request_id: str) -> dict[str, str]:
    return {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache",
            "request-id": request_id}
