"""Static checks of tool declarations: Managed Agents custom tools and Messages ``tools`` lists.

One :class:`Finding` per violation, each with a stable rule id, a level, a source and a message
that names the offender and the fix. ``tooluse lint-tools`` prints them; the Managed Agents
simulator refuses ``POST /v1/agents`` on the first one.

Custom tool rules are seed 004 § "Deklarasi harus sesuai dengan Managed Agents API" (the agent's
``tools`` holds at most 256 entries and ``mcp__``/``ant__`` are reserved: the seed is the contract,
PROTOCOL.md "Known discrepancies"; the limit is a parameter). Messages rules are the simulator's
own request rules (:mod:`simulator.rules`: programmatic-calling constraints, fixed type/name
pairs), applied definition by definition.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .registry import RESERVED_AGENT_TOOL_NAMES, RESERVED_AGENT_TOOL_PREFIXES
from .sources import SEED_MANAGED_AGENTS, Source, seed

#: Matched whole (fullmatch): a ``$`` anchor would let a name ending in a newline through.
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
PROPERTY_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
DEFAULT_MAX_TOOLS = 256

_MA = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")
_MA_LIMIT = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API (tools)")


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
#: Messages ``tools`` rules: the simulator's request rules (:mod:`simulator.rules`), applied to
#: each definition on its own so that every offending tool gets its own finding.
MESSAGES_TOOL_RULES = ("tools.fixed_type_name", "ptc.strict_unsupported", "ptc.recursive_ref",
                       "ptc.mcp_not_code_callable")
MESSAGES_LIST_RULES = ("tool_choice.requires_direct_caller",
                       "ptc.disable_parallel_tool_use_unsupported")


@dataclass(frozen=True)
class Finding:
    rule: str
    #: JSON pointer of the offending value in the linted document.
    pointer: str
    message: str

    @property
    def level(self) -> str:
        return _meta(self.rule)[0]

    @property
    def source(self) -> Source:
        return _meta(self.rule)[1]

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": self.level, "pointer": self.pointer,
                "message": self.message, "source": self.source.to_json()}


def _esc(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _walk(node: Any, ptr: str) -> Iterator[tuple[str, Any]]:
    yield ptr, node
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from _walk(v, f"{ptr}/{_esc(k)}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{ptr}/{i}")


def check_custom_tool(tool: Mapping[str, Any], ptr: str = "") -> list[Finding]:
    """The declaration rules for one ``{"type": "custom", ...}`` entry of an agent."""
    out: list[Finding] = []
    name = tool.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
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
                    if not PROPERTY_RE.fullmatch(str(prop)):
                        out.append(Finding(CUSTOM_PROPERTY, f"{p}/properties/{_esc(prop)}",
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


def _meta(rule_id: str) -> tuple[str, Source]:
    if rule_id in DECLARATION_RULES:
        r = DECLARATION_RULES[rule_id]
        return r.level, r.source
    from .rules import RULES

    m = RULES[rule_id]
    return m.level, m.source


def check_messages_tools(tools: Sequence[Any], tool_choice: Any = None, *,
                         ptr: str = "/tools") -> list[Finding]:
    """The programmatic-calling constraints and fixed type/name pairs for a Messages ``tools``
    list, judged by the simulator's own rules: one finding per offending definition."""
    from .rules import RULES, RuleContext
    from .state import SimState

    out: list[Finding] = []
    state = SimState()
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        ctx = RuleContext({"tools": [dict(tool)]}, {}, state)
        for rid in MESSAGES_TOOL_RULES:
            msg = RULES[rid].check(ctx)
            if msg is not None:
                field = {"tools.fixed_type_name": "/name", "ptc.strict_unsupported": "/strict",
                         "ptc.recursive_ref": "/input_schema"}.get(rid, "")
                out.append(Finding(rid, f"{ptr}/{i}{field}", msg.replace("tools.0.", f"tools.{i}.", 1)))
    if isinstance(tool_choice, Mapping):
        ctx = RuleContext({"tools": [dict(t) for t in tools if isinstance(t, Mapping)],
                           "tool_choice": dict(tool_choice)}, {}, state)
        for rid in MESSAGES_LIST_RULES:
            msg = RULES[rid].check(ctx)
            if msg is not None:
                field = "/name" if rid.startswith("tool_choice") else "/disable_parallel_tool_use"
                out.append(Finding(rid, f"/tool_choice{field}", msg))
    return out
