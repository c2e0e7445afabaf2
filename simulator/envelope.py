"""The envelope of a live stream: where ``ping`` events fall, how ``data:`` payloads are padded,
how long the chunks are, how lines end; drawn for synthesized streams, measured on any set of
streams.

Live streams differ by source, model and date, so the envelope is a family
(:class:`EnvelopeProfile`), each statistic a :class:`Span`: the range live traffic shows. Every
stream draws its own values from the spans, with generators seeded by the cassette exchange (the
same stream at every run). Three profiles (:data:`PROFILES`; ``tooluse serve --envelope``,
``simulator.mock(..., envelope=...)``):

- ``live`` (the default) draws from the whole live range of each statistic (the evidence, in
  :data:`LIVE` and docs/schemas.md § Stream shape):

  - **The first ping** is a keepalive sent as the first block opens: right after the first
    ``content_block_start``, after its first delta, after its second, or not at all. The shares
    vary: after one delta 5 % of the 130 such streams of ``../shared/real_traffic`` and 45 % of
    issue 40's fresh set; none 5 % there, 14 % in issue 25's held-out set and issue 40's first
    set. A stream opening with a block that arrives whole (a result) mostly has none (4 of 6;
    the others ping after that block's ``content_block_start``).
  - **Early keepalives**: some streams send a ping after each early delta, 3 to 7 in all (26 %
    of issue 40's fresh set, across 11 models; 4 % of the shared captures send 3 or more).
  - **Later pings** are keepalives of long streams: after any event, another ping follows with
    probability 18 / 7,291 (the shared captures).
  - **Padding**: every payload but ``ping`` carries 0 to 15 spaces before its closing brace,
    uniformly (issue 25, 197 held-out live streams with raw bytes: 5,579 of 5,934 payloads
    padded with 1 to 15 spaces, 355 compact = 6.0 %, one in sixteen; public raw recordings,
    e.g. envoyproxy/ai-gateway's Anthropic stream tests, show the same). ``ping`` is always
    written ``{"type": "ping"}``, a space after the colon. The shared captures keep parsed
    events only, so padding is measured where a capture keeps the raw text
    (:func:`parse_raw_sse`).
  - **Chunks**: each stream has its own scale (newer models send longer text chunks): the 90th
    percentile of a stream's text chunks is 15 to 162 characters in the shared captures; the
    chunks of one stream spread as :data:`TEXT_SHAPE` says. Tool input JSON comes in chunks of
    2 to 12 characters, or, in about a third of the streams, coarser (largest 13 to 178).

- ``minimal``: one ping (after the first ``content_block_start``), each block's text and input in
  one delta, no padding, ``\\n`` line endings, ``message_start`` counting 1 output token: the
  simplest stream the docs allow, the same bytes for any seed, for stable snapshots.
- ``adversarial``: everything the SSE specification and the streaming docs allow, for a client's
  robustness tests: one to three pings between any two events, one-character text, thinking and
  tool input chunks (recorded streams cut again too), padding 0 to 15, and each line ending
  drawn from ``\\n``, ``\\r\\n`` and ``\\r``. The SDK's accumulator gets the same message from it.

:func:`measure` gives a :class:`StreamShape` of any streams (live, or the simulator's), and
:func:`shape_table` the two side by side.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .stream_blocks import streams_deltas

#: After how many deltas of the first block the first ping comes (None: no ping), by number
#: of live streams [3P: real_traffic, streams whose first block streams deltas]: one end of
#: :data:`LIVE`'s ranges (the fresh sets of issues 25 and 40 the other).
FIRST_PING_AFTER_DELTAS: Mapping[int | None, int] = {0: 96, 1: 6, 2: 21, None: 7}
#: Probability that a ping follows an event after the first ping [3P: 18 / 7,291].
EXTRA_PING_RATE = 18 / 7291
#: Spaces before a payload's closing brace: 0..15, uniformly [3P: issue 25's held-out set].
MAX_PAD = 15
#: How a stream's text chunks spread around its own 90th percentile: the quantiles 0, 5, ...,
#: 95 and 99 % of ``length / p90`` over the live streams with 10 or more text chunks (2,137
#: chunks of 56 streams, a block's cut-short last chunk left out) [3P: real_traffic].
TEXT_SHAPE = (0.0, 0.08, 0.14, 0.18, 0.23, 0.27, 0.32, 0.36, 0.40, 0.44, 0.48, 0.53, 0.57, 0.64,
              0.69, 0.76, 0.82, 0.91, 1.0, 1.13, 1.54)
#: Tool input JSON chunks of a fine-grained stream: 2 to 12 characters, uniformly (2,832 of the
#: 3,046 live chunks are 1 to 12, all lengths but 1 about equally common) [3P: real_traffic].
JSON_FINE = (2, 12)
#: The line endings the SSE specification allows (WHATWG HTML § 9.2.5: CRLF, LF or CR).
SSE_LINE_ENDINGS = (b"\n", b"\r\n", b"\r")


@dataclass(frozen=True)
class Span:
    """The range of one statistic across live traffic (sources, models, dates): each stream
    draws its value from it, uniformly (``log``: log-uniformly, for lengths)."""

    lo: float
    hi: float
    log: bool = False

    def draw(self, rng: random.Random) -> float:
        if self.lo == self.hi:
            return self.lo
        if self.log:
            return math.exp(rng.uniform(math.log(self.lo), math.log(self.hi)))
        return rng.uniform(self.lo, self.hi)

    def __str__(self) -> str:
        return f"{self.lo:g}" if self.lo == self.hi else f"{self.lo:g}–{self.hi:g}"


def point(x: float) -> Span:
    return Span(x, x)


@dataclass(frozen=True)
class EnvelopeProfile:
    """A family of stream envelopes: the range of each statistic a stream draws its own from.

    Ping shares are of streams whose first block streams deltas (a stream opening with a whole
    block has a first ping with probability ``whole_first_ping``); the first ping falls after
    the first delta, the second, or right after ``content_block_start`` (the rest)."""

    name: str
    summary: str
    #: Share of streams without any ping.
    no_ping: Span = point(0.0)
    #: Share whose first ping follows the first delta (early keepalives included).
    after_one_delta: Span = point(0.0)
    #: Share whose first ping follows the second delta.
    after_two_deltas: Span = point(0.0)
    #: Share that ping after each early delta (``keepalive_pings`` in all; first after delta 1).
    keepalive: Span = point(0.0)
    keepalive_pings: tuple[int, int] = (3, 7)
    #: Share of streams opening with a whole block (a result) that have a first ping.
    whole_first_ping: Span = point(0.0)
    #: After the first ping, another follows any event with this probability.
    extra_ping_rate: Span = point(0.0)
    #: Pings between every two events (drawn per gap; (0, 0): none).
    pings_between: tuple[int, int] = (0, 0)
    #: The 90th percentile of a stream's text (and thinking) chunk lengths.
    text_p90: Span = Span(15, 162, log=True)
    #: Share of streams whose tool input comes in coarse chunks (some over 12 characters).
    json_coarse: Span = point(0.0)
    #: The largest tool input chunk of a coarse stream.
    json_largest: Span = point(12)
    #: A fixed chunk length (None: drawn as above; 0: a block's text or input in one delta).
    chunk: int | None = None
    #: Spaces before a payload's closing brace, drawn uniformly from this range.
    pad: tuple[int, int] = (0, MAX_PAD)
    #: The line endings each line's is drawn from.
    line_endings: tuple[bytes, ...] = (b"\n",)
    #: Recorded streams cut again into ``chunk``-character deltas (their values unchanged).
    recut_recorded: bool = False
    #: ``message_start``'s ``output_tokens`` drawn as live streams count them (else 1, fixed).
    draw_start_tokens: bool = True


#: The default: each statistic drawn from the whole range live traffic shows (the sources of each
#: end in docs/schemas.md § Stream shape).
LIVE = EnvelopeProfile(
    "live", "drawn from the whole range live streams show (the default)",
    # 7 of 130 shared-capture streams; 14 % in issue 25's held-out set and issue 40's first set.
    no_ping=Span(0.05, 0.14),
    # 6 of 130 shared-capture streams; 45 % of issue 40's fresh set.
    after_one_delta=Span(0.05, 0.45),
    # 21 of 130 shared-capture streams (the other sets are not split by position).
    after_two_deltas=point(0.16),
    # 3+ pings: 5 of 136 shared-capture streams; 26 % of issue 40's fresh set (3 to 7).
    keepalive=Span(0.04, 0.26),
    # A stream opening with a result: 2 of 6 shared-capture ones ping.
    whole_first_ping=point(2 / 6),
    extra_ping_rate=point(EXTRA_PING_RATE),
    text_p90=Span(15, 162, log=True),
    # 0 % (llmanth, rubyllm) to 50 % (pydai) of a recorder's streams with tool input.
    json_coarse=Span(0.0, 0.5),
    # Largest chunk 13 to 178 in the shared captures, 12 to 82 in issue 40's fresh set.
    json_largest=Span(13, 178, log=True),
)
MINIMAL = EnvelopeProfile(
    "minimal", "one ping, each block in one delta, no padding: for stable snapshots",
    whole_first_ping=point(1.0), chunk=0, pad=(0, 0), draw_start_tokens=False)
ADVERSARIAL = EnvelopeProfile(
    "adversarial", "every variation SSE and the streaming docs allow: for robustness tests",
    pings_between=(1, 3), chunk=1, pad=(0, MAX_PAD), line_endings=SSE_LINE_ENDINGS,
    recut_recorded=True)
#: Profiles by name (``--envelope NAME``).
PROFILES: Mapping[str, EnvelopeProfile] = {p.name: p for p in (LIVE, MINIMAL, ADVERSARIAL)}


def profile_named(name: str | EnvelopeProfile | None) -> EnvelopeProfile:
    """The profile ``name`` (None: ``live``); a ValueError naming the valid ones otherwise."""
    if name is None:
        return LIVE
    if isinstance(name, EnvelopeProfile):
        return name
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        raise ValueError(f"envelope={name!r}: expected one of {', '.join(PROFILES)}") from None


def rng_for(seed: str | int, purpose: str) -> random.Random:
    """A generator for one aspect (``"pings"``, ``"padding"``) of one stream, so drawing one
    aspect never moves another's draws."""
    digest = hashlib.sha256(f"{seed}/{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def draw_pad(rng: random.Random, profile: EnvelopeProfile = LIVE) -> int:
    lo, hi = profile.pad
    return lo if lo == hi else rng.randint(lo, hi)


def draw_line_endings(rng: random.Random, profile: EnvelopeProfile = LIVE,
                      ) -> tuple[bytes, bytes, bytes]:
    """The endings of an event's ``event:``, ``data:`` and blank lines. After a line ending in
    ``\\r`` the blank line never ends in a lone ``\\n`` (the two would read as one ``\\r\\n``)."""
    endings = profile.line_endings
    if len(endings) == 1:
        return endings[0], endings[0], endings[0]
    first, data = rng.choice(endings), rng.choice(endings)
    blank = rng.choice([e for e in endings if not (data == b"\r" and e == b"\n")])
    return first, data, blank


def _first_ping_plan(rng: random.Random, profile: EnvelopeProfile) -> tuple[int | None, int]:
    """(deltas before the first ping or None for no ping, early keepalive pings in all or 0),
    the shares drawn for this stream from the profile's spans."""
    none, one, two = (s.draw(rng) for s in (profile.no_ping, profile.after_one_delta,
                                            profile.after_two_deltas))
    keep = min(profile.keepalive.draw(rng), one)
    u = rng.random()
    if u < none:
        return None, 0
    if u < none + keep:
        return 1, rng.randint(*profile.keepalive_pings)
    if u < none + one:
        return 1, 0
    if u < none + one + two:
        return 2, 0
    return 0, 0


def ping_slots(names: Sequence[str], first_streams_deltas: bool, rng: random.Random,
               profile: EnvelopeProfile = LIVE) -> list[int]:
    """Indexes of ``names`` (event names, no pings) after which a ping is sent (an index twice:
    two pings there)."""
    if profile.pings_between != (0, 0):
        lo, hi = profile.pings_between
        return [i for i in range(len(names) - 1) for _ in range(rng.randint(lo, hi))]
    if "content_block_start" not in names:
        return []
    start = names.index("content_block_start")
    slots: list[int] = []
    first: int | None = None
    if first_streams_deltas:
        k, keepalives = _first_ping_plan(rng, profile)
        if keepalives:
            slots = [i for i, n in enumerate(names) if n == "content_block_delta"][:keepalives]
            if len(slots) < keepalives:  # a short stream: the rest after the first block ends
                stop = names.index("content_block_stop") if "content_block_stop" in names \
                    else len(names) - 2
                slots += [min(stop, len(names) - 2)] * (keepalives - len(slots))
            first = max(slots)
        elif k is not None:
            seen = 0
            first = start
            for i in range(start + 1, len(names)):
                if seen >= k or names[i] != "content_block_delta":
                    break
                seen, first = seen + 1, i
            slots.append(first)
    elif rng.random() < profile.whole_first_ping.draw(rng):
        first = start
        slots.append(first)
    if first is None:
        return slots
    rate = profile.extra_ping_rate.draw(rng)
    if rate:
        for i in range(first + 1, len(names) - 1):  # never after message_stop
            if rng.random() < rate:
                slots.append(i)
    return sorted(slots)


def padding_of(raw: str) -> int | None:
    """Spaces before the closing brace of a raw payload (None for a ping or a non-object)."""
    s = raw.rstrip("\r\n")
    if not s.endswith("}") or s.replace(" ", "") == '{"type":"ping"}':
        return None
    body = s[:-1]
    return len(body) - len(body.rstrip(" "))


_SSE_EOL = re.compile(r"\r\n|\r|\n")


def sse_lines(text: str) -> list[str]:
    """The lines of SSE text, split where the SSE standard ends a line: at ``\\r\\n``,
    ``\\r`` or ``\\n`` only (``str.splitlines`` also splits at U+2028, U+0085 and others,
    which a payload carries raw now that payloads are raw UTF-8)."""
    lines = _SSE_EOL.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_SSE_EOL_BYTES = re.compile(rb"\r\n|\r|\n")


def iter_sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of an SSE byte stream as they arrive, split as :func:`sse_lines` splits them
    (a ``\\r`` at a chunk's end waits for the next chunk: it may be half of ``\\r\\n``). For
    recording live streams: ``httpx``'s ``iter_lines`` also splits at U+2028 and U+0085, which
    raw UTF-8 payloads carry."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        start = 0
        for m in _SSE_EOL_BYTES.finditer(buf):
            if m.group() == b"\r" and m.end() == len(buf):
                break  # maybe the first half of \r\n
            yield buf[start:m.start()].decode("utf-8", "replace")
            start = m.end()
        buf = buf[start:]
    if buf:
        yield from sse_lines(buf.decode("utf-8", "replace"))


def parse_raw_sse(text: str) -> list[tuple[str, str]]:
    """``(event name, raw data)`` of each event of raw SSE text (several ``data:`` lines of one
    event joined by newlines, as the SSE standard says; any of its line endings)."""
    out: list[tuple[str, str]] = []
    name, data = "", list[str]()
    for line in [*sse_lines(text), ""]:
        if not line:
            if data:
                out.append((name or "message", "\n".join(data)))
            name, data = "", list[str]()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
    return out


def raw_sse_events(text: str) -> list[dict[str, Any]]:
    """Raw SSE text as a recorded event list, ``[{"event", "data"}]`` (a payload that is not
    JSON kept as its text), whatever its line endings."""
    out: list[dict[str, Any]] = []
    for name, raw in parse_raw_sse(text):
        try:
            data: Any = json.loads(raw)
        except ValueError:
            data = raw
        out.append({"event": name, "data": data})
    return out


def looks_like_sse(text: str) -> bool:
    """Whether ``text`` reads as an event stream (its first line a field or a comment)."""
    first = text.lstrip("\ufeff\r\n").split("\n", 1)[0].split("\r", 1)[0]
    return first.startswith(("event:", "data:", ":", "id:", "retry:"))


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


__all__ = ["ADVERSARIAL", "EXTRA_PING_RATE", "FIRST_PING_AFTER_DELTAS", "LIVE", "MAX_PAD",
           "MINIMAL", "PROFILES", "SSE_LINE_ENDINGS", "EnvelopeProfile", "Span", "StreamShape",
           "draw_line_endings", "draw_pad", "iter_sse_lines", "looks_like_sse", "measure", "padding_of", "parse_raw_sse",
           "ping_slots", "profile_named", "raw_sse_events", "rng_for", "shape_rows", "shape_table", "sse_lines",
           "split_streams"]
