"""In-process replay: the simulator against VCR.py and against the transport floor.

Each variant drives the unmodified ``anthropic`` SDK through the same conversation:

- ``floor``: an ``httpx2.MockTransport`` handing back the canned response, no checks at all: the
  very bytes the simulator serves (compact JSON; for a stream, the events the simulator
  synthesizes, encoded once before timing), so the SDK does the same parsing work in every variant;
- ``vcr``: VCR.py replaying a cassette recorded from the floor (record mode ``none``);
- ``simulator``: the tooluse simulator, every default rule on (``request.schema`` included),
  through its in-process ``httpx2`` transport, over a cassette file loaded per conversation with
  ``Simulator.from_path`` (what a user's test does; the process parses an unchanged file once);
- ``simulator_cold`` (reported, no target): the same, but the cassette's JSON parsed and a
  ``Cassette`` built from it in every conversation (no parse reused; what the first test pays);
- ``simulator_fresh`` (reported, no target): the same file, but every conversation's client
  content (the prompt, each tool result) is new, as when a real tool runs again: no request was
  judged before, so nothing of a whole-request verdict is reused (the assistant turns, as served,
  still are); what a user's test pays when its tool output changes from run to run.

Every variant pays the SDK client's own work (building, sending and parsing each request and
response, creating the client). A conversation's cost includes loading its cassette (what a user
pays per test: VCR.py reads its YAML file, the simulator parses its JSON cassette and builds a
``Simulator``). Variants are interleaved round by round so machine noise hits them alike; time is
this process's CPU time (``time.process_time``: on a shared machine wall time also counts other
processes' work), and the median per-request time over the rounds is kept. A full garbage
collection runs (untimed) before each timed batch: VCR.py leaves a lot of garbage behind, and
without it the variant timed next would pay for its collection.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from . import conversation

Pairs = list[tuple[dict[str, Any], dict[str, Any]]]
Runner = Callable[[], None]


def _client(transport: httpx2.BaseTransport | None = None) -> anthropic.Anthropic:
    http = httpx2.Client(transport=transport) if transport is not None else None
    return anthropic.Anthropic(api_key="placeholder-not-a-key", max_retries=0, http_client=http)


def _drive(client: anthropic.Anthropic, pairs: Pairs, stream: bool) -> None:
    for request, _ in pairs:
        if stream:
            with client.messages.create(**request, stream=True) as events:
                for _ev in events:
                    pass
        else:
            client.messages.create(**request)


def canned(message: dict[str, Any], stream: bool) -> bytes:
    """The bytes the simulator serves for ``message`` (what the floor and VCR.py hand back)."""
    from simulator.sse import synthesize_events

    if stream:
        return b"".join(e.encode() for e in synthesize_events(message))
    return json.dumps(message, separators=(",", ":")).encode()


def floor(pairs: Pairs, stream: bool) -> Runner:
    bodies = [canned(r, stream) for _, r in pairs]
    ctype = "text/event-stream" if stream else "application/json"

    def run() -> None:
        it = iter(bodies)

        def handler(request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(200, headers={"content-type": ctype}, content=next(it))

        _drive(_client(httpx2.MockTransport(handler)), pairs, stream)

    return run


def vcr_runner(pairs: Pairs, stream: bool, workdir: Path) -> Runner:
    import vcr

    path = workdir / f"vcr_{len(pairs)}_{int(stream)}.yaml"
    recorder = vcr.VCR(record_mode="all")
    with recorder.use_cassette(str(path)):
        floor(pairs, stream)()
    player = vcr.VCR(record_mode="none")

    def run() -> None:
        with player.use_cassette(str(path)):
            _drive(_client(), pairs, stream)

    return run


def cassette_file(pairs: Pairs, stream: bool, workdir: Path) -> Path:
    """The conversation's cassette, written as a fixture file (once per configuration)."""
    path = workdir / f"sim_{len(pairs)}_{int(stream)}.json"
    if not path.exists():
        path.write_text(json.dumps(conversation.as_cassette(pairs, f"conv{len(pairs)}")))
        # A fixture file, not one written a moment ago (which the loader also compares by
        # content, for two seconds: see simulator.cassette.load_cassette).
        old = time.time() - 60
        os.utime(path, (old, old))
    return path


