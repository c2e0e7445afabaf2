"""Schemas of tool definitions and tool inputs, generated from :mod:`simulator.registry`.

Type/name pairs, definition fields, commands and ``allowed_callers`` all come from the registry;
this module only says what JSON shape each registry field name has.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import registry
from ..registry import ToolVersion
from ..sources import SEED_MANAGED_AGENTS, protocol, seed
from ._core import (
    ANY_OBJ,
    BOOL,
    MESSAGE,
    NONNEG,
    RULE,
    STR,
    Ctx,
    Schema,
    by_type,
    cite,
    const,
    document,
    enum,
    nullable,
    obj,
    ref,
    str_array,
)

NAME = "tools"
_MA_RULES = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")
_MCP_SOURCE = protocol("1. Programmatic tool calling: allowed_callers (MCP-connector tools)", "S")
#: ``text_editor_code_execution`` sub-commands (PROTOCOL.md §2 "Sub-tools").
CODE_EXECUTION_EDITOR_COMMANDS = ("view", "create", "str_replace")
_POSITIVE = {"type": "integer", "minimum": 1}


def definition_field_schemas(ctx: Ctx) -> dict[str, Schema]:
    """The JSON shape of every optional definition field name the registry uses."""
    cache_control = nullable(obj(ctx, {"type": const("ephemeral"), "ttl": {"enum": ["5m", "1h"]}},
                                 ["type"]))
    return {
        "allowed_callers": {"type": "array", "items": enum(
            ctx, registry.ALLOWED_CALLERS, cite(registry.CALLERS_SOURCE), what="allowed caller")},
        "cache_control": cache_control,
        "defer_loading": BOOL,
        "strict": BOOL,
        "eager_input_streaming": nullable(BOOL),
        "input_examples": {"type": "array", "items": ANY_OBJ},
        "max_characters": nullable(_POSITIVE),
        "description": STR,
        "input_schema": ref("input_schema"),
        "max_uses": nullable(_POSITIVE),
        "allowed_domains": nullable(str_array()),
        "blocked_domains": nullable(str_array()),
        "user_location": nullable(obj(ctx, {"type": const("approximate"), "city": nullable(STR),
                                            "region": nullable(STR), "country": nullable(STR),
                                            "timezone": nullable(STR)}, ["type"])),
        "citations": nullable(obj(ctx, {"enabled": BOOL})),
        "max_content_tokens": nullable(_POSITIVE),
        # web_search/web_fetch 20260318 (real_traffic pydai__249/251)
        "response_inclusion": nullable(STR),
        "use_cache": nullable(BOOL),
        "configs": nullable(ANY_OBJ),
        "default_config": ANY_OBJ,
        # computer use 20250124/20251124 (the SDK's BetaToolComputerUse*Param [S])
        "display_width_px": _POSITIVE,
        "display_height_px": _POSITIVE,
        "display_number": nullable({"type": "integer", "minimum": 0}),
        "enable_zoom": BOOL,
    }


def _family_only_fields(tool: ToolVersion) -> dict[str, Schema]:
    """Fields another version of the same family has and this one lacks: refused in both modes
    (e.g. ``max_characters`` exists only on ``text_editor_20250728``)."""
    out: dict[str, Schema] = {}
    for other in registry.of_family(tool.family):
        for f in other.definition_fields:
            if f not in tool.definition_fields and f not in out:
                having = [t.type for t in registry.of_family(tool.family) if f in t.definition_fields]
                out[f] = {"not": {}, RULE: "tools.definition_fields",
                          MESSAGE: f"{f!r} is not a field of {tool.type}; only {', '.join(having)} "
                                   f"take it ({tool.source.cite()})"}
    return out


def builtin_definition(ctx: Ctx, tool: ToolVersion) -> Schema:
    fields = definition_field_schemas(ctx)
    props: dict[str, Schema] = {
        "type": const(tool.type),
        "name": {"const": tool.name, RULE: "tools.fixed_type_name",
                 MESSAGE: f"a {tool.type} tool must be named {tool.name!r} ({tool.source.cite()})"},
    }
    props.update({f: fields[f] for f in tool.definition_fields})
    s = obj(ctx, props, ["type", "name"], comment=f"{tool.type}: {tool.side} tool ({tool.source.cite()})")
    s["properties"].update(_family_only_fields(tool))
    return s


def custom_definition(ctx: Ctx) -> Schema:
    tool = registry.TOOLS["custom"]
    fields = definition_field_schemas(ctx)
    props: dict[str, Schema] = {"type": const("custom"), "name": {"type": "string", "minLength": 1}}
    props.update({f: fields[f] for f in tool.definition_fields})
    return obj(ctx, props, ["name", "input_schema"], comment=f"custom tool ({tool.source.cite()})")


def input_schema_schema() -> Schema:
    """A tool's ``input_schema``: any JSON Schema whose top-level ``type`` is ``object``."""
    return {"type": "object", "required": ["type"],
            "properties": {"type": const("object"), "properties": nullable(ANY_OBJ),
                           "required": nullable(str_array())}}


