"""Static checks of tool declarations: Managed Agents custom tools and Messages ``tools`` lists.

One :class:`Finding` per violation, each with a stable rule id, a level, a source and a message
that names the offender and the fix. ``tooluse lint-tools`` prints them; the Managed Agents
simulator refuses ``POST /v1/agents`` on the first one.

Custom tool rules are seed 004 § "Deklarasi harus sesuai dengan Managed Agents API" (the agent's
``tools`` holds at most 256 entries and ``mcp__``/``ant__`` are reserved: the seed is the contract,
PROTOCOL.md "Known discrepancies"; the limit is a parameter). Messages rules are the programmatic
tool calling constraints of seed 002 / PROTOCOL.md §1, under the simulator's rule ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .registry import (
    RESERVED_AGENT_TOOL_NAMES,
    RESERVED_AGENT_TOOL_PREFIXES,
    fixed_names,
)
from .sources import SEED_MANAGED_AGENTS, SEED_PTC, Source, protocol, seed

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
PROPERTY_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DEFAULT_MAX_TOOLS = 256
CODE_CALLERS = ("code_execution_20250825", "code_execution_20260120", "code_execution_20260521")

_MA = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")
_MA_LIMIT = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API (tools)")
_PTC = seed(SEED_PTC, "Batasan / allowed_callers")


@dataclass(frozen=True)
class DeclarationRule:
    id: str
    level: str
    source: Source
    statement: str


DECLARATION_RULES: dict[str, DeclarationRule] = {}


def _rule(id: str, source: Source, statement: str, level: str = "MUST") -> str:
    if id in DECLARATION_RULES:
        raise ValueError(f"declaration rule {id!r} registered twice")
    DECLARATION_RULES[id] = DeclarationRule(id, level, source, statement)
    return id


CUSTOM_NAME = _rule("custom_tool.name.pattern", _MA,
                    "`name` is 1-128 letters, digits, underscores and hyphens")
CUSTOM_UNIQUE = _rule("custom_tool.name.unique", _MA, "`name` is unique per agent")
CUSTOM_RESERVED = _rule("custom_tool.name.not_builtin", _MA,
                        "`name` is not the name of a built-in agent tool such as `bash` or `read`")
CUSTOM_PREFIX = _rule("custom_tool.name.reserved_prefix", _MA,
                      "`name` does not start with a reserved prefix (`mcp__`, `ant__`)")
CUSTOM_DESCRIPTION = _rule("custom_tool.description.required", _MA,
                           "`description` is present and not empty")
CUSTOM_SCHEMA = _rule("custom_tool.input_schema.object", _MA,
                      "`input_schema` is a JSON Schema object")
CUSTOM_REF = _rule("custom_tool.input_schema.no_ref", _MA, "`$ref` appears nowhere in the schema")
CUSTOM_COMBINATOR = _rule("custom_tool.input_schema.no_top_level_combinator", _MA,
                          "no `oneOf`, `anyOf` or `allOf` at the schema's top level")
CUSTOM_PROPERTY = _rule("custom_tool.input_schema.property_name", _MA,
                        "property names are 1-64 letters, digits, underscores, dots and hyphens")
AGENT_MAX_TOOLS = _rule("agent.tools.max_entries", _MA_LIMIT,
                        "the agent's `tools` holds at most 256 entries (a setting)")
PTC_STRICT = _rule("ptc.strict_unsupported", _PTC,
                   "`strict: true` is not supported on a tool callable from code")
PTC_RECURSIVE_REF = _rule("ptc.recursive_ref", _PTC,
                          "a tool callable from code has no self-referencing `$ref`")
PTC_MCP = _rule("ptc.mcp_not_code_callable", protocol("1. Programmatic tool calling"),
                "MCP connector tools cannot be called from code")
PTC_PARALLEL = _rule("ptc.disable_parallel_tool_use_unsupported", _PTC,
                     "`disable_parallel_tool_use` is not supported with programmatic calling")
CHOICE_DIRECT = _rule("tool_choice.requires_direct_caller", _PTC,
                      "`tool_choice` cannot force a tool whose `allowed_callers` lacks `direct`")
FIXED_NAME = _rule("tools.fixed_type_name", protocol("2. Code execution tool: Definition"),
                   "a built-in tool `type` carries its fixed `name`")


@dataclass(frozen=True)
class Finding:
    rule: str
    #: JSON pointer of the offending value in the linted document.
    pointer: str
    message: str

    @property
    def level(self) -> str:
        return DECLARATION_RULES[self.rule].level

    @property
    def source(self) -> Source:
        return DECLARATION_RULES[self.rule].source

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": self.level, "pointer": self.pointer,
                "message": self.message, "source": self.source.to_json()}


def _walk(node: Any, ptr: str) -> Iterator[tuple[str, Any]]:
    yield ptr, node
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from _walk(v, f"{ptr}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{ptr}/{i}")


def check_custom_tool(tool: Mapping[str, Any], ptr: str = "") -> list[Finding]:
    """The declaration rules for one ``{"type": "custom", ...}`` entry of an agent."""
    out: list[Finding] = []
    name = tool.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        out.append(Finding(CUSTOM_NAME, f"{ptr}/name", f"custom tool name {name!r} must be 1-128 "
                           "characters of letters, digits, `_` and `-`; rename it"))
    elif name in RESERVED_AGENT_TOOL_NAMES:
        out.append(Finding(CUSTOM_RESERVED, f"{ptr}/name", f"custom tool name {name!r} is the "
                           "name of a built-in agent tool; give it a name of its own "
                           f"(e.g. {'my_' + name!r})"))
    if isinstance(name, str):
        for prefix in RESERVED_AGENT_TOOL_PREFIXES:
            if name.startswith(prefix):
                out.append(Finding(CUSTOM_PREFIX, f"{ptr}/name", f"custom tool name {name!r} "
                                   f"uses the reserved prefix {prefix!r}; drop or change it"))
    desc = tool.get("description")
    if not isinstance(desc, str) or not desc.strip():
        out.append(Finding(CUSTOM_DESCRIPTION, f"{ptr}/description", f"custom tool {name!r} "
                           "needs a non-empty `description`"))
    schema = tool.get("input_schema")
    if not isinstance(schema, Mapping):
        out.append(Finding(CUSTOM_SCHEMA, f"{ptr}/input_schema", f"custom tool {name!r} needs "
                           "`input_schema`, a JSON Schema object"))
        return out
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            out.append(Finding(CUSTOM_COMBINATOR, f"{ptr}/input_schema/{key}", f"custom tool "
                               f"{name!r} has `{key}` at the top of its input_schema; describe "
                               "one object with optional properties instead"))
    for p, node in _walk(schema, f"{ptr}/input_schema"):
        if isinstance(node, Mapping):
            if "$ref" in node:
                out.append(Finding(CUSTOM_REF, f"{p}/$ref", f"custom tool {name!r} uses `$ref` "
                                   f"({node['$ref']!r}); inline the referenced schema"))
            props = node.get("properties")
            if isinstance(props, Mapping) and not p.endswith("/properties"):
                for prop in props:
                    if not PROPERTY_RE.match(str(prop)):
                        out.append(Finding(CUSTOM_PROPERTY, f"{p}/properties/{prop}",
                                           f"custom tool {name!r}: property name {prop!r} must be "
                                           "1-64 letters, digits, `_`, `.` or `-`; rename it"))
    return out


def check_agent_tools(tools: Sequence[Any], *, max_tools: int = DEFAULT_MAX_TOOLS,
                      ptr: str = "/tools") -> list[Finding]:
    """All declaration rules for an agent's ``tools`` array (custom entries and the count)."""
    out: list[Finding] = []
    if len(tools) > max_tools:
        out.append(Finding(AGENT_MAX_TOOLS, ptr, f"the agent declares {len(tools)} tools; at most "
                           f"{max_tools} entries are allowed (each wrapped tool is one entry, the "
                           "built-in toolset another)"))
    seen: dict[str, int] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or tool.get("type") != "custom":
            continue
        out.extend(check_custom_tool(tool, f"{ptr}/{i}"))
        name = tool.get("name")
        if isinstance(name, str):
            if name in seen:
                out.append(Finding(CUSTOM_UNIQUE, f"{ptr}/{i}/name", f"custom tool name {name!r} "
                                   f"is declared twice (also at {ptr}/{seen[name]}); names are "
                                   "unique per agent"))
            seen.setdefault(name, i)
    return out


