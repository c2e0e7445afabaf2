"""``tooluse lint-tools``: one finding per violated declaration rule, with a stable id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.lint_tools import LintInputError, detect_kind, lint_document
from simulator.declarations import DECLARATION_RULES, check_agent_tools, check_custom_tool
from simulator.registry import RESERVED_AGENT_TOOL_NAMES

#: The declaration from seed 004, "Deklarasikan alat pada agen": valid.
SEED_TOOL = {"type": "custom", "name": "get_order_status",
             "description": "Look up an order in the internal fulfillment system by order ID.",
             "input_schema": {"type": "object",
                              "properties": {"order_id": {"type": "string",
                                                          "description": "The order ID"}},
                              "required": ["order_id"]}}


def custom(**changes: Any) -> dict[str, Any]:
    tool = json.loads(json.dumps(SEED_TOOL))
    tool.update(changes)
    return tool


def rules_of(tools: list[dict[str, Any]], **kw: Any) -> list[str]:
    return [f.rule for f in check_agent_tools(tools, **kw)]


def test_the_seed_declaration_is_clean() -> None:
    assert rules_of([{"type": "agent_toolset_20260401"}, SEED_TOOL]) == []


@pytest.mark.parametrize("tool, rule", [
    (custom(name=""), "custom_tool.name.pattern"),
    (custom(name="x" * 129), "custom_tool.name.pattern"),
    (custom(name="get order"), "custom_tool.name.pattern"),
    (custom(name="read"), "custom_tool.name.not_builtin"),
    (custom(name="mcp__orders"), "custom_tool.name.reserved_prefix"),
    (custom(name="ant__orders"), "custom_tool.name.reserved_prefix"),
    (custom(description=""), "custom_tool.description.required"),
    (custom(description="   "), "custom_tool.description.required"),
    (custom(input_schema=None), "custom_tool.input_schema.object"),
    (custom(input_schema={"type": "object", "properties": {
        "o": {"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}}}}),
     "custom_tool.input_schema.no_ref"),
    (custom(input_schema={"anyOf": [{"type": "object"}]}),
     "custom_tool.input_schema.no_top_level_combinator"),
    (custom(input_schema={"type": "object", "properties": {"order id": {"type": "string"}}}),
     "custom_tool.input_schema.property_name"),
    (custom(input_schema={"type": "object", "properties": {"p" * 65: {"type": "string"}}}),
     "custom_tool.input_schema.property_name"),
])
def test_each_custom_tool_rule(tool: dict[str, Any], rule: str) -> None:
    assert rules_of([tool]) == [rule]
    assert rule in DECLARATION_RULES


def test_nested_combinators_and_dotted_property_names_are_allowed() -> None:
    tool = custom(input_schema={"type": "object", "additionalProperties": False, "title": "T",
                                "properties": {"a.b-c_1": {"anyOf": [{"type": "string"}]}}})
    assert rules_of([tool]) == []


def test_duplicate_names_and_the_entry_limit() -> None:
    assert rules_of([SEED_TOOL, SEED_TOOL]) == ["custom_tool.name.unique"]
    many = [custom(name=f"t{i}") for i in range(257)]
    assert rules_of(many) == ["agent.tools.max_entries"]
    assert rules_of(many[:128], max_tools=128) == []
    assert rules_of(many[:129], max_tools=128) == ["agent.tools.max_entries"]


def test_one_finding_per_violation() -> None:
    bad = custom(name="bash", description="", input_schema={"oneOf": [], "properties": {
        "a": {"$ref": "#/x"}, "b": {"$ref": "#/y"}}})
    assert sorted(f.rule for f in check_custom_tool(bad)) == sorted([
        "custom_tool.name.not_builtin", "custom_tool.description.required",
        "custom_tool.input_schema.no_top_level_combinator", "custom_tool.input_schema.no_ref",
        "custom_tool.input_schema.no_ref"])


@settings(max_examples=40, deadline=None)
@given(st.from_regex(r"[A-Za-z0-9_-]{1,128}", fullmatch=True))
def test_any_name_of_the_documented_alphabet_passes_the_pattern(name: str) -> None:
    found = {f.rule for f in check_custom_tool(custom(name=name))}
    assert "custom_tool.name.pattern" not in found
    if name not in RESERVED_AGENT_TOOL_NAMES and not name.startswith(("mcp__", "ant__")):
        assert found == set()


@pytest.mark.parametrize("name", ["get_weather\n", "a b", ""])
def test_a_name_outside_the_alphabet_fails_the_pattern(name: str) -> None:
    """Matched whole: a final newline once slipped through a ``$``-anchored pattern."""
    assert "custom_tool.name.pattern" in {f.rule for f in check_custom_tool(custom(name=name))}


PTC = ["code_execution_20260120"]


@pytest.mark.parametrize("doc, rules", [
    ({"tools": [{"name": "q", "input_schema": {"type": "object"}, "strict": True,
                 "allowed_callers": PTC}]}, ["ptc.strict_unsupported"]),
    ({"tools": [{"name": "q", "input_schema": {"type": "object", "properties": {
        "n": {"$ref": "#"}}}, "allowed_callers": PTC}]}, ["ptc.recursive_ref"]),
    ({"tools": [{"type": "mcp_toolset", "mcp_server_name": "m",
                 "default_config": {"allowed_callers": PTC}}], "messages": []},
     ["ptc.mcp_not_code_callable"]),
    ({"tools": [{"type": "bash_20250124", "name": "shell"}]}, ["tools.fixed_type_name"]),
    ({"tools": [{"name": "q", "input_schema": {"type": "object"}, "allowed_callers": PTC}],
      "tool_choice": {"type": "tool", "name": "q"}}, ["tool_choice.requires_direct_caller"]),
    ({"tools": [{"name": "q", "input_schema": {"type": "object"}, "allowed_callers": PTC}],
      "tool_choice": {"type": "auto", "disable_parallel_tool_use": True}},
     ["ptc.disable_parallel_tool_use_unsupported"]),
    ({"tools": [{"name": "q", "input_schema": {"type": "object"}, "strict": True,
                 "allowed_callers": ["direct"]}]}, []),
])
def test_messages_rules_use_the_simulator_rule_ids(doc: dict[str, Any], rules: list[str]) -> None:
    report = lint_document(doc)
    assert report.kind == "messages"
    assert [f.rule for f in report.findings] == rules


def test_messages_findings_name_each_offending_tool() -> None:
    tools = [{"name": f"q{i}", "input_schema": {"type": "object"}, "strict": True,
              "allowed_callers": PTC} for i in range(3)]
    findings = lint_document({"tools": tools, "messages": []}).findings
    assert [f.pointer for f in findings] == [f"/tools/{i}/strict" for i in range(3)]
    assert all(f.message.startswith(f"tools.{i}.") for i, f in enumerate(findings))


def test_kind_detection() -> None:
    assert detect_kind([SEED_TOOL]) == "agent"
    assert detect_kind({"tools": [{"type": "agent_toolset_20260401"}]}) == "agent"
    assert detect_kind({"model": "m", "messages": [], "tools": [SEED_TOOL]}) == "messages"
    assert detect_kind([{"type": "code_execution_20260120", "name": "code_execution"}]) == "messages"
    with pytest.raises(LintInputError):
        lint_document({"no": "tools"})


def test_cli_exit_codes_and_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"name": "a", "tools": [SEED_TOOL]}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([custom(name="mcp__x", description="")]))
    assert main(["lint-tools", str(good)]) == 0
    assert main(["lint-tools", str(good), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith(f"{bad}:/0/name: MUST custom_tool.name.reserved_prefix: ")
    assert "https://platform.claude.com/docs/en/managed-agents/self-hosted-sandboxes-custom-tools" in out[0]
    assert "004_4f295fb03dc034c9.txt" not in out[0]
    assert main(["lint-tools", "--json", str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in doc["findings"]} == {"custom_tool.name.reserved_prefix",
                                                    "custom_tool.description.required"}
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main(["lint-tools", str(broken)]) == 2
    assert main(["lint-tools", str(tmp_path / "missing.json")]) == 2
    assert "broken JSON" in capsys.readouterr().err
