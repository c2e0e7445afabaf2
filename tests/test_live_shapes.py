"""Shapes live traffic has and the schemas model (issue 16), in strict mode; and what strict mode
still refuses around them."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.validation import errors, validate

USAGE = {"input_tokens": 10, "output_tokens": 5}


def message(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": "msg_011CaLKaWmWgKXmnFr89FWBM", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-6", "content": content, "stop_reason": "end_turn",
            "stop_sequence": None, "usage": USAGE, **extra}


def strict_errors(obj: Any, kind: str) -> list[str]:
    return [f"{v.pointer}: {v.message}" for v in errors(validate(obj, kind, strict=True))]


CASES = {
    "abort_reason": message([{"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_01",
                              "content": {"type": "code_execution_result", "stdout": "4\n",
                                          "stderr": "", "return_code": 0, "content": [],
                                          "abort_reason": None}}]),
    "iterations": message([], usage={**USAGE, "iterations": [
        {"type": "message", "input_tokens": 1, "output_tokens": 2,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        {"type": "advisor_message", "model": "claude-opus-4-8", "input_tokens": 3,
         "output_tokens": 4}]}),
    "stop_details": message([], stop_reason="refusal", stop_details={
        "type": "refusal", "category": "cyber", "explanation": "blocked",
        "recommended_model": "claude-fable-5"}),
    "editor_error_message": message([{
        "type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_01",
        "content": {"type": "text_editor_code_execution_tool_result_error",
                    "error_code": "unavailable", "error_message": "File not found: /tmp/x"}}]),
    "web_citations": message([{"type": "text", "text": "Paris.", "citations": [{
        "type": "web_search_result_location", "cited_text": "Paris is the capital",
        "encrypted_index": "Eo8B", "title": "Paris", "url": "https://example.org"}]}]),
    "direct_caller": message([{"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                               "input": {"city": "Paris"}, "caller": {"type": "direct"}}],
                             stop_reason="tool_use"),
    "container_microseconds": message([], container={
        "id": "container_011CaETbwpaahgXhq7XjBjpj", "expires_at": "2026-04-20T06:19:45.086939Z"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_live_shape_validates_strictly(name: str) -> None:
    assert strict_errors(CASES[name], "response") == []


def test_strict_mode_still_closes_the_new_objects() -> None:
    bad = message([], stop_reason="refusal", stop_details={"type": "refusal", "bogus": 1})
    assert any("bogus" in e for e in strict_errors(bad, "response"))
    bad = message([], usage={**USAGE, "iterations": [{"type": "message", "input_tokens": -1,
                                                       "output_tokens": 0}]})
    assert strict_errors(bad, "response")


@pytest.mark.parametrize("tool", [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
     "user_location": {"type": "approximate", "city": "Paris"}},
    {"type": "web_fetch_20250910", "name": "web_fetch", "citations": {"enabled": True}},
    {"type": "web_search_20260318", "name": "web_search", "response_inclusion": "excluded"},
    {"type": "web_fetch_20260318", "name": "web_fetch", "use_cache": False,
     "response_inclusion": "excluded"},
])
def test_live_web_tool_versions_validate_strictly(tool: dict[str, Any]) -> None:
    assert strict_errors(tool, "tool_definition") == []
    assert strict_errors({**tool, "name": "search"}, "tool_definition")  # the name is fixed


def test_a_field_of_the_newer_version_is_refused_on_the_older() -> None:
    older = {"type": "web_fetch_20260209", "name": "web_fetch", "use_cache": False}
    assert [m for m in strict_errors(older, "tool_definition") if "use_cache" in m]
