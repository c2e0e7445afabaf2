"""What ``view`` shows is judged by meaning: every tab rendering and line-number form the docs
leave open is accepted, and the one used is named; a line that shows other text is not accepted.

Seed 001 "view" asks only for the file's content; "Nomor baris" (Line numbers) shows one form
and requires none (conformance/properties/editor_view_forms.py).
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from conformance.properties.editor_view_forms import (
    MAX_TAB_WIDTH,
    RAW,
    readable_texts,
    shown_as,
    tab_convention,
)

PREFIXES = ["", "{n}: ", "{n:>6}\t", "{n} | ", "L{n}: ", "L{n} | ", "{n}\u2192", "[{n}] ",
            "({n}) ", "{n}. ", "{n}\u2502", "{n}> ", "line {n}: ", "{n}:\t", "{n:>4}  "]
bodies = st.text(st.sampled_from(list("ab x_=(é\t")), min_size=1, max_size=14).filter(
    lambda b: b.strip() != "")
renderings = st.one_of(st.just(("raw", 0)), st.tuples(st.just("stops"), st.integers(1, 16)),
                       st.tuples(st.just("spaces"), st.integers(1, 16)),
                       st.tuples(st.just("whole-line stops"), st.integers(1, 16)))


def _render(body: str, prefix: str, how: tuple[str, int]) -> tuple[str, str]:
    kind, n = how
    if kind == "raw":
        return prefix + body, RAW
    if kind == "stops":
        return prefix + body.expandtabs(n), f"expanded to tab stops of {n}"
    if kind == "whole-line stops":
        return (prefix + body).expandtabs(n), f"expanded to tab stops of {n}"
    return prefix + body.replace("\t", " " * n), f"{n} spaces each"


@given(body=bodies, prefix=st.sampled_from(PREFIXES), number=st.integers(1, 12000),
       how=renderings, trailing=st.sampled_from(["", " ", "  "]))
def test_every_tab_rendering_and_number_form_is_accepted_and_named(
        body: str, prefix: str, number: int, how: tuple[str, int], trailing: str) -> None:
    line, label = _render(body, prefix.format(n=number), how)
    labels = shown_as(line + trailing, body)
    assert labels is not None, (line, body)
    if "\t" in body:
        assert label in labels, (line, labels)


@given(body=bodies, prefix=st.sampled_from(PREFIXES), how=renderings,
       at=st.integers(0, 13), other=st.sampled_from(list("QZ#")))
def test_other_text_is_not_accepted(body: str, prefix: str, how: tuple[str, int], at: int,
                                    other: str) -> None:
    changed = body[:at % len(body)] + other + body[at % len(body) + 1:]
    if changed.strip() == body.strip():
        return
    line, _ = _render(changed, prefix.format(n=7), how)
    assert shown_as(line, body) is None, (line, body)


def test_tab_conventions_are_named() -> None:
    assert tab_convention({RAW, "8 spaces each"}) == RAW
    assert tab_convention({"expanded to tab stops of 8"}) == "expanded to tab stops of 8"
    assert tab_convention({"expanded to tab stops of 4", "4 spaces each"}) == (
        "expanded to tab stops of 4 or 4 spaces each")
    assert tab_convention(set()).startswith("varies")
    assert tab_convention(None) == ""
    assert MAX_TAB_WIDTH >= 8


def test_a_json_result_is_read_decoded() -> None:
    text = json.dumps({"output": "1: a\tb\n2: c\u00e9", "meta": ["x"]})
    assert "1: a\tb\n2: c\u00e9" in readable_texts(text)
    assert readable_texts("plain {text}") == ["plain {text}"]
    assert readable_texts("{not json") == ["{not json"]
