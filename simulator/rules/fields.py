"""Closed sets and ranges the API enforces on every request, whatever the validation mode: the
message roles, the ``tool_choice`` types, content block types, the sampling ranges and the
request's top-level fields.

The lenient schemas (``request.schema``) tolerate unknown values as the SDK does; the live API
does not, and answers each with 400 ``invalid_request_error`` in its own words. Each rule quotes
the live body that shows its wording (public reports of live answers; ``[I]`` where a part is
inferred). A value the live captures show accepted (``../shared/real_traffic``) is in the known
set: none of these rules refuses a live 2xx request (``tooluse fidelity``).

=============================  =========================================================  ========
rule                           the API's message                                          evidence
=============================  =========================================================  ========
``tool_choice.type_known``     ``tool_choice: Input tag 'sometimes' found using 'type'    [1] [I]
                               does not match any of the expected tags: 'auto', 'any',
                               'tool', 'none'``
``messages.roles.known``       ``messages: Unexpected role "bot". Allowed roles are       [2]
                               "user" or "assistant"``
``content.block_type_known``   ``messages.0.content.2: Input tag 'image_url' found using  [3]
                               'type' does not match any of the expected tags: ...``
``sampling.temperature_range`` ``temperature: range: 0..1``                               [4] [I]
``sampling.top_p_range``       ``top_p: range: 0..1``                                     [5] [I]
``request.known_fields``       ``response_format: Extra inputs are not permitted``        [6]
=============================  =========================================================  ========

[1] The tag-union family of the API's validator, live for tool definitions
    (dirac-run/dirac#57: ``tools.0: Input tag 'function' found using 'type' does not match any of
    the expected tags: 'bash_20250124', ...``) and content blocks ([3]); the tags of
    ``tool_choice`` are its four documented types, in the SDK's order [I: the exact text].
[2] langchain-ai/langchain#16563 (2024-01: ``messages: Unexpected role "ai". Allowed roles are
    "user" or "assistant"``); for ``tool`` the API adds a pointer to the tool use docs
    (NyarchLinux/NyarchAssistant#157, 2026-07, ``req_011C…``; mark3labs/mcphost#36, 2025-04).
    ``system`` is served: mid-conversation system messages (SDK ``BetaSystemMessageParam``;
    live 2xx pydai__075, pydai__520 and ten more), so it is not refused here [?: the models and
    positions that refuse it].
[3] AstrBotDevs/AstrBot#4444 (2026-01, ``req_011C…``): the tags listed in alphabetical order;
    the list depends on the route and betas, so the simulator lists every type it knows [I].
[4] anthropics/anthropic-sdk-python#893 (2025-03: ``temperature: range: -1 or 0..1``; the
    maintainers' answer of 2026-08: -1 is now refused "on current models", the range 0.0-1.0 as
    the API reference documents it); odysseus-dev/odysseus#1615 (2026-06: 400 for 1.2). Today's
    text without "-1 or" [I]. -1 itself is left unjudged [?: which models still take it].
[5] anthropics/anthropic-sdk-typescript#484 (2024-08: ``top_p: range: -1 or 0..1``); today's
    text as [4]'s [I]. ``top_k`` has no documented range: not judged.
[6] amrit110/oli#7 (2025-03: ``response_format: Extra inputs are not permitted``); also inside
    objects (anthropics/claude-code#4378, caozhiyuan/copilot-api#145). The known fields are the
    strict request schema's (every field of the SDK's beta ``MessageCreateParams`` and the
    older sampling and structured-output parameters): beta-gated fields are known whatever the
    headers say, since recordings often drop them [?: the live answer without the beta].
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from ..history import shapes
from ..schemas import BLOCK_TYPES
from ..sources import protocol
from .base import RuleContext, rule

_ERRS = "5. Error responses: Status to type"

#: The documented ``tool_choice`` types, in the order the SDK's union (and the API's message)
#: lists them (PROTOCOL.md §1; SDK ``ToolChoiceParam``).
TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")
#: Roles of ``messages`` items the API serves: ``user`` and ``assistant`` [D], ``system``
#: (mid-conversation system messages: SDK ``BetaSystemMessageParam``; live 2xx pydai__075).
ROLES = ("user", "assistant", "system")
#: Content block types a request may carry: the registry's (``simulator.schemas.BLOCK_TYPES``)
#: and the rest of the SDK's ``BetaContentBlockParam`` union (its params, and the response blocks
#: a client sends back as they came: ``fallback``), most of them sent back live (tool search
#: pydai__083, tool availability pydai__075/pydai__520, compaction pydai__314, the advisor
#: pydai__264, the MCP connector pydai__396).
BLOCK_TYPES_SENT = frozenset(BLOCK_TYPES) | {
    "search_result", "tool_search_tool_result", "tool_addition", "tool_removal", "compaction",
    "advisor_tool_result", "mcp_tool_use", "mcp_tool_result", "mcp_tool_listing", "fallback",
}

TOOL_CHOICE_TAG = ("tool_choice: Input tag '{tag}' found using 'type' does not match any of the "
                   "expected tags: {tags}")
UNEXPECTED_ROLE = 'messages: Unexpected role "{role}". Allowed roles are "user" or "assistant"'
#: What the API adds for ``tool`` (NyarchLinux/NyarchAssistant#157).
TOOL_ROLE_HINT = (". For instructions on how to use tools, see "
                  "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.")
BLOCK_TAG = ("{path}: Input tag '{tag}' found using 'type' does not match any of the expected "
             "tags: {tags}")
OUT_OF_RANGE = "{field}: range: 0..1"
EXTRA_FIELD = "{field}: Extra inputs are not permitted"
#: The value older models took as "unset" (``range: -1 or 0..1``): not judged.
UNSET = -1


def _tags(values: Any) -> str:
    return ", ".join(f"'{v}'" for v in values)


@rule("tool_choice.type_known", source=protocol(_ERRS, "I"),
      statement="`tool_choice.type` is one of auto, any, tool, none (dirac-run/dirac#57 shows the "
                "API's wording for an unknown tag).",
      message=TOOL_CHOICE_TAG)
def tool_choice_type_known(ctx: RuleContext) -> str | None:
    tc = ctx.body.get("tool_choice")
    kind = tc.get("type") if isinstance(tc, dict) else None
    if isinstance(kind, str) and kind not in TOOL_CHOICE_TYPES:
        return TOOL_CHOICE_TAG.format(tag=kind, tags=_tags(TOOL_CHOICE_TYPES))
    return None


def _shapes(ctx: RuleContext) -> list[tuple[Any, list[Any]]] | None:
    """Each message's ``(role, [block types])``, kept with its cached facts (None without
    history, or when some message is not an object)."""
    h = ctx.history
    if h is None or len(h.facts) != len(h.messages) or len(ctx.raw_messages) != len(h.messages):
        return None
    return shapes(h)


@rule("messages.roles.known", source=protocol(_ERRS, "3P"),
      statement="Every message's `role` is user or assistant (or system, a mid-conversation "
                "system message); live: langchain-ai/langchain#16563, "
                "NyarchLinux/NyarchAssistant#157.",
      message=UNEXPECTED_ROLE)
def roles_known(ctx: RuleContext) -> str | None:
    s = _shapes(ctx)
    roles = [r for r, _ in s] if s is not None else [m.get("role") for m in ctx.raw_messages]
    for role in roles:
        if isinstance(role, str) and role not in ROLES:
            return UNEXPECTED_ROLE.format(role=role) + (TOOL_ROLE_HINT if role == "tool" else "")
    return None


def _unknown_blocks(body: Any) -> Iterator[tuple[str, str]]:
    """(the API's path, type) of every block of a known-unknown type, in order."""
    msgs = body.get("messages")
    for i, m in enumerate(msgs if isinstance(msgs, list) else ()):
        content = m.get("content") if isinstance(m, dict) else None
        for j, b in enumerate(content if isinstance(content, list) else ()):
            kind = b.get("type") if isinstance(b, dict) else None
            if isinstance(kind, str) and kind not in BLOCK_TYPES_SENT:
                yield f"messages.{i}.content.{j}", kind


@rule("content.block_type_known", source=protocol(_ERRS, "3P"),
      statement="Every content block of `messages` has a type the API knows (the registry's and "
                "the SDK's BetaContentBlockParam union); live: AstrBotDevs/AstrBot#4444.",
      message=BLOCK_TAG)
def block_type_known(ctx: RuleContext) -> str | None:
    s = _shapes(ctx)
    if s is not None and all(not isinstance(t, str) or t in BLOCK_TYPES_SENT
                             for _, types in s for t in types):
        return None
    found = next(_unknown_blocks(ctx.body), None)
    if found is None:
        return None
    return BLOCK_TAG.format(path=found[0], tag=found[1], tags=_tags(sorted(BLOCK_TYPES_SENT)))


def _out_of_range(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or value == UNSET:
        return False
    return not 0 <= value <= 1


@rule("sampling.temperature_range", source=protocol(_ERRS, "I"),
      statement="`temperature` is within 0..1 (anthropics/anthropic-sdk-python#893; the API "
                "reference's range). -1, which older models took, is not judged.",
      message=OUT_OF_RANGE)
def temperature_range(ctx: RuleContext) -> str | None:
    return OUT_OF_RANGE.format(field="temperature") \
        if _out_of_range(ctx.body.get("temperature")) else None


@rule("sampling.top_p_range", source=protocol(_ERRS, "I"),
      statement="`top_p` is within 0..1 (anthropics/anthropic-sdk-typescript#484). -1 is not "
                "judged.",
      message=OUT_OF_RANGE)
def top_p_range(ctx: RuleContext) -> str | None:
    return OUT_OF_RANGE.format(field="top_p") if _out_of_range(ctx.body.get("top_p")) else None


@cache
def request_fields() -> frozenset[str]:
    """The top-level fields of a Messages request: the strict request schema's properties."""
    from ..schemas import build_documents
    return frozenset(build_documents("strict")["messages"]["$defs"]["request"]["properties"])


@rule("request.known_fields", source=protocol(_ERRS, "3P"),
      statement="Every top-level field is one the API knows (the strict request schema's, "
                "beta-gated ones included); live: amrit110/oli#7.",
      message=EXTRA_FIELD)
def known_fields(ctx: RuleContext) -> str | None:
    known = request_fields()
    extra = next((k for k in ctx.body if k not in known), None)
    return EXTRA_FIELD.format(field=extra) if extra is not None else None


__all__ = ["BLOCK_TYPES_SENT", "ROLES", "TOOL_CHOICE_TYPES", "request_fields"]
