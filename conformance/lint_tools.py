"""``tooluse lint-tools``: tool declarations checked against the documented rules, statically.

A file holds one of:

- a Managed Agents agent (``{"name", "model", "tools": [...]}``) or its ``tools`` list: the custom
  tool declaration rules (seed 004) apply;
- a Messages request (``{"model", "messages", "tools", "tool_choice"}``) or its ``tools`` list:
  the programmatic-calling constraints and fixed type/name pairs (the simulator's rules) apply.

``kind="auto"`` tells them apart: a document with ``messages``, a tool with ``allowed_callers``, or a
built-in Messages tool type is Messages; ``agent_toolset_*`` entries, or a list of ``custom`` tools,
make an agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from conformance.errors import ToolUseError
from simulator.declarations import (
    DEFAULT_MAX_TOOLS,
    Finding,
    check_agent_tools,
    check_messages_tools,
)

Kind = Literal["auto", "agent", "messages"]


class LintInputError(ToolUseError, ValueError):
    """The file cannot be linted (missing, not JSON, no tools): a usage error."""


@dataclass
class LintReport:
    path: str
    kind: str
    tools: int
    findings: list[Finding]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "tools": self.tools,
                "findings": [f.to_json() for f in self.findings]}


def load(path: str | Path) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LintInputError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LintInputError(f"{p}: cannot read it ({e})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LintInputError(f"{p}: broken JSON at line {e.lineno} column {e.colno}: {e.msg}; "
                             "give a JSON tools list, agent or Messages request") from None


def detect_kind(doc: Any) -> str:
    tools = doc.get("tools") if isinstance(doc, Mapping) else doc
    if isinstance(doc, Mapping) and ("messages" in doc or "max_tokens" in doc):
        return "messages"
    entries = [t for t in tools or [] if isinstance(t, Mapping)]
    if any("allowed_callers" in t for t in entries):
        return "messages"
    types = {str(t.get("type")) for t in entries if t.get("type")}
    if any(t.startswith("agent_toolset") for t in types):
        return "agent"
    if types - {"custom", "mcp_toolset"}:
        return "messages"
    return "agent" if entries and all(t.get("type") == "custom" for t in entries) else "messages"


def lint_document(doc: Any, *, kind: Kind = "auto", max_tools: int = DEFAULT_MAX_TOOLS,
                  path: str = "<memory>") -> LintReport:
    if isinstance(doc, list):
        tools, ptr, tool_choice = doc, "", None
    elif isinstance(doc, Mapping) and isinstance(doc.get("tools"), list):
        tools, ptr, tool_choice = doc["tools"], "/tools", doc.get("tool_choice")
    else:
        raise LintInputError(f"{path}: expected a JSON list of tools or an object with a `tools` "
                             "list (an agent or a Messages request)")
    chosen = detect_kind(doc) if kind == "auto" else kind
    if chosen == "agent":
        findings = check_agent_tools(tools, max_tools=max_tools, ptr=ptr)
    else:
        findings = check_messages_tools(tools, tool_choice, ptr=ptr)
    return LintReport(path, chosen, len(tools), findings)


def lint_file(path: str | Path, *, kind: Kind = "auto",
              max_tools: int = DEFAULT_MAX_TOOLS) -> LintReport:
    return lint_document(load(path), kind=kind, max_tools=max_tools, path=str(path))
