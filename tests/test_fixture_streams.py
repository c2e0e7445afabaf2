"""Streamed cassettes hold the same conversation as their plain siblings: same requests (plus
``stream: true``), and streams that reassemble (by the SDK's own accumulator) into the plain
responses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from simulator.cassette import Cassette, iter_corpus
from simulator.lint_sdk import sdk_accumulate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _pairs() -> list[tuple[Cassette, Cassette]]:
    by_id = {c.id: c for c in iter_corpus(FIXTURES)}
    return [(by_id[cid.removesuffix("_streamed")], c) for cid, c in sorted(by_id.items())
            if c.streamed and cid.removesuffix("_streamed") in by_id]


PAIRS = _pairs()


def test_most_streamed_cassettes_have_a_plain_sibling() -> None:
    assert len(PAIRS) >= 60


@pytest.mark.parametrize(("plain", "streamed"), PAIRS, ids=[p.id for p, _ in PAIRS])
def test_streamed_variant_is_the_same_conversation(plain: Cassette, streamed: Cassette) -> None:
    assert len(plain.exchanges) == len(streamed.exchanges)
    for a, b in zip(plain.exchanges, streamed.exchanges, strict=True):
        body: dict[str, Any] = copy.deepcopy(b.request["body"])
        assert body.pop("stream") is True
        assert body == a.request["body"]
        if "events" not in b.response:
            assert b.response["body"]["type"] == "error"  # a refused request is never streamed
            continue
        message, why = sdk_accumulate(b.response["events"])
        assert why is None
        assert message is not None
        assert message == a.response["body"]