def _code_callable(tool: Mapping[str, Any]) -> bool:
    callers = tool.get("allowed_callers")
    return isinstance(callers, list) and any(c in CODE_CALLERS for c in callers)


def _recursive_ref(schema: Any) -> str | None:
    """The first ``$ref`` that points at itself or an ancestor (a cycle), or None."""
    if not isinstance(schema, Mapping):
        return None
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        for k, v in (schema.get(key) or {}).items():
            defs[f"#/{key}/{k}"] = v

    def refs(node: Any) -> Iterator[str]:
        for _, n in _walk(node, ""):
            if isinstance(n, Mapping) and isinstance(n.get("$ref"), str):
                yield n["$ref"]

    if any(r == "#" for r in refs(schema)):
        return "#"
    graph = {d: set(refs(body)) for d, body in defs.items()}
    for start in graph:
        stack, seen = list(graph[start]), set()
        while stack:
            r = stack.pop()
            if r == start:
                return start
            if r in seen:
                continue
            seen.add(r)
            stack.extend(graph.get(r, ()))
    return None


def check_messages_tools(tools: Sequence[Any], tool_choice: Any = None, *,
                         ptr: str = "/tools") -> list[Finding]:
    """Programmatic-calling constraints and fixed names for a Messages ``tools`` list."""
    out: list[Finding] = []
    fixed = fixed_names()
    by_name: dict[str, Mapping[str, Any]] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        p = f"{ptr}/{i}"
        ttype, name = tool.get("type"), tool.get("name")
        if isinstance(name, str):
            by_name[name] = tool
        if isinstance(ttype, str) and ttype in fixed and name != fixed[ttype]:
            out.append(Finding(FIXED_NAME, f"{p}/name", f"a `{ttype}` tool must be named "
                               f"{fixed[ttype]!r}, not {name!r}"))
        if not _code_callable(tool):
            continue
        if tool.get("strict") is True:
            out.append(Finding(PTC_STRICT, f"{p}/strict", f"tool {name!r} is callable from code "
                               "(allowed_callers) and sets `strict: true`, which programmatic "
                               "calling does not support; drop `strict` or the code caller"))
        if isinstance(ttype, str) and ttype.startswith("mcp"):
            out.append(Finding(PTC_MCP, f"{p}/allowed_callers", f"MCP tool {name!r} cannot be "
                               "called from code; allow only `direct`"))
        cycle = _recursive_ref(tool.get("input_schema"))
        if cycle:
            out.append(Finding(PTC_RECURSIVE_REF, f"{p}/input_schema", f"tool {name!r} is "
                               f"callable from code but its input_schema refers to itself "
                               f"({cycle}); the API answers `Circular $ref detected`. Unroll the "
                               "recursion or allow only `direct`"))
    if isinstance(tool_choice, Mapping):
        forced = tool_choice.get("name") if tool_choice.get("type") == "tool" else None
        target = by_name.get(forced) if isinstance(forced, str) else None
        callers = target.get("allowed_callers") if target is not None else None
        if isinstance(callers, list) and "direct" not in callers:
            out.append(Finding(CHOICE_DIRECT, "/tool_choice/name", f"tool_choice forces "
                               f"{forced!r}, whose allowed_callers {callers} lack `direct`; the "
                               "model cannot call it directly"))
        if tool_choice.get("disable_parallel_tool_use") is True and any(
                isinstance(t, Mapping) and _code_callable(t) for t in tools):
            out.append(Finding(PTC_PARALLEL, "/tool_choice/disable_parallel_tool_use",
                               "`disable_parallel_tool_use` is not supported with programmatic "
                               "tool calling; remove it"))
    return out
