"""The envelope of a live stream: where ``ping`` events fall, how ``data:`` payloads are padded,
how long the chunks are; drawn for synthesized streams, measured on any set of streams.

The API's stream envelope varies from stream to stream; the simulator draws each stream's from
distributions measured on live captures, with a generator seeded by the cassette exchange (the
same stream at every run). The general behaviour and its evidence:

- **The first ping** is a keepalive sent as the first block opens: right after the first
  ``content_block_start`` (96 of 130 live streams whose first block streams deltas), after its
  first delta (6) or its second (21), or not at all (7) [3P: the 136 live streams of
  ``../shared/real_traffic``; the held-out set of issue 25 agrees: 112, 58 after a delta, 28
  none, of 197]. A stream opening with a block that arrives whole (a result) mostly has none
  (4 of 6), as before.
- **Later pings** are keepalives of long streams: after any event, another ping follows with
  probability :data:`EXTRA_PING_RATE` (18 extra pings over 7,291 live events after the first
  ping; 9 of 136 live streams ping more than once, up to 5 times).
- **Padding**: every payload but ``ping`` carries 0 to 15 spaces before its closing brace,
  uniformly (issue 25, 197 held-out live streams with raw bytes: 5,579 of 5,934 payloads padded
  with 1 to 15 spaces, 355 compact = 6.0 %, one in sixteen; public raw recordings, e.g.
  envoyproxy/ai-gateway's Anthropic stream tests, show the same). ``ping`` is always written
  ``{"type": "ping"}``, a space after the colon. The shared captures keep parsed events only, so
  padding is measured where a capture keeps the raw text (:func:`parse_raw_sse`).

:func:`measure` gives a :class:`StreamShape` of any streams (live, or the simulator's), and
:func:`shape_table` the two side by side.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .stream_blocks import streams_deltas

#: After how many deltas of the first block the first ping comes (None: no ping), by number
#: of live streams [3P: real_traffic, streams whose first block streams deltas].
FIRST_PING_AFTER_DELTAS: Mapping[int | None, int] = {0: 96, 1: 6, 2: 21, None: 7}
#: Probability that a ping follows an event after the first ping [3P: 18 / 7,291].
EXTRA_PING_RATE = 18 / 7291
#: Spaces before a payload's closing brace: 0..15, uniformly [3P: issue 25's held-out set].
MAX_PAD = 15


def rng_for(seed: str | int, purpose: str) -> random.Random:
    """A generator for one aspect (``"pings"``, ``"padding"``) of one stream, so drawing one
    aspect never moves another's draws."""
    digest = hashlib.sha256(f"{seed}/{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def draw_pad(rng: random.Random) -> int:
    return rng.randint(0, MAX_PAD)


def first_ping_after(rng: random.Random) -> int | None:
    keys = list(FIRST_PING_AFTER_DELTAS)
    return rng.choices(keys, weights=[FIRST_PING_AFTER_DELTAS[k] for k in keys])[0]


def ping_slots(names: Sequence[str], first_streams_deltas: bool, rng: random.Random) -> list[int]:
    """Indexes of ``names`` (event names, no pings) after which a ping is sent."""
    if "content_block_start" not in names:
        return []
    start = names.index("content_block_start")
    slots: list[int] = []
    first: int | None = None
    if first_streams_deltas:
        k = first_ping_after(rng)
        if k is not None:
            deltas = 0
            first = start
            for i in range(start + 1, len(names)):
                if deltas >= k or names[i] != "content_block_delta":
                    break
                deltas, first = deltas + 1, i
            slots.append(first)
    if first is None:
        return slots
    for i in range(first + 1, len(names) - 1):  # never after message_stop
        if rng.random() < EXTRA_PING_RATE:
            slots.append(i)
    return slots


def padding_of(raw: str) -> int | None:
    """Spaces before the closing brace of a raw payload (None for a ping or a non-object)."""
    s = raw.rstrip("\r\n")
    if not s.endswith("}") or s.replace(" ", "") == '{"type":"ping"}':
        return None
    body = s[:-1]
    return len(body) - len(body.rstrip(" "))


def parse_raw_sse(text: str) -> list[tuple[str, str]]:
    """``(event name, raw data)`` of each event of raw SSE text (several ``data:`` lines of one
    event joined by newlines, as the SSE standard says)."""
    out: list[tuple[str, str]] = []
    name, data = "", list[str]()
    for line in [*text.splitlines(), ""]:
        if not line:
            if data:
                out.append((name or "message", "\n".join(data)))
            name, data = "", list[str]()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
    return out


# --- measuring ----------------------------------------------------------------------------------

Stream = list[dict[str, Any]]


@dataclass
class StreamShape:
    """Distributions of a set of streams (each a list of payloads, split at ``message_start``)."""

    streams: int = 0
    #: Number of pings in a stream (4 = four or more) -> streams.
    ping_count: Counter[int] = field(default_factory=Counter)
    #: Where the first ping is: "after start", "after 1 delta", "after 2 deltas", "later",
    #: "before the first block", "none" -> streams (streams whose first block streams deltas).
    first_ping: Counter[str] = field(default_factory=Counter)
    text_chunks: list[int] = field(default_factory=list)
    json_chunks: list[int] = field(default_factory=list)
    #: Spaces before the closing brace -> payloads (only where raw bytes are known).
    padding: Counter[int] = field(default_factory=Counter)
    #: Pings written otherwise than ``{"type": "ping"}`` (raw bytes known).
    ping_spelling: Counter[str] = field(default_factory=Counter)

    def add(self, stream: Stream, raw: Sequence[str] | None = None) -> None:
        self.streams += 1
        types = [str(e.get("type")) for e in stream]
        self.ping_count[min(types.count("ping"), 4)] += 1
        blocks = [e.get("content_block") or {} for e in stream if e.get("type") == "content_block_start"]
        if blocks and streams_deltas(blocks[0]):
            self.first_ping[_first_ping(types)] += 1
        for e in stream:
            d = e.get("delta") if e.get("type") == "content_block_delta" else None
            if not isinstance(d, dict):
                continue
            if d.get("type") in ("text_delta", "thinking_delta"):
                self.text_chunks.append(len(str(d.get("text", d.get("thinking", "")))))
            elif d.get("type") == "input_json_delta" and d.get("partial_json"):
                self.json_chunks.append(len(str(d["partial_json"])))
        for r in raw or ():
            pad = padding_of(r)
            if pad is not None:
                self.padding[pad] += 1
            elif r.replace(" ", "") == '{"type":"ping"}':
                self.ping_spelling[r] += 1

    @property
    def has_raw(self) -> bool:
        return bool(self.padding)


def _first_ping(types: list[str]) -> str:
    if "ping" not in types:
        return "none"
    i = types.index("ping")
    if "content_block_start" not in types[:i]:
        return "before the first block"
    k = i - types.index("content_block_start") - 1
    if k == 0:
        return "after start"
    if all(t == "content_block_delta" for t in types[i - k:i]) and k <= 2:
        return f"after {k} delta" + ("s" if k > 1 else "")
    return "later"


def split_streams(payloads: Iterable[Any]) -> list[Stream]:
    """Payloads split at each ``message_start``; streams without a content block dropped."""
    out: list[Stream] = []
    cur: Stream | None = None
    for d in payloads:
        if not isinstance(d, dict):
            continue
        if d.get("type") == "message_start":
            cur = [d]
            out.append(cur)
        elif cur is not None:
            cur.append(d)
    return [s for s in out if any(e.get("type") == "content_block_start" for e in s)]


def measure(streams: Iterable[tuple[Stream, Sequence[str] | None]]) -> StreamShape:
    shape = StreamShape()
    for s, raw in streams:
        shape.add(s, raw)
    return shape


def _pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f} %)" if whole else "0"