def mcp_toolset(ctx: Ctx) -> Schema:
    cfg = obj(ctx, {"enabled": BOOL, "defer_loading": BOOL})
    return obj(ctx, {"type": const("mcp_toolset"), "mcp_server_name": {"type": "string", "minLength": 1},
                     "default_config": cfg, "configs": nullable({"type": "object",
                                                                 "additionalProperties": cfg}),
                     "tools": nullable({"type": "array", "items": ANY_OBJ}),
                     "cache_control": definition_field_schemas(ctx)["cache_control"]},
               ["type", "mcp_server_name"], comment=f"MCP connector toolset ({_MCP_SOURCE.cite()})")


def messages_tool_types() -> list[ToolVersion]:
    """Registry entries a Messages request may carry (all but the Managed Agents toolset)."""
    return [t for t in registry.TOOLS.values() if t.side != "managed" and t.type != "custom"]


def tool_definition(ctx: Ctx) -> Schema:
    variants = {t.type: ref(f"tool.{t.type}") for t in messages_tool_types()}
    variants["mcp_toolset"] = ref("mcp_toolset")
    typed = by_type(ctx, variants, what="tool type",
                    source=cite(protocol("2. Code execution tool: Definition")))
    return {"type": "object",
            "if": {"required": ["type"], "properties": {"type": {"not": const("custom")}}},
            "then": typed, "else": ref("custom_tool")}


# --- tool inputs ---------------------------------------------------------------------------------

_FIELD_TYPES: dict[str, Schema] = {
    "path": STR, "old_str": STR, "new_str": STR, "file_text": STR, "insert_text": STR,
    "insert_line": NONNEG, "command": STR, "restart": BOOL, "code": STR,
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
}


def _command_input(ctx: Ctx, versions: Iterable[ToolVersion]) -> Schema:
    """The input of a command-based tool (text editor), over every version sharing its name."""
    versions = list(versions)
    commands: dict[str, registry.Command] = {}
    insert_fields: list[str] = []
    for v in versions:
        for c in v.commands:
            commands.setdefault(c.name, c)
        insert_fields += [f for f in v.insert_text_fields if f not in insert_fields]
    types = ", ".join(v.type for v in versions)
    branches = []
    for c in commands.values():
        props = {"command": const(c.name)}
        props.update({f: _FIELD_TYPES.get(f, {}) for f in (*c.required, *c.optional)})
        then = obj(ctx, props, ["command", *c.required])
        if c.name == "insert" and insert_fields:
            for f in insert_fields:
                then["properties"].setdefault(f, _FIELD_TYPES[f])
            then["anyOf"] = [{"required": [f]} for f in insert_fields]
        branches.append({"if": {"properties": {"command": const(c.name)}, "required": ["command"]},
                         "then": then})
    return {"type": "object", "required": ["command"],
            "properties": {"command": {"enum": list(commands), RULE: "tools.commands",
                                       MESSAGE: f"unknown command for {types}; it takes "
                                                f"{', '.join(commands)}"}},
            "allOf": branches}


def _bash_input(ctx: Ctx) -> Schema:
    s = obj(ctx, {"command": STR, "restart": BOOL})
    s["anyOf"] = [{"required": ["command"]}, {"required": ["restart"]}]
    s[MESSAGE] = "a bash input needs 'command' (or 'restart': true)"
    return s


def tool_input(ctx: Ctx, versions: Iterable[ToolVersion]) -> Schema:
    versions = list(versions)
    if versions[0].family == "bash":
        return _bash_input(ctx)
    return _command_input(ctx, versions)


def client_tool_names() -> dict[str, list[ToolVersion]]:
    """Fixed client-tool name -> the versions using it (``tool_use.input`` is checked by name)."""
    out: dict[str, list[ToolVersion]] = {}
    for t in registry.TOOLS.values():
        if t.side == "client" and t.name and t.commands:
            out.setdefault(t.name, []).append(t)
    return out


def server_tool_inputs(ctx: Ctx) -> dict[str, Schema]:
    """``server_tool_use.name`` -> schema of its ``input`` (code execution sub-tools)."""
    editor = obj(ctx, {"command": {"enum": list(CODE_EXECUTION_EDITOR_COMMANDS)}, "path": STR,
                       "file_text": STR, "old_str": STR, "new_str": STR,
                       "view_range": _FIELD_TYPES["view_range"]}, ["command", "path"])
    return {"code_execution": obj(ctx, {"code": STR}, ["code"]),
            "bash_code_execution": obj(ctx, {"command": STR, "restart": BOOL}, ["command"]),
            "text_editor_code_execution": editor}


# --- Managed Agents custom tools (seed 004) ------------------------------------------------------

