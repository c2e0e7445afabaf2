"""The count_tokens estimate against live counts: within 25 % (issue 25).

Offline: the two examples of the token-counting docs (a system prompt and a message: 14 tokens;
a custom tool and a message: 403). With ../shared/real_traffic (skipped when absent): every
count_tokens request the API answered 200 there (memory tool: 1,581; a tool search round
trip: 641). Smaller requests are no longer counted double (the request's JSON keys are not text
the model reads): a one-word message stays near ten tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.count_tokens import estimate_tokens

DOCS_EXAMPLES: list[tuple[dict[str, Any], int]] = [
    ({"model": "claude-sonnet-4-5", "system": "You are a scientist",
      "messages": [{"role": "user", "content": "Hello, Claude"}]}, 14),
    ({"model": "claude-sonnet-4-5", "tools": [{
        "name": "get_weather", "description": "Get the current weather in a given location",
        "input_schema": {"type": "object", "properties": {"location": {
            "type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
            "required": ["location"]}}],
      "messages": [{"role": "user", "content": "What's the weather like in San Francisco?"}]}, 403),
]


@pytest.mark.parametrize(("body", "live"), DOCS_EXAMPLES)
def test_estimate_is_within_25_percent_of_the_docs_counts(body: dict[str, Any], live: int) -> None:
    assert abs(estimate_tokens(body) / live - 1) <= 0.25, estimate_tokens(body)


def test_small_requests_are_not_counted_double() -> None:
    one_word = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]}
    assert estimate_tokens(one_word) <= 12
    # the structure adds nothing: the same text as a plain string or a text block
    assert estimate_tokens({"messages": [{"role": "user", "content": "hello"}]}) == \
        estimate_tokens(one_word)


@pytest.mark.shared
def test_estimate_is_within_25_percent_of_live_counts(shared_dir: Path) -> None:
    root = shared_dir / "real_traffic"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    from simulator.captures import load_captures
    from simulator.fidelity import judge
    from simulator.fidelity_report import _counts
    counts = _counts(judge(load_captures(root)))
    assert len(counts) >= 2
    for cid, live, est in counts:
        assert abs(est / live - 1) <= 0.25, (cid, live, est)
