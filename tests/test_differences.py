"""Issue 37: a matcher refusal names the first differing path, in one line, and cuts nothing
that matters (the path whole; a long value around where it differs)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.differences import VALUE_LIMIT, Difference, first_difference, join


def test_paths_in_the_requests_own_words() -> None:
    rec = {"input_schema": {"properties": {"location": {"type": "string"}}}}
    got = {"input_schema": {"properties": {"location": {"type": "number"}}}}
    d = first_difference(rec, got, "tools[get_weather]")
    assert d is not None
    assert d.line == ('tools[get_weather].input_schema.properties.location.type: '
                      'recorded "string", received "number"')
    assert (d.path, d.recorded, d.received, d.absent) == (
        "tools[get_weather].input_schema.properties.location.type", "string", "number", "")


def test_absent_sides_and_odd_keys() -> None:
    d = first_difference({"a b": 1}, {}, "x")
    assert d == Difference('x["a b"]', 1, None, "received")
    assert d.line == 'x["a b"]: recorded 1, received absent'
    d = first_difference([{"type": "text"}], [{"type": "text"}, {"type": "image"}], "content")
    assert d is not None and d.line == 'content[1]: recorded absent, received {"type": "image"}'
    assert join("", "model") == "model"


def test_a_list_of_plain_values_is_one_value() -> None:
    d = first_difference({"required": ["a", "b"]}, {"required": ["a"]}, "s")
    assert d is not None and d.line == 's.required: recorded ["a", "b"], received ["a"]'


def test_equal_as_the_matchers_compare_keys() -> None:
    assert first_difference(1, 1.0, "v") is None  # one JSON number
    assert first_difference({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}) is None
    assert first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None  # key order


def test_a_long_value_is_cut_around_where_it_differs() -> None:
    a = "x" * 500 + "A" + "y" * 500
    b = "x" * 500 + "B" + "y" * 500
    line = Difference("messages[0].content", a, b).line
    assert line.startswith("messages[0].content: recorded …")
    assert "A" in line and "B" in line and "(1003 characters)" in line
    assert len(line) < 2 * VALUE_LIMIT + 100


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(a=JSON, b=JSON)
def test_none_exactly_when_equal_and_always_one_line(a: Any, b: Any) -> None:
    d = first_difference(a, b, "root")
    assert (d is None) == (a == b)
    if d is not None:
        assert d.path.startswith("root") and "\n" not in d.line


def test_a_key_ending_in_a_newline_is_quoted() -> None:
    """``$`` also matches before a final newline: a key ``"A\\n"`` once printed bare and broke
    the one line (found by the property above in CI)."""
    d = first_difference({}, {"A\n": None}, "root")
    assert d is not None and d.path == 'root["A\\n"]' and "\n" not in d.line