def _quantiles(xs: list[int]) -> str:
    if len(xs) < 2:
        return "–"
    q = statistics.quantiles(xs, n=10)
    return f"p10 {q[0]:g}, median {statistics.median(xs):g}, p90 {q[-1]:g} (n={len(xs)})"


def shape_rows(shape: StreamShape) -> dict[str, str]:
    n = shape.streams
    fp = sum(shape.first_ping.values())
    rows = {"streams": str(n)}
    for k in (0, 1, 2, 3, 4):
        label = f"streams with {k}{'+' if k == 4 else ''} ping{'s' if k != 1 else ''}"
        rows[label] = _pct(shape.ping_count.get(k, 0), n)
    for where in ("after start", "after 1 delta", "after 2 deltas", "later",
                  "before the first block", "none"):
        rows[f"first ping {where} (first block streams deltas)"] = \
            _pct(shape.first_ping.get(where, 0), fp)
    rows["text chunk length"] = _quantiles(shape.text_chunks)
    rows["tool input chunk length"] = _quantiles(shape.json_chunks)
    total = sum(shape.padding.values())
    if total:
        rows["payloads padded"] = _pct(total - shape.padding.get(0, 0), total)
        rows["padding (spaces)"] = (f"{min(k for k in shape.padding if k)}–{max(shape.padding)}"
                                    if total - shape.padding.get(0, 0) else "–")
        rows["ping written"] = ", ".join(f"{k} x{v}" for k, v in shape.ping_spelling.items()) or "–"
    else:
        rows["payloads padded"] = "raw bytes not kept"
    return rows


def shape_table(columns: Mapping[str, StreamShape]) -> str:
    """A markdown table: one row per distribution, one column per set of streams."""
    names = list(columns)
    per = [shape_rows(columns[c]) for c in names]
    labels: list[str] = []
    for r in per:
        labels += [k for k in r if k not in labels]
    rows = {label: [r.get(label, "–") for r in per] for label in labels}
    lines = ["| stream envelope | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    lines += [f"| {label} | " + " | ".join(vals) + " |" for label, vals in rows.items()]
    return "\n".join(lines)


__all__ = ["EXTRA_PING_RATE", "FIRST_PING_AFTER_DELTAS", "MAX_PAD", "StreamShape",
           "draw_pad", "measure", "padding_of", "parse_raw_sse", "ping_slots",
           "rng_for", "shape_rows", "shape_table", "split_streams"]
