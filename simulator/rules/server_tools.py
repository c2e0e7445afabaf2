"""Rules on server-side state: containers, paused turns, server tools waiting for results.

Sources: seed 000 (Penggunaan ulang container; Alasan berhenti ``pause_turn``), PROTOCOL.md §2.
"""

from __future__ import annotations

from typing import Any

from ..matchers import blocks_of
from ..sources import SEED_CODE_EXECUTION, protocol, seed
from ..state import SERVER_TOOL_FAMILY, container_param_id, result_tool_use_ids
from .base import RuleContext, code_callable, rule
from .ptc import CODE_ONLY_BY_DEFAULT

CONTAINER_UNKNOWN = ("container: container `{id}` was not found. Send the request again without "
                     "the `container` parameter to get a new container.")
CONTAINER_EXPIRED = ("container: container `{id}` has expired (containers expire 30 days after "
                     "creation) and cannot be reused. Send the request again without the "
                     "`container` parameter to get a new container.")
PAUSE_TURN = ("messages: the previous response stopped with `pause_turn`; send its content back as "
              "the last `assistant` message (as-is, or modified) so Claude can continue the turn. "
              "Missing: {missing}.")
SAME_TOOLS = ("messages.{index}.content.{block}: `server_tool_use` block with id `{id}` is waiting "
              "for its result but no `{tool}` tool was provided")


@rule("container.unknown_or_expired",
      source=seed(SEED_CODE_EXECUTION, "Penggunaan ulang container", "I"),
      statement="The container param names a live container (expired ones are refused, not "
                "restored).",
      message=CONTAINER_EXPIRED)
def unknown_or_expired(ctx: RuleContext) -> str | None:
    cid = container_param_id(ctx.body)
    if cid is None:
        return None
    c = ctx.state.container(cid)
    if c is None:
        return CONTAINER_UNKNOWN.format(id=cid)
    if c.expired(ctx.state.now()):
        return CONTAINER_EXPIRED.format(id=cid)
    return None


@rule("pause_turn.resend_assistant_content",
      source=protocol("2. Code execution tool: pause_turn", "I"),
      statement="After pause_turn, the paused content is resent as the last assistant message.",
      message=PAUSE_TURN)
def resend_assistant_content(ctx: RuleContext) -> str | None:
    paused = ctx.state.paused_for(ctx.body)
    if paused is None:
        return None
    a = ctx.last_assistant_index()
    ids = {str(b.get("id")) for b in ctx.content(a) if b.get("id")} if a is not None else set()
    missing = sorted(paused.server_tool_use_ids - ids)
    if missing:
        return PAUSE_TURN.format(missing=", ".join(f"`{m}`" for m in missing))
    if not paused.server_tool_use_ids and (a is None or a != len(ctx.messages) - 1):
        return PAUSE_TURN.format(missing="the paused assistant content")
    return None


def _families(ctx: RuleContext) -> set[str]:
    fams: set[str] = set()
    for t in ctx.tools:
        tv = ctx.tool_version(t)
        if tv is not None:
            fams.add(tv.family)
        elif t.get("type") not in (None, "custom") and isinstance(t.get("name"), str):
            fams.add(str(t["name"]))  # a server tool version the registry does not list
        if code_callable(t):
            # Code-callable tools provision code execution (real_traffic pysdk__117/119).
            fams.add("code_execution")
        if t.get("type") in CODE_ONLY_BY_DEFAULT:
            fams.add("code_execution")  # dynamic filtering provisions code execution
    return fams


@rule("server_tool_use.pending.same_tools", source=protocol("2. Code execution tool: pause_turn"),
      statement="A server_tool_use still waiting for its result is sent back with its tool in "
                "`tools`.",
      message=SAME_TOOLS)
def pending_same_tools(ctx: RuleContext) -> str | None:
    a = ctx.last_assistant_index()
    if a is None:
        return None
    later = [b for m in ctx.messages[a:] for b in _blocks(ctx, m)]
    done = result_tool_use_ids(later)
    fams = ctx.from_tools("families", _families)
    for j, b in enumerate(ctx.content(a)):
        if b.get("type") != "server_tool_use" or str(b.get("id")) in done:
            continue
        need = SERVER_TOOL_FAMILY.get(str(b.get("name")))
        if need and need not in fams:
            return SAME_TOOLS.format(index=a, block=j, id=b.get("id"), tool=need)
    return None


def _blocks(ctx: RuleContext, m: dict[str, Any]) -> list[dict[str, Any]]:
    return blocks_of(m.get("content"))