def simulator_runner(pairs: Pairs, stream: bool, workdir: Path) -> Runner:
    from .adapters import simulator_client

    path = cassette_file(pairs, stream, workdir)

    def run() -> None:
        _drive(simulator_client(path), pairs, stream)

    return run


def simulator_fresh_runner(pairs: Pairs, stream: bool, workdir: Path, runs: int) -> Runner:
    from .adapters import simulator_client

    path = cassette_file(pairs, stream, workdir)
    fresh = [conversation.build(len(pairs), salt=f" (run {uuid.uuid4().hex})") for _ in range(runs)]
    it = iter(fresh)

    def run() -> None:
        _drive(simulator_client(path), next(it), stream)

    return run


def simulator_cold_runner(pairs: Pairs, stream: bool) -> Runner:
    from simulator.cassette import parse_cassette

    from .adapters import simulator_client

    text = json.dumps(conversation.as_cassette(pairs, f"conv{len(pairs)}"))

    def run() -> None:
        _drive(simulator_client(parse_cassette(json.loads(text))), pairs, stream)

    return run


def measure(rounds: int = 7, reps: int = 5, smoke: bool = False) -> list[dict[str, Any]]:
    if smoke:
        rounds, reps = 1, 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for turns in (2, 20):
            pairs = conversation.build(turns)
            for stream in (False, True):
                variants: dict[str, Runner] = {"floor": floor(pairs, stream),
                                               "vcr": vcr_runner(pairs, stream, Path(tmp))}
                note = ""
                try:
                    variants["simulator"] = simulator_runner(pairs, stream, Path(tmp))
                    variants["simulator"]()  # warm and verify it replays at all
                    variants["simulator_cold"] = simulator_cold_runner(pairs, stream)
                    variants["simulator_cold"]()
                    variants["simulator_fresh"] = simulator_fresh_runner(
                        pairs, stream, Path(tmp), 1 + rounds * reps)
                    variants["simulator_fresh"]()
                except Exception as e:  # noqa: BLE001 - reported in the table
                    variants.pop("simulator", None)
                    variants.pop("simulator_cold", None)
                    variants.pop("simulator_fresh", None)
                    note = f"simulator unavailable: {type(e).__name__}: {e}"[:200]
                samples: dict[str, list[float]] = {k: [] for k in variants}
                for _ in range(rounds):
                    for name, run in variants.items():
                        gc.collect()  # untimed: no variant pays for the garbage of another
                        t0 = time.process_time()
                        for _ in range(reps):
                            run()
                        samples[name].append((time.process_time() - t0) / (reps * turns))
                med = {k: statistics.median(v) for k, v in samples.items()}
                row: dict[str, Any] = {
                    "section": "replay", "exchanges": turns, "stream": stream, "rounds": rounds,
                    "us_per_request": {k: round(v * 1e6, 1) for k, v in med.items()},
                }
                if "simulator" in med:
                    row["ratio_vs_vcr"] = round(med["simulator"] / med["vcr"], 3)
                    row["ratio_vs_floor"] = round(med["simulator"] / med["floor"], 3)
                    row["cold_cassette_ratio_vs_floor"] = round(
                        med["simulator_cold"] / med["floor"], 3)
                    row["fresh_content_ratio_vs_floor"] = round(
                        med["simulator_fresh"] / med["floor"], 3)
                    row["target"] = "ratio_vs_vcr <= 1.0 and ratio_vs_floor <= 1.3"
                    row["met"] = row["ratio_vs_vcr"] <= 1.0 and row["ratio_vs_floor"] <= 1.3
                if note:
                    row["note"] = note
                rows.append(row)
    return rows
