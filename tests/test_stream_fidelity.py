"""Synthesized streams have the envelope of live ones (issue 16).

The live envelope is measured here, over every stream of ``../shared/real_traffic`` (an
``sse_events`` capture may hold several streams: each ``message_start`` opens one; a stream counts
when a content block starts in it: 136 streams). Each property is a predicate on one stream,
with the bounds it needs taken from the live streams; every synthesized stream of the corpus must
satisfy each: the stream the engine synthesizes for every message a fixture records (served
with ``stream: true``), and every stream a streamed fixture records (the builder's).

Properties (live measurements in the module docstring of :mod:`simulator.sse`):

- ``ping``: no ping before the first ``content_block_start``; when the first block streams
  deltas, the first ping (if any) comes before that block stops.
- ``message_start``: its message keys and usage keys are among those live streams send there
  (never ``container``, never ``usage.server_tool_use``).
- ``message_delta``: its delta keys and usage keys are among those live streams send there
  (never ``cache_creation``, ``service_tier``, ``inference_geo``).
- ``output_tokens``: ``message_start.usage.output_tokens`` is at least 1 (0 only when the final
  count is 0), at most the final count, and within the live range for streams opening with the
  same kind of block (written in deltas, a call, whole).
- ``json_spacing``: each tool input streams as an empty first ``input_json_delta`` then the input
  as ``json.dumps`` spaces it; a call made from code (``caller`` not direct) arrives whole.
- ``chunk_spread``: in a stream with 5 text (and thinking) or tool-input chunks or more, each
  block's last chunk left out, those chunks are not all one length, and their median length is
  within the range of live streams'
  medians, widened by a factor 1.5 (the median of a few draws is noisy); over the corpus, the
  median chunk length is within a factor 1.5 of the live one.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.cassette import iter_corpus
from simulator.render import render_exchange
from simulator.sse import (
    TOOL_INPUT_BLOCKS,
    StreamError,
    assemble_message,
    called_by_code,
    streams_deltas,
    synthesize_events,
)

pytestmark = pytest.mark.shared

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
Stream = list[dict[str, Any]]  # payloads (the ``data`` of each event)


# --- streams -----------------------------------------------------------------------------------

def live_streams(shared: Path) -> list[tuple[str, Stream]]:
    """Every live stream: (``<capture>#<n>``, payloads), split at each ``message_start``."""
    out: list[tuple[str, Stream]] = []
    for p in sorted((shared / "real_traffic").glob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        if doc.get("kind") != "sse_events" or not isinstance(doc.get("data"), list):
            continue
        current: Stream | None = None
        parts: list[Stream] = []
        for e in doc["data"]:
            data = e.get("data") if isinstance(e, dict) else None
            if not isinstance(data, dict):
                continue
            if data.get("type") == "message_start":
                current = [data]
                parts.append(current)
            elif current is not None:
                current.append(data)
        out += [(f"{p.name.split('__')[0]}__{p.name.split('__')[1]}#{n}", s)
                for n, s in enumerate(parts) if _blocks(s)]
    return out


def corpus_streams() -> list[tuple[str, Stream]]:
    """The streams a client of the corpus gets: synthesized by the engine from every recorded
    message (seeded as the engine seeds them), and recorded in streamed fixtures."""
    out: list[tuple[str, Stream]] = []
    for c in iter_corpus(FIXTURES):
        for ex in c.exchanges:
            rec = ex.response
            if "events" in rec:
                events = [e["data"] for e in rec["events"] if isinstance(e.get("data"), dict)]
                if events and events[0].get("type") == "message_start" \
                        and not any(e.get("type") == "error" for e in events):
                    out.append((f"{c.id}#{ex.index} (recorded)", events))
                continue
            body = rec.get("body")
            if int(rec["status"]) >= 400 or not isinstance(body, dict) or body.get("type") != "message":
                continue
            resp, _, mode = render_exchange(ex, True, "req_fidelity", seed=f"{c.id}#{ex.index}")
            assert mode == "synthesized", c.id
            out.append((f"{c.id}#{ex.index}", [e.data for e in resp.events or []]))
    return out


def _blocks(s: Stream) -> list[dict[str, Any]]:
    return [e["content_block"] for e in s if e.get("type") == "content_block_start"]


def _of(s: Stream, kind: str) -> list[dict[str, Any]]:
    return [e for e in s if e.get("type") == kind]


def _deltas(s: Stream, index: int) -> list[dict[str, Any]]:
    return [e["delta"] for e in s if e.get("type") == "content_block_delta" and e["index"] == index]


def _final_output_tokens(s: Stream) -> int | None:
    md = _of(s, "message_delta")
    return int(md[-1]["usage"]["output_tokens"]) if md and md[-1].get("usage") else None


def _first_kind(s: Stream) -> str:
    first = (_blocks(s) or [{}])[0]
    if first.get("type") in ("text", "thinking", "compaction"):
        return "written"
    if first.get("type") in TOOL_INPUT_BLOCKS and streams_deltas(first):
        return "call"
    return "whole"


def _chunk_lengths(s: Stream) -> tuple[list[list[int]], list[list[int]]]:
    """Per block, the lengths of its text/thinking chunks and of its non-empty JSON chunks."""
    text: list[list[int]] = []
    js: list[list[int]] = []
    for i, _ in enumerate(_blocks(s)):
        d = _deltas(s, i)
        t = [len(x.get("text", x.get("thinking", ""))) for x in d
             if x.get("type") in ("text_delta", "thinking_delta")]
        j = [len(x["partial_json"]) for x in d
             if x.get("type") == "input_json_delta" and x["partial_json"]]
        if t:
            text.append(t)
        if j:
            js.append(j)
    return text, js


# --- the live envelope -------------------------------------------------------------------------

class Envelope:
    """What live streams show, the bounds each property takes."""

    def __init__(self, live: list[tuple[str, Stream]]) -> None:
        self.start_keys: set[str] = set()
        self.start_usage: set[str] = set()
        self.delta_keys: set[str] = set()
        self.delta_usage: set[str] = set()
        self.start_tokens: dict[str, list[int]] = {}
        self.text_medians: list[float] = []
        self.json_medians: list[float] = []
        self.text_all: list[int] = []
        self.json_all: list[int] = []
        #: Chunk lengths in long blocks, each block's last left out (see _long_inner).
        self.text_inner: list[int] = []
        self.json_inner: list[int] = []
        self.over_one = 0
        for _, s in live:
            m = s[0]["message"]
            self.start_keys |= set(m)
            self.start_usage |= set(m.get("usage") or {})
            for md in _of(s, "message_delta"):
                self.delta_keys |= set(md.get("delta") or {})
                self.delta_usage |= set(md.get("usage") or {})
            tok = int(m["usage"]["output_tokens"])
            self.over_one += tok > 1
            self.start_tokens.setdefault(_first_kind(s), []).append(tok)
            text, js = _chunk_lengths(s)
            tflat = [n for b in text for n in b]
            jflat = [n for b in js for n in b]
            self.text_all += tflat
            self.json_all += jflat
            self.text_inner += _long_inner(text, 151)
            self.json_inner += _long_inner(js, 31)
            if len(_inner(text)) >= MIN_CHUNKS:
                self.text_medians.append(statistics.median(_inner(text)))
            if len(_inner(js)) >= MIN_CHUNKS:
                self.json_medians.append(statistics.median(_inner(js)))


def ping_position(s: Stream, env: Envelope) -> str | None:
    types = [e.get("type") for e in s]
    if "ping" not in types:
        return None
    first_ping = types.index("ping")
    if "content_block_start" not in types:
        return "a ping in a stream without content blocks (live streams ping once a block starts)"
    first_start = types.index("content_block_start")
    if first_ping < first_start:
        return f"ping at event {first_ping}, before the first content_block_start ({first_start})"
    if streams_deltas(_blocks(s)[0]):
        first_stop = types.index("content_block_stop")
        if first_ping > first_stop:
            return f"first ping at event {first_ping}, after the first block stopped ({first_stop})"
    return None


def message_start_fields(s: Stream, env: Envelope) -> str | None:
    m = s[0]["message"]
    extra = sorted(set(m) - env.start_keys) + [f"usage.{k}" for k in
                                               sorted(set(m.get("usage") or {}) - env.start_usage)]
    return f"message_start has {extra}, which live streams never send there" if extra else None


def message_delta_fields(s: Stream, env: Envelope) -> str | None:
    extra: list[str] = []
    for md in _of(s, "message_delta"):
        extra += sorted(set(md.get("delta") or {}) - env.delta_keys)
        extra += [f"usage.{k}" for k in sorted(set(md.get("usage") or {}) - env.delta_usage)]
    return f"message_delta has {extra}, which live streams never send there" if extra else None


def output_tokens(s: Stream, env: Envelope) -> str | None:
    start = int(s[0]["message"]["usage"]["output_tokens"])
    final = _final_output_tokens(s)
    if final is not None and start > final:
        return f"message_start output_tokens {start} > final {final}"
    if start < 1 and final != 0:
        return f"message_start output_tokens {start}"
    live = env.start_tokens.get(_first_kind(s), [1])
    if start > max(live) or (start < min(live) and start != final):
        return (f"message_start output_tokens {start}: live streams opening with a "
                f"{_first_kind(s)} block start at {min(live)}..{max(live)}")
    return None


def json_spacing(s: Stream, env: Envelope) -> str | None:
    for i, block in enumerate(_blocks(s)):
        if block.get("type") not in TOOL_INPUT_BLOCKS:
            continue
        parts = [d["partial_json"] for d in _deltas(s, i) if d.get("type") == "input_json_delta"]
        if called_by_code(block):
            if parts:
                return f"block {i}: a call made from code streams its input in deltas"
            continue
        if not parts or parts[0] != "":
            return f"block {i}: the first input_json_delta is not empty"
        raw = "".join(parts)
        try:
            parsed = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            if _of(s, "message_delta") and _of(s, "message_delta")[-1]["delta"].get(
                    "stop_reason") == "max_tokens":
                continue  # a stream cut short by max_tokens: its last input is unfinished
            return f"block {i}: the input JSON does not parse: {raw[:60]!r}"
        if raw and raw != json.dumps(parsed, ensure_ascii=False):
            return f"block {i}: input JSON not spaced as live inputs are: {raw[:60]!r}"
    return None


def _long_inner(blocks: list[list[int]], longest: int) -> list[int]:
    """Chunk lengths of blocks of ``longest`` characters or more (the longest usual chunk: 151
    for text, 31 for JSON), each block's last left out: a short block is one chunk whose length
    is the block's, not a chunk length."""
    return [n for b in blocks if sum(b) >= longest for n in b[:-1]]


def _inner(blocks: list[list[int]]) -> list[int]:
    """Chunk lengths but each block's last one (cut short by the end of its block)."""
    return [n for b in blocks for n in b[:-1]]


def chunk_spread(s: Stream, env: Envelope) -> str | None:
    text, js = _chunk_lengths(s)
    for label, blocks, medians in (("text", text, env.text_medians),
                                   ("json", js, env.json_medians)):
        inner = _inner(blocks)
        if len(inner) >= MIN_CHUNKS and len(set(inner)) == 1:
            return f"every {label} chunk (but the last of each block) is {inner[0]} characters long"
        noise = MEDIAN_NOISE if len(inner) >= SETTLED_CHUNKS else MEDIAN_NOISE_FEW
        low, high = min(medians) / noise, max(medians) * noise
        if len(inner) >= MIN_CHUNKS and not low <= statistics.median(inner) <= high:
            return (f"median {label} chunk {statistics.median(inner)} outside the live range "
                    f"{min(medians)}..{max(medians)} (widened by {noise})")
    return None


#: A stream's median chunk length is compared when it has this many chunks (each block's last
#: left out), with the live range widened by this factor: the median of a few draws is noisy.
MIN_CHUNKS = 5
MEDIAN_NOISE = 1.5
#: The live medians come from streams of 10 chunks or more (simulator.envelope.TEXT_SHAPE); the
#: median of a stream of 5 to 9 draws is noisier: widened by 2 there (issue 40's live profile
#: draws each stream's scale from the whole live range, and a short stream at its low end sits
#: below 5/1.5, e.g. a 7-chunk stream of median 3).
SETTLED_CHUNKS = 10
MEDIAN_NOISE_FEW = 2.0

PROPERTIES: dict[str, Callable[[Stream, Envelope], str | None]] = {
    "ping": ping_position, "message_start": message_start_fields,
    "message_delta": message_delta_fields, "output_tokens": output_tokens,
    "json_spacing": json_spacing, "chunk_spread": chunk_spread,
}


def differing(streams: list[tuple[str, Stream]], env: Envelope) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {p: [] for p in PROPERTIES}
    for name, s in streams:
        for prop, check in PROPERTIES.items():
            why = check(s, env)
            if why:
                out[prop].append(f"{name}: {why}")
    return out


def _names(lines: list[str]) -> set[str]:
    return {line.split(": ")[0] for line in lines}


def _iter_print(env: Envelope, live: dict[str, list[str]], ours: dict[str, list[str]],
                n_live: int, n_ours: int) -> Iterator[str]:
    yield f"{'property':<15} live differing (of {n_live})   synthesized differing (of {n_ours})"
    for p in PROPERTIES:
        yield f"{p:<15} {len(live[p]):>4}                       {len(ours[p]):>4}"
    yield (f"{'any':<15} {len(set().union(*(_names(v) for v in live.values()))):>4}"
           f"                       {len(set().union(*(_names(v) for v in ours.values()))):>4}")
    yield "live start_tokens by first block: " + ", ".join(
        f"{k} {min(v)}..{max(v)} (n={len(v)})" for k, v in sorted(env.start_tokens.items()))
    yield (f"live chunk medians: text {statistics.median(env.text_all)}, "
           f"json {statistics.median(env.json_all)}")


# --- tests -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live(shared_dir: Path) -> list[tuple[str, Stream]]:
    streams = live_streams(shared_dir)
    if not streams:
        pytest.skip("no sse_events captures in ../shared/real_traffic")
    return streams


@pytest.fixture(scope="module")
def envelope(live: list[tuple[str, Stream]]) -> Envelope:
    return Envelope(live)


def test_the_properties_hold_for_live_streams(live: list[tuple[str, Stream]],
                                              envelope: Envelope) -> None:
    """The predicates describe live traffic: every live stream passes each, but the JSON
    spacing of the few inputs a model wrote pretty-printed itself."""
    assert len(live) >= 130
    bad = differing(live, envelope)
    assert not any(bad[p] for p in PROPERTIES if p != "json_spacing"), bad
    assert len(bad["json_spacing"]) <= len(live) // 30, bad["json_spacing"]
    assert "container" not in envelope.start_keys
    assert "server_tool_use" not in envelope.start_usage
    assert not {"cache_creation", "service_tier", "inference_geo"} & envelope.delta_usage


def test_every_synthesized_stream_has_the_live_envelope(live: list[tuple[str, Stream]],
                                                        envelope: Envelope) -> None:
    ours = corpus_streams()
    assert len(ours) >= 300
    bad = differing(ours, envelope)
    print("\n" + "\n".join(_iter_print(envelope, differing(live, envelope), bad, len(live),
                                       len(ours))))
    assert not any(bad.values()), {p: v[:5] for p, v in bad.items() if v}


def test_output_tokens_at_start_are_above_1_about_as_often_as_live(envelope: Envelope) -> None:
    """Over the corpus: ``message_start.usage.output_tokens`` above 1 about as often as in live
    streams (91 of 136)."""
    ours = corpus_streams()
    over_one = sum(int(s[0]["message"]["usage"]["output_tokens"]) > 1 for _, s in ours)
    n_live = sum(len(v) for v in envelope.start_tokens.values())
    print(f"\nmessage_start output_tokens > 1: corpus {over_one} of {len(ours)}, "
          f"live {envelope.over_one} of {n_live}")
    assert abs(over_one / len(ours) - envelope.over_one / n_live) < 0.2


def test_chunk_lengths_of_live_messages_synthesized_again_are_live_like(
        live: list[tuple[str, Stream]]) -> None:
    """Each live stream's message, synthesized again: over the same texts and inputs, the
    chunk lengths have the live medians (text 14, JSON 7) within a factor 1.5 and vary as much
    (as many distinct lengths, within a factor 2). The corpus's texts are too short to measure
    this on (none reaches the longest usual chunk)."""
    mine: dict[str, list[int]] = {"text": [], "json": []}
    theirs: dict[str, list[int]] = {"text": [], "json": []}
    for name, s in live:
        try:
            message = assemble_message(s)
        except (StreamError, ValueError):
            continue
        again = [e.data for e in synthesize_events(message, seed=name)]
        for side, stream in ((theirs, s), (mine, again)):
            text, js = _chunk_lengths(stream)
            side["text"] += [n for b in text for n in b]
            side["json"] += [n for b in js for n in b]
    print()
    for label in ("text", "json"):
        m, live_m = statistics.median(mine[label]), statistics.median(theirs[label])
        print(f"{label} chunks: synthesized median {m} of {len(mine[label])}, "
              f"{len(set(mine[label]))} lengths; live median {live_m} of {len(theirs[label])}, "
              f"{len(set(theirs[label]))} lengths")
        assert live_m / 1.5 <= m <= live_m * 1.5, (label, m, live_m)
        assert len(set(theirs[label])) / 2 <= len(set(mine[label])) <= 2 * len(set(theirs[label]))


def test_live_messages_synthesized_again_have_the_live_envelope(
        live: list[tuple[str, Stream]], envelope: Envelope) -> None:
    """Beyond the corpus: each live stream's message (thinking, citations, server tools, calls
    from code...) synthesized again passes every property."""
    again: list[tuple[str, Stream]] = []
    for name, s in live:
        try:
            message = assemble_message(s)
        except (StreamError, ValueError):
            continue
        again.append((name, [e.data for e in synthesize_events(message, seed=name)]))
    assert len(again) >= len(live) - 10
    bad = differing(again, envelope)
    assert not any(bad.values()), {p: v[:5] for p, v in bad.items() if v}
