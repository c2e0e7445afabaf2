"""The generated JSON Schemas: up to date, valid 2020-12, and in step with the registry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from simulator import registry
from simulator.schemas import (
    DOCUMENTS,
    KINDS,
    KNOWN,
    MODES,
    SCHEMA_DIR,
    build_documents,
    enum_sources,
    expected_files,
    schema_file,
)
from simulator.schemas._core import Ctx
from simulator.schemas._tools import definition_field_schemas, messages_tool_types


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_committed_json_files_equal_the_generated_ones() -> None:
    stale = [p.name for p, text in expected_files().items()
             if not p.exists() or p.read_text(encoding="utf-8") != text]
    assert not stale, f"run python -m simulator.schemas.generate; stale: {stale}"


def test_no_stray_json_files() -> None:
    expected = {p.name for p in expected_files()}
    assert {p.name for p in SCHEMA_DIR.glob("*.json")} == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", DOCUMENTS)
def test_documents_are_valid_2020_12_schemas(mode: str, name: str) -> None:
    doc = json.loads(schema_file(name, mode).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"].endswith(f"/{mode}/{name}.json")


def test_every_kind_points_at_an_existing_definition() -> None:
    for mode in MODES:
        docs = build_documents(mode)
        for kind, (doc, name) in KINDS.items():
            assert name in docs[doc]["$defs"], (mode, kind)


def test_every_registry_tool_has_a_definition_with_its_fixed_name() -> None:
    defs = build_documents("strict")["tools"]["$defs"]
    for tool in messages_tool_types():
        schema = defs[f"tool.{tool.type}"]
        assert schema["properties"]["type"] == {"const": tool.type}
        assert schema["properties"]["name"]["const"] == tool.name
        for f in tool.definition_fields:
            assert f in schema["properties"], (tool.type, f)
    assert "tool.agent_toolset_20260401" not in defs  # Managed Agents only: see ma_tool


def test_every_definition_field_the_registry_names_has_a_json_shape() -> None:
    shapes = definition_field_schemas(Ctx("strict"))
    used = {f for t in registry.TOOLS.values() for f in t.definition_fields}
    assert used <= set(shapes), used - set(shapes)


def test_max_characters_is_refused_outside_20250728() -> None:
    defs = build_documents("lenient")["tools"]["$defs"]
    for t in registry.of_family("text_editor"):
        prop = defs[f"tool.{t.type}"]["properties"]["max_characters"]
        assert ("not" in prop) == (t.type != "text_editor_20250728"), t.type


def test_error_codes_are_closed_enums_with_sources_in_strict_mode() -> None:
    doc = build_documents("strict")["blocks"]
    found = {}
    for node in _walk(doc):
        props = node.get("properties", {})
        if "error_code" in props and "const" in props.get("type", {}):
            found[props["type"]["const"]] = props["error_code"]
    assert found["bash_code_execution_tool_result_error"]["enum"] == list(registry.BASH_ERROR_CODES)
    assert (found["text_editor_code_execution_tool_result_error"]["enum"]
            == list(registry.TEXT_EDITOR_ERROR_CODES))
    assert found["code_execution_tool_result_error"]["enum"] == list(
        registry.CODE_EXECUTION_ERROR_CODES)
    for schema in found.values():
        assert "source:" in schema["$comment"]
        assert not set(registry.LEGACY_ERROR_CODES) & set(schema["enum"])


def test_lenient_mode_knows_the_legacy_error_codes() -> None:
    doc = build_documents("lenient")["blocks"]
    notes = [n[KNOWN] for n in _walk(doc) if KNOWN in n and "notes" in n[KNOWN]]
    assert notes and all(set(n["notes"]) == set(registry.LEGACY_ERROR_CODES) for n in notes)


def test_stop_reasons_come_from_the_registry() -> None:
    stop = build_documents("strict")["messages"]["$defs"]["stop_reason"]
    assert stop["enum"] == [*registry.STOP_REASONS, *registry.BETA_STOP_REASONS, None]
    assert registry.PAUSE_TURN_SOURCE.cite() in stop["$comment"]  # what users read (issue 41)


#: Open on purpose: any JSON Schema is an input_schema; clients send many other headers.
OPEN = {"input_schema", "request_headers"}


def test_strict_documents_have_no_lenient_notes_and_are_closed() -> None:
    for name, doc in build_documents("strict").items():
        for node in _walk(doc):
            assert KNOWN not in node, name
            if (node.get("type") == "object" and "properties" in node and "title" in node
                    and "allOf" not in node):  # a by-type dispatcher; its branches are closed
                assert node.get("additionalProperties") is False or node["title"] in OPEN, (
                    name, node["title"])


def test_enum_sidecar_names_a_source_for_every_value() -> None:
    side = enum_sources()
    assert set(side["stop_reasons"]) == {*registry.STOP_REASONS, *registry.BETA_STOP_REASONS}
    assert set(side["api_error_types"]) == {*registry.API_ERROR_TYPES.values(),
                                            *registry.SDK_API_ERROR_TYPES}
    codes = side["error_codes"]
    assert set(codes["bash_code_execution_tool_result_error"]) == set(registry.BASH_ERROR_CODES)
    for group in (*codes.values(), side["stop_reasons"], side["api_error_types"]):
        assert all(isinstance(s, str) and ("https://" in s or "docs/protocol-notes.md" in s)
                   for s in group.values())


def test_max_agent_tools_is_a_setting() -> None:
    assert build_documents("strict", 3)["tools"]["$defs"]["ma_agent_tools"]["maxItems"] == 3
    assert build_documents("strict")["tools"]["$defs"]["ma_agent_tools"]["maxItems"] == 256
