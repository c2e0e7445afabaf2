"""The envelope profiles through the SDK's own stream accumulator (issue 40).

Every streamed cassette of the corpus is replayed through an unmodified ``anthropic`` client
(``client.beta.messages.stream(...)`` -> ``get_final_message()``, via ``simulator.mock``) once
with the default envelope and once with the ``adversarial`` one (pings between every two events,
one-character text, thinking and JSON chunks, padding, every SSE line ending): the SDK gets the
same final message, or the same error, from both. The adversarial draw is seeded by the exchange
(the same bytes at every run); the whole file takes about 14 CPU seconds in one process.
"""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path
from typing import Any

import anthropic
import pytest

import simulator
from simulator.cassette import Cassette, default_fixtures_root, iter_corpus

ROOT = default_fixtures_root()


@cache
def _stream_params() -> frozenset[str]:
    client = anthropic.Anthropic(api_key="x")
    return frozenset(inspect.signature(client.beta.messages.stream).parameters)


def _messages_request(request: dict[str, Any]) -> bool:
    return request.get("method", "POST") == "POST" and \
        str(request.get("path", "")).rstrip("/") == "/v1/messages"


def streamed_cassettes() -> list[Cassette]:
    """Cassettes with a streamed Messages exchange (a Managed Agents session's event stream is
    another protocol, not enveloped)."""
    return [c for c in iter_corpus(ROOT)
            if any(_messages_request(ex.request) and ("events" in ex.response
                                                      or (ex.request.get("body") or {}).get("stream"))
                   for ex in c.exchanges)]


def _outcome(client: anthropic.Anthropic, request: dict[str, Any]) -> tuple[Any, ...]:
    body = dict(request.get("body") or {})
    body.pop("stream", None)
    known = _stream_params()
    kwargs = {k: v for k, v in body.items() if k in known and k != "betas"}
    extra = {k: v for k, v in body.items() if k not in kwargs}
    headers = {k: v for k, v in (request.get("headers") or {}).items()
               if k.lower() == "anthropic-beta"}
    try:
        with client.beta.messages.stream(**kwargs, extra_body=extra or None,
                                         extra_headers=headers or None) as stream:
            message = stream.get_final_message()
    except anthropic.APIStatusError as e:
        return "error", e.status_code, str(e.message)
    except anthropic.APIError as e:
        return "error", type(e).__name__, str(e.message)
    return "message", message.model_dump(mode="json")


def replay(cassette: Cassette, envelope: str) -> list[tuple[Any, ...]]:
    """What the SDK's accumulator makes of each Messages request of ``cassette``."""
    out: list[tuple[Any, ...]] = []
    with simulator.mock(cassette, envelope=envelope, recorded_time=True):
        client = anthropic.Anthropic(max_retries=0)
        for ex in cassette.exchanges:
            if _messages_request(ex.request):
                out.append(_outcome(client, ex.request))
    return out


def _recorded_error(cassette: Cassette) -> list[bool]:
    """Whether each Messages exchange recorded an error (a status >= 400, an ``error`` event,
    or a request recorded breaking a rule)."""
    out = []
    for ex in cassette.exchanges:
        if not _messages_request(ex.request):
            continue
        events = ex.response.get("events") or []
        out.append(int(ex.response.get("status", 200)) >= 400 or bool(ex.expect_rule)
                   or any("error" in (e.get("event"), (e.get("data") or {}).get("type"))
                          for e in events if isinstance(e, dict)))
    return out


CASSETTES = streamed_cassettes()


def test_the_corpus_has_streamed_cassettes() -> None:
    assert len(CASSETTES) >= 80


@pytest.mark.parametrize("cassette", CASSETTES, ids=[c.id for c in CASSETTES])
def test_the_adversarial_envelope_gives_the_sdk_the_same_message(cassette: Cassette) -> None:
    live = replay(cassette, "live")
    adversarial = replay(cassette, "adversarial")
    assert live, "no Messages request replayed"
    assert adversarial == live
    # A message where one was recorded, an error where one was: the comparison is between what
    # the accumulator assembled, not between two failures.
    assert [o[0] == "error" for o in live] == _recorded_error(cassette), live


def test_the_adversarial_stream_is_what_it_says(tmp_path: Path) -> None:
    """On the wire: pings between all events, one-character deltas, the three line endings."""
    import httpx

    cassette = next(c for c in CASSETTES if c.id == "bash/bash_20250124/one_command_streamed")
    body = dict(cassette.exchanges[0].request["body"])
    with simulator.mock(cassette, envelope="adversarial"):
        raw = httpx.post("https://api.anthropic.com/v1/messages", json=body,
                         headers={"x-api-key": "k", "anthropic-version": "2023-06-01"}).content
    assert b"\r\n" in raw and b"\r" in raw.replace(b"\r\n", b"") and b"\n" in raw.replace(b"\r\n", b"")
    from simulator.envelope import parse_raw_sse
    events = parse_raw_sse(raw.decode())
    names = [n for n, _ in events]
    assert all("ping" in (a, b) for a, b in zip(names, names[1:], strict=False))
    import json
    deltas = [json.loads(d)["delta"] for n, d in events if n == "content_block_delta"]
    for d in deltas:
        for key in ("text", "partial_json", "thinking"):
            if key in d:
                assert len(d[key]) <= 1
