"""Every ``pattern`` of the generated schemas means what JSON Schema (ECMA-262) says on both
validation paths: the compiled fast path (``jsonschema_rs``) and the detailed one (``jsonschema``
with Python's ``re``, where ``$`` also matched before a final newline, so a Managed Agents
custom tool named ``"get_weather\\n"`` was refused by one path and accepted by the other:
``validate`` answered no violation)."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.schemas import build_documents
from simulator.validation._validate import ecma_pattern, validate


def _patterns(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            found.add(node["pattern"])
        for v in node.values():
            found |= _patterns(v)
    elif isinstance(node, list):
        for v in node:
            found |= _patterns(v)
    return found


PATTERNS = sorted(set().union(*(_patterns(d) for mode in ("lenient", "strict")
                                for d in build_documents(mode).values())))


def test_the_schemas_have_patterns_to_check() -> None:
    assert any(p.endswith("$") for p in PATTERNS), PATTERNS


def _near(pattern: str) -> st.SearchStrategy[str]:
    """Strings that match the pattern, then the same with a character added, removed or a
    newline put at either end: where the two meanings of ``$`` part."""
    base = st.from_regex(ecma_pattern(pattern), fullmatch=True)
    return st.one_of(
        base,
        base.map(lambda s: s + "\n"),
        base.map(lambda s: "\n" + s),
        st.tuples(base, st.characters()).map(lambda t: t[0] + t[1]),
        st.text(max_size=8))


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_both_paths_agree_on_every_pattern(pattern: str, data: st.DataObject) -> None:
    text = data.draw(_near(pattern))
    rust = jsonschema_rs.validator_for({"type": "string", "pattern": pattern}).is_valid(text)
    assert bool(ecma_pattern(pattern).search(text)) == rust, (pattern, text)


def test_a_custom_tool_name_ending_in_a_newline_is_refused_with_its_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import simulator.validation._validate as v

    tool = {"type": "custom", "name": "get_weather\n", "description": "x",
            "input_schema": {"type": "object", "properties": {"city\n": {"type": "string"}}}}
    for fast in (True, False):  # the detailed path alone, as without jsonschema_rs
        if not fast:
            monkeypatch.setattr(v, "_fast_validator", lambda *a: None)
        rules = {x.rule for x in validate(tool, "ma_tool") if x.severity == "error"}
        assert rules == {"managed_agents.custom_tool.name",
                         "managed_agents.custom_tool.property_name"}, (fast, rules)


def test_a_refusal_the_detailed_path_cannot_explain_is_still_a_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the two paths read a keyword differently again, ``validate`` does not answer "no
    violation" for what the compiled validator refused: it gives that validator's reason."""
    import simulator.validation._validate as v

    class _Blind:
        def iter_errors(self, obj: Any) -> list[Any]:
            return []

    monkeypatch.setattr(v, "validator_for", lambda *a: _Blind())
    tool = {"type": "custom", "name": "get_weather\n", "description": "x",
            "input_schema": {"type": "object"}}
    said = validate(tool, "ma_tool")
    assert [(x.pointer, x.severity) for x in said] == [("/name", "error")], said
    assert "does not match" in said[0].message and said[0].rule.endswith(":pattern")
    assert validate({**tool, "name": "get_weather"}, "ma_tool") == []
