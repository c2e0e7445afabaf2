"""Stream envelopes measured on captures and on the simulator (:mod:`simulator.envelope`).

    live, sim = live_and_simulated(Path("captures"))   # StreamShape of each
    corpus = corpus_shape(Path("fixtures"))             # what the corpus serves streamed
    print(shape_table({"live": live, "simulator": sim, "corpus": corpus}))

An ``sse_events`` capture holds a list of ``{"event", "data"}`` (parsed payloads: padding not
kept) or the raw SSE text as a string (padding measured). Each live stream's message is streamed
again by the simulator (seeded by ``<capture id>#<n>``), so the two columns describe the same
messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .captures import Capture, load_captures
from .envelope import Stream, StreamShape, parse_raw_sse, split_streams


def stream_payloads(data: Any) -> tuple[list[Any], list[str] | None]:
    """(payloads, raw payload texts or None) of an ``sse_events`` capture's ``data``."""
    if isinstance(data, str):
        raws = [r for _, r in parse_raw_sse(data)]
        payloads: list[Any] = []
        for r in raws:
            try:
                payloads.append(json.loads(r))
            except ValueError:
                payloads.append(None)
        return payloads, raws
    if isinstance(data, list):
        return [e.get("data") if isinstance(e, dict) else None for e in data], None
    return [], None


def _raw_streams(payloads: list[Any], raws: list[str] | None) -> list[tuple[Stream, list[str] | None]]:
    """Streams with their raw payload texts (split at each ``message_start`` as payloads are)."""
    streams = split_streams(payloads)
    if raws is None:
        return [(s, None) for s in streams]
    out: list[tuple[Stream, list[str] | None]] = []
    cur: list[str] | None = None
    groups: list[tuple[list[Any], list[str]]] = []
    for p, r in zip(payloads, raws, strict=True):
        if isinstance(p, dict) and p.get("type") == "message_start":
            cur = []
            groups.append(([], cur))
        if cur is not None:
            groups[-1][0].append(p)
            cur.append(r)
    for ps, rs in groups:
        s = split_streams(ps)
        if s:
            out.append((s[0], rs))
    return out if len(out) == len(streams) else [(s, None) for s in streams]


def live_streams(captures: Iterable[Capture]) -> Iterator[tuple[str, Stream, list[str] | None]]:
    """(``<capture id>#<n>``, payloads, raw texts or None) of every live stream."""
    for c in captures:
        # a stream: its events, or the raw SSE text a recorder kept (as an sse_events capture or
        # as the body of a response capture)
        if c.kind != "sse_events" and not (c.kind == "response" and isinstance(c.data, str)
                                           and "data:" in c.data):
            continue
        payloads, raws = stream_payloads(c.data)
        for n, (s, r) in enumerate(_raw_streams(payloads, raws)):
            yield f"{c.id}#{n}", s, r


def _simulated(name: str, stream: Stream) -> tuple[Stream, list[str]] | None:
    from .http import SSEEvent
    from .sse import StreamError, assemble_message, synthesize_events
    try:
        msg = assemble_message([SSEEvent(str(e.get("type")), e) for e in stream])
    except (StreamError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None
    events = synthesize_events(msg, seed=name)
    return [e.data for e in events], [e.encode().split(b"\ndata: ", 1)[1][:-2].decode()
                                      for e in events]


def live_and_simulated(root: Path) -> tuple[StreamShape, StreamShape]:
    """The envelope of every live stream under ``root`` and of the simulator's stream of the
    same message (streams whose message does not assemble are left out of both)."""
    live, sim = StreamShape(), StreamShape()
    for name, s, raw in live_streams(load_captures(root)):
        again = _simulated(name, s)
        if again is None:
            continue
        live.add(s, raw)
        sim.add(*again)
    return live, sim


def corpus_shape(fixtures: Path) -> StreamShape:
    """The envelope of every stream a cassette corpus serves for ``stream: true`` (synthesized
    from a recorded message, or recorded events), as the engine seeds and pads them."""
    from .cassette import iter_corpus
    from .render import render_exchange
    shape = StreamShape()
    for c in iter_corpus(fixtures):
        for ex in c.exchanges:
            rec = ex.response
            body = rec.get("body")
            if "events" not in rec and not (isinstance(body, dict) and body.get("type") == "message"
                                             and int(rec["status"]) < 400):
                continue
            try:
                resp, _, _ = render_exchange(ex, True, "req_shape", seed=f"{c.id}#{ex.index}")
            except (ValueError, KeyError, TypeError):
                continue
            if resp.events is None:
                continue
            events = list(resp.events)
            for s, raw in _raw_streams([e.data for e in events],
                                       [e.encode().split(b"\ndata: ", 1)[1][:-2].decode()
                                        for e in events]):
                shape.add(s, raw)
    return shape


__all__ = ["corpus_shape", "live_and_simulated", "live_streams", "stream_payloads"]
