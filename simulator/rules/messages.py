"""Conversation-shape rules: roles, and how tool_result blocks answer tool_use blocks.

Messages are the API's own (real traffic: ``pysdk__112``, ``vercel__046``, ``vercel__064``,
``pydai__487``; PROTOCOL.md §1 "Content before the results, or missing ids").
"""

from __future__ import annotations

from ..sources import protocol
from ..state import SERVER_TOOL_FAMILY
from .base import RuleContext, rule

_ERRS = "1. Programmatic tool calling: Error texts and conditions"

TOOL_USE_WITHOUT_RESULT = (
    "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
UNEXPECTED_TOOL_RESULT = (
    "messages.{index}.content.{block}: unexpected `tool_use_id` found in `tool_result` blocks: "
    "{ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
DUPLICATE_TOOL_RESULT = (
    "messages.{index}.content.{block}: found more than one `tool_result` block for `tool_use` id "
    "{id}. Each `tool_use` block must have exactly one corresponding `tool_result` block."
)
ROLES_ALTERNATE = ('messages: roles must alternate between "user" and "assistant", but found '
                   'multiple "{role}" roles in a row')


def _server_tool_names(ctx: RuleContext) -> set[str]:
    names = set()
    for t in ctx.tools:
        tv = ctx.tool_version(t)
        server = tv.side == "server" if tv is not None else (
            t.get("type") not in (None, "custom") and t.get("name") in SERVER_TOOL_FAMILY)
        if server and isinstance(t.get("name"), str):
            names.add(str(t["name"]))
    return names


@rule("messages.roles.alternate",
      source=protocol(_ERRS, "?"),
      statement="Messages alternate between the user and assistant roles.",
      message=ROLES_ALTERNATE, level="SHOULD", default=False)
def roles_alternate(ctx: RuleContext) -> str | None:
    # [?] Older API revisions refused consecutive same-role turns with this message; live traffic
    # (real_traffic pysdk__096: two user turns, HTTP 200) shows the API now combines them. Off by
    # default (DEFAULT_RULES); enable it with rules=ALL_RULES to hold a client to strict turns.
    prev = None
    for m in ctx.raw_messages:
        role = m.get("role")
        if role == prev and role in ("user", "assistant"):
            return ROLES_ALTERNATE.format(role=role)
        prev = role
    return None


@rule("messages.tool_result.answers_previous_tool_use",
      source=protocol(_ERRS, "3P"),
      statement="Every tool_result answers a tool_use of the immediately preceding assistant message.",
      message=UNEXPECTED_TOOL_RESULT)
def answers_previous_tool_use(ctx: RuleContext) -> str | None:
    messages = ctx.messages
    for i in range(ctx.pair_start(), len(messages)):
        if messages[i].get("role") != "user":
            continue
        prev_ids = set(ctx.tool_use_ids(i - 1)) if i > 0 and \
            ctx.messages[i - 1].get("role") == "assistant" else set()
        bad: list[str] = []
        first_bad = None
        for j, b in enumerate(ctx.content(i)):
            if b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in prev_ids:
                bad.append(str(b.get("tool_use_id")))
                first_bad = j if first_bad is None else first_bad
        if bad:
            return UNEXPECTED_TOOL_RESULT.format(index=i, block=first_bad, ids=", ".join(bad))
    return None


@rule("messages.tool_use.answered_once_in_next_message",
      source=protocol(_ERRS),
      statement="Every tool_use of an assistant turn is answered, exactly once, in the next user "
                "message.",
      message=TOOL_USE_WITHOUT_RESULT)
def answered_once_in_next_message(ctx: RuleContext) -> str | None:
    messages = ctx.messages
    n = len(messages)
    server: set[str] | None = None
    for i in range(ctx.pair_start(same_tools=True), n):
        if messages[i].get("role") != "assistant" or i == n - 1:
            continue  # a trailing assistant message is a prefill or a resent paused turn
        ids = ctx.tool_use_ids(i)
        if not ids:
            continue
        nxt = ctx.content(i + 1) if messages[i + 1].get("role") == "user" else []
        # A client tool_result cannot answer a `tool_use` that names a server tool (real traffic
        # pydai__486/487: such an id is reported as unanswered) [I].
        if server is None:
            server = ctx.from_tools("server_tool_names", _server_tool_names)
        by_id = {str(b.get("id")): b.get("name") for b in ctx.content(i) if b.get("type") == "tool_use"}
        answered = [str(b.get("tool_use_id")) for b in nxt if b.get("type") == "tool_result"
                    and by_id.get(str(b.get("tool_use_id"))) not in server]
        missing = [t for t in ids if t not in answered]
        if missing:
            return TOOL_USE_WITHOUT_RESULT.format(index=i, ids=", ".join(missing))
        seen: set[str] = set()
        for j, b in enumerate(nxt):
            if b.get("type") != "tool_result":
                continue
            tid = str(b.get("tool_use_id"))
            if tid in seen:
                # [I] the API's text for a duplicate result is not documented.
                return DUPLICATE_TOOL_RESULT.format(index=i + 1, block=j, id=tid)
            seen.add(tid)
    return None


@rule("messages.tool_result.before_other_content",
      source=protocol(_ERRS),
      statement="In the user message answering tool_use blocks, tool_result blocks come before any "
                "other content.",
      message=TOOL_USE_WITHOUT_RESULT)
def before_other_content(ctx: RuleContext) -> str | None:
    messages = ctx.messages
    for i in range(ctx.pair_start(), len(messages) - 1):
        if messages[i].get("role") != "assistant" or not ctx.tool_use_ids(i):
            continue
        if ctx.messages[i + 1].get("role") != "user":
            continue
        late: list[str] = []
        other_seen = False
        for b in ctx.content(i + 1):
            if b.get("type") == "tool_result":
                if other_seen:
                    late.append(str(b.get("tool_use_id")))
            else:
                other_seen = True
        if late:
            return TOOL_USE_WITHOUT_RESULT.format(index=i, ids=", ".join(late))
    return None
