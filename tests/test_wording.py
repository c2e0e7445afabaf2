"""Schema violations are worded as the API words them (simulator.rules.wording), never as the
JSON Schema validator does."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.rules import check_request
from simulator.rules.wording import api_location, problem
from simulator.state import SimState

B: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 10,
                     "messages": [{"role": "user", "content": "hi"}]}


def first(body: dict[str, Any]) -> tuple[str, str]:
    v = check_request(body, {}, SimState())[0]
    return v.rule_id, v.message


@pytest.mark.parametrize(("body", "message"), [
    # issue 25, held-out live capture: a malformed content block names the message
    ({**B, "messages": [{"role": "user", "content": ["Invalid content"]}]},
     "messages.0: Input does not match the expected shape."),
    ({**B, "messages": [{"role": "user", "content": [{"text": "no type"}]}]},
     "messages.0: Input does not match the expected shape."),
    ({k: v for k, v in B.items() if k != "max_tokens"}, "max_tokens: Field required"),
    # live: langgenius/dify#25953 (req_011C…, 2025-09), devoxx/DevoxxGenieIDEAPlugin#567
    ({**B, "messages": []}, "messages: at least one message is required"),
    ({k: v for k, v in B.items() if k != "messages"}, "messages: Field required"),
    ({**B, "max_tokens": "10"}, "max_tokens: Input should be a valid integer"),
    ({**B, "max_tokens": 0}, "max_tokens: Input should be greater than or equal to 1"),
    ({**B, "temperature": "hot"}, "temperature: Input should be a valid number"),
    ({**B, "stream": "yes"}, "stream: Input should be a valid boolean"),
    ({**B, "messages": [{"role": "user"}]}, "messages.0.content: Field required"),
    # a tagged item's tag follows its index, as in the API's own paths (pydai__531)
    ({**B, "messages": [{"role": "user", "content": [{"type": "text"}]}]},
     "messages.0.content.0.text.text: Field required"),
    ({**B, "tools": [{"name": "x"}]}, "tools.0.custom.input_schema: Field required"),
])
def test_request_schema_speaks_the_api_wording(body: dict[str, Any], message: str) -> None:
    assert first(body) == ("request.schema", message)


def test_no_validator_phrase_reaches_a_client() -> None:
    bodies = [{**B, "messages": [{"role": "user", "content": [1, None, "x", []]}]},
              {**B, "tools": "x"}, {**B, "system": 5}, {**B, "metadata": []},
              {**B, "tool_choice": 3}, {**B, "messages": "hi"}]
    for body in bodies:
        for v in check_request(body, {}, SimState()):
            for phrase in ("is not of type", "is a required property", "is not valid under",
                           "is less than the minimum", "is not one of", "Additional properties"):
                assert phrase not in v.message, (body, v.message)


def test_location_and_problem_families() -> None:
    body = {"messages": [{"role": "user", "content": [{"type": "tool_result", "content": [
        {"type": "document", "source": {}}]}]}]}
    parts = "messages/0/content/0/content/0/source".split("/")
    assert api_location(parts, body) == (
        "messages.0.content.0.tool_result.content.0.document.source", False)
    assert problem("required", "'text' is a required property") == ("text", "Field required")
    assert problem("additionalProperties",
                   "Additional properties are not allowed ('foo' was unexpected)") == \
        ("foo", "Extra inputs are not permitted")
    assert problem("enum", "'bot' is not one of ['user', 'assistant']") == \
        (None, "Input should be 'user' or 'assistant'")
    assert problem("anyOf", "whatever") == (None, "Input does not match the expected shape.")
