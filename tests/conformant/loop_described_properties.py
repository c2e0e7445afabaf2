"""Unusual but conformant loop: the reference loop, with a JSON Schema ``description`` added to
every property of every tool's ``input_schema`` (at any depth), as two public agent frameworks
format their tools: ``loop`` writes ``"Property <name>"``, ``loop_blank`` writes ``""``. Like
those frameworks, it declares a custom function tool as its client tool.

``description`` is an annotation keyword: the API answers the same whether it is there or not
(issue 37; simulator/matchers.py's API equivalence), so under the tolerant matcher set these
loops pass every scenario the reference loop passes. Under the exact set their requests do not
match the recording: every check is *not judged* (SKIP, naming the first difference), never a
FAIL of the behaviour it is about.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from conformance.reference.loop import loop as reference_loop

#: Matched with the tolerant set (docs/serve-and-record.md), as the frameworks it mimics run.
MATCHING = "tolerant"
#: A client tool as those frameworks give one: a custom function tool (its properties get the
#: descriptions), so every client-tool scenario runs its ``functions/custom/`` recording.
VARIANTS = {"client_tool": "custom"}


def described(schema: Any, describe: Callable[[str], str]) -> Any:
    """``schema`` with a ``description`` on each property that has none, nested ones too."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {
            name: ({**described(sub, describe), "description": describe(name)}
                   if isinstance(sub, dict) and "description" not in sub
                   else described(sub, describe))
            for name, sub in props.items()}
    if isinstance(out.get("items"), dict):
        out["items"] = described(out["items"], describe)
    return out


def describe_tools(tools: Any, describe: Callable[[str], str]) -> Any:
    """Every tool with an ``input_schema`` (custom tools) rewritten; server tools as they are."""
    if not isinstance(tools, list):
        return tools
    return [{**t, "input_schema": described(copy.deepcopy(t["input_schema"]), describe)}
            if isinstance(t, dict) and isinstance(t.get("input_schema"), dict) else t
            for t in tools]


def _with(describe: Callable[[str], str]) -> Callable[..., Any]:
    def run(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
        params = {**params, "tools": describe_tools(params.get("tools"), describe)} \
            if "tools" in params else params
        return reference_loop(client, params, run_tool)

    run.tooluse_matching = MATCHING  # type: ignore[attr-defined]
    run.tooluse_variants = VARIANTS  # type: ignore[attr-defined]
    return run


loop = _with(lambda name: f"Property {name}")
loop_blank = _with(lambda name: "")