def _no_ref_anywhere() -> Schema:
    """Any JSON value with no ``$ref`` key at any depth, and valid property names."""
    return {
        "if": {"type": "object"},
        "then": {
            "not": {"required": ["$ref"]},
            RULE: "managed_agents.custom_tool.no_ref", MESSAGE: f"'$ref' is rejected anywhere in "
            f"a Managed Agents input_schema; inline the referenced schema ({_MA_RULES.cite()})",
            "properties": {"properties": {"if": {"type": "object"}, "then": {"propertyNames": {
                "pattern": "^[A-Za-z0-9_.-]{1,64}$", RULE: "managed_agents.custom_tool.property_name",
                MESSAGE: f"property names are 1-64 characters of letters, digits, '_', '.', '-' "
                         f"({_MA_RULES.cite()})"}}}},
            "patternProperties": {"": {"$ref": "#/$defs/ma_schema_value"}},
        },
        "else": {"if": {"type": "array"}, "then": {"items": {"$ref": "#/$defs/ma_schema_value"}}},
    }


def ma_custom_tool(ctx: Ctx) -> Schema:
    reserved = sorted(registry.RESERVED_AGENT_TOOL_NAMES)
    prefixes = registry.RESERVED_AGENT_TOOL_PREFIXES
    name = {
        "type": "string", "pattern": "^[A-Za-z0-9_-]{1,128}$",
        "not": {"anyOf": [{"enum": reserved}, *({"pattern": f"^{p}"} for p in prefixes)]},
        RULE: "managed_agents.custom_tool.name",
        MESSAGE: f"a custom tool name is 1-128 characters of letters, digits, '_' and '-', is not a "
                 f"built-in agent tool ({', '.join(reserved)}) and does not start with "
                 f"{' or '.join(prefixes)} ({_MA_RULES.cite()})",
    }
    schema = {"allOf": [input_schema_schema(), {"$ref": "#/$defs/ma_schema_value"}],
              "not": {"anyOf": [{"required": [k]} for k in ("oneOf", "anyOf", "allOf")]},
              RULE: "managed_agents.custom_tool.input_schema",
              MESSAGE: f"top-level oneOf/anyOf/allOf are rejected in a Managed Agents input_schema "
                       f"({_MA_RULES.cite()})"}
    desc = {"type": "string", "minLength": 1, RULE: "managed_agents.custom_tool.description",
            MESSAGE: f"a custom tool needs a non-empty description ({_MA_RULES.cite()})"}
    return obj(ctx, {"type": const("custom"), "name": name, "description": desc,
                     "input_schema": schema}, ["type", "name", "description", "input_schema"],
               comment=f"Managed Agents custom tool declaration ({_MA_RULES.cite()})")


def ma_agent_toolset(ctx: Ctx) -> Schema:
    t = registry.TOOLS["agent_toolset_20260401"]
    fields = definition_field_schemas(ctx)
    return obj(ctx, {"type": const(t.type), **{f: fields[f] for f in t.definition_fields}},
               ["type"], comment=f"{t.type} ({t.source.cite()})")


def ma_tool(ctx: Ctx) -> Schema:
    return by_type(ctx, {"custom": ref("ma_custom_tool"),
                         "agent_toolset_20260401": ref("ma_agent_toolset"),
                         "mcp_toolset": ref("mcp_toolset")},
                   what="Managed Agents tool type", source=cite(_MA_RULES))


def ma_agent_tools(ctx: Ctx) -> Schema:
    return {"type": "array", "items": ref("ma_tool"), "maxItems": ctx.max_agent_tools,
            RULE: "managed_agents.tools.max_entries",
            MESSAGE: f"an agent's tools array holds at most {ctx.max_agent_tools} entries; each "
                     f"wrapped tool and the built-in toolset count as one ({_MA_RULES.cite()})"}


def build(ctx: Ctx) -> Schema:
    defs: dict[str, Schema] = {
        "tool_definition": tool_definition(ctx),
        "custom_tool": custom_definition(ctx),
        "input_schema": input_schema_schema(),
        "mcp_toolset": mcp_toolset(ctx),
    }
    for t in messages_tool_types():
        defs[f"tool.{t.type}"] = builtin_definition(ctx, t)
    for t in registry.TOOLS.values():
        if t.side == "client" and t.commands:
            defs[f"input.{t.type}"] = tool_input(ctx, [t])
    for n, versions in client_tool_names().items():
        defs[f"input_by_name.{n}"] = tool_input(ctx, versions)
    for n, s in server_tool_inputs(ctx).items():
        defs[f"server_input.{n}"] = s
    defs.update({"ma_custom_tool": ma_custom_tool(ctx), "ma_agent_toolset": ma_agent_toolset(ctx),
                 "ma_tool": ma_tool(ctx), "ma_agent_tools": ma_agent_tools(ctx),
                 "ma_schema_value": _no_ref_anywhere()})
    return document(ctx, NAME, defs, title="Tool definitions and tool inputs")
