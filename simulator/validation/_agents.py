"""What JSON Schema cannot say about a Managed Agents agent: custom tool names are unique."""

from __future__ import annotations

from typing import Any

from ..sources import SEED_MANAGED_AGENTS, seed
from ._violation import Severity, Violation

RULE = "managed_agents.custom_tool.name_unique"
_SRC = seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")


def unique_tool_names(agent: Any, severity: Severity = "error") -> list[Violation]:
    tools = agent.get("tools") if isinstance(agent, dict) else None
    if not isinstance(tools, list):
        return []
    out: list[Violation] = []
    first: dict[str, int] = {}
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) and tool.get("type") == "custom" else None
        if not isinstance(name, str):
            continue
        if name in first:
            out.append(Violation(f"/tools/{i}/name", f"custom tool name {name!r} is already used "
                                 f"by /tools/{first[name]}; names are unique per agent ({_SRC})",
                                 RULE, severity))
        else:
            first[name] = i
    return out
