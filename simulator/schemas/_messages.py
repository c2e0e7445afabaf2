"""Schemas of Messages API requests, message params and responses (``Message``)."""

from __future__ import annotations

from .. import registry
from ..sources import SEED_CODE_EXECUTION, SEED_PTC, protocol, seed
from ._core import (
    ANY_OBJ,
    BOOL,
    INT,
    MESSAGE,
    NONNEG,
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

NAME = "messages"
_B = "blocks"
_CONTAINER = protocol("2. Code execution tool: Container object", "S")
_USAGE = seed(SEED_CODE_EXECUTION, "Penggunaan dan harga")


def stop_reason(ctx: Ctx) -> Schema:
    src = (f"{registry.STOP_REASONS_SOURCE.cite()}; pause_turn: {registry.PAUSE_TURN_SOURCE.cite()}; beta: "
           f"{', '.join(registry.BETA_STOP_REASONS)}")
    return enum(ctx, (*registry.STOP_REASONS, *registry.BETA_STOP_REASONS), src,
                what="stop_reason", extra=[None])


def container(ctx: Ctx) -> Schema:
    skill = obj(ctx, {"skill_id": STR, "type": {"enum": ["anthropic", "custom"]}, "version": STR},
                ["skill_id", "type", "version"])
    return obj(ctx, {"id": STR, "expires_at": {"type": "string", "format": "date-time"},
                     "skills": nullable({"type": "array", "items": skill})},
               ["id", "expires_at"], lenient_required=["id"], comment=_CONTAINER.cite())


def container_param(ctx: Ctx) -> Schema:
    skill = obj(ctx, {"skill_id": STR, "type": {"enum": ["anthropic", "custom"]}, "version": STR},
                ["skill_id", "type"])
    return {"$comment": f"a container id, or {{id?, skills?}} ({_CONTAINER.cite()}); "
                        f"{seed(SEED_PTC, 'Reprise').cite()}",
            "anyOf": [STR, {"type": "null"},
                      obj(ctx, {"id": nullable(STR), "skills": nullable({"type": "array",
                                                                          "items": skill})})]}


def server_tool_usage(ctx: Ctx) -> Schema:
    counts = {"web_search_requests": NONNEG, "web_fetch_requests": NONNEG,
              "code_execution_requests": NONNEG}
    s = obj(ctx, counts, comment=(
        "two documented shapes: the SDK's ServerToolUsage {web_search_requests, "
        f"web_fetch_requests}} and the code execution guide's {{code_execution_requests}} ({_USAGE.cite()}; "
        "docs/protocol-notes.md, Known discrepancies); live traffic also sends web_search_requests alone, so "
        "every count is optional"))
    return s


def _usage_props(ctx: Ctx) -> dict[str, Schema]:
    return {
        "input_tokens": nullable(NONNEG), "output_tokens": NONNEG,
        "cache_creation_input_tokens": nullable(NONNEG), "cache_read_input_tokens": nullable(NONNEG),
        "cache_creation": nullable(ANY_OBJ), "server_tool_use": nullable(ref("server_tool_usage")),
        "service_tier": nullable({"enum": ["standard", "priority", "batch"]}),
        "inference_geo": nullable(STR), "output_tokens_details": nullable(ANY_OBJ),
        "speed": nullable({"enum": ["standard", "fast"]}),
        # One entry per model call of the turn (advisor, compaction, fallback): 16 live captures
        # (real_traffic pydai__262, rubyllm__016, vercel__027).
        "iterations": nullable({"type": "array", "items": ref("usage_iteration")}),
    }


def usage_iteration(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": STR, "model": nullable(STR), "input_tokens": NONNEG,
                     "output_tokens": NONNEG, "cache_creation_input_tokens": nullable(NONNEG),
                     "cache_read_input_tokens": nullable(NONNEG),
                     "cache_creation": nullable(ANY_OBJ)},
               ["type", "input_tokens", "output_tokens"], lenient_required=["type"],
               comment="type: message, advisor_message, compaction, fallback_message (live)")


def stop_details(ctx: Ctx) -> Schema:
    """Why a refusal stopped (real_traffic llmanth__037: type, category, explanation,
    recommended_model)."""
    return obj(ctx, {"type": STR, "category": nullable(STR), "explanation": nullable(STR),
                     "recommended_model": nullable(STR)}, ["type"])


def usage(ctx: Ctx) -> Schema:
    return obj(ctx, _usage_props(ctx), ["input_tokens", "output_tokens"], lenient_required=[])


def delta_usage(ctx: Ctx) -> Schema:
    return obj(ctx, _usage_props(ctx), ["output_tokens"], lenient_required=[],
               comment=protocol("6. Streaming (SSE): message_delta", "S").cite())


def response(ctx: Ctx, *, content_min: int | None = None) -> Schema:
    """A ``Message``. Lenient mode needs only ``role`` and ``content`` (the docs abbreviate)."""
    props = {
        "id": STR, "type": const("message"), "role": const("assistant"), "model": STR,
        "content": {"type": "array", "items": ref("response_block", _B)},
        "stop_reason": ref("stop_reason"), "stop_sequence": nullable(STR),
        "stop_details": nullable(ref("stop_details")), "usage": ref("usage"),
        "container": nullable(ref("container")), "diagnostics": nullable(ANY_OBJ),
        "context_management": nullable(ANY_OBJ),
    }
    return obj(ctx, props, ["id", "type", "role", "model", "content", "stop_reason",
                            "stop_sequence", "usage"], lenient_required=["role", "content"])


def message(ctx: Ctx) -> Schema:
    role = enum(ctx, ["user", "assistant"], cite(protocol("1. Programmatic tool calling")),
                what="message role")
    return obj(ctx, {"role": role,
                     "content": {"anyOf": [STR, {"type": "array", "items": ref("block", _B)}]}},
               ["role", "content"])


def tool_choice(ctx: Ctx) -> Schema:
    dp = {"disable_parallel_tool_use": BOOL}
    return by_type(ctx, {
        "auto": obj(ctx, {"type": const("auto"), **dp}, ["type"]),
        "any": obj(ctx, {"type": const("any"), **dp}, ["type"]),
        "none": obj(ctx, {"type": const("none")}, ["type"]),
        "tool": obj(ctx, {"type": const("tool"), "name": STR, **dp}, ["type", "name"]),
    }, what="tool_choice type", source=cite(protocol("1. Programmatic tool calling")))


def request(ctx: Ctx, *, count_tokens: bool = False) -> Schema:
    """A Messages create body (or, with ``count_tokens``, a count_tokens body: no max_tokens).
    Both modes require what the API and the SDK require."""
    system_block = {"anyOf": [STR, {"type": "array", "items": ref("text", _B)}]}
    thinking = obj(ctx, {"type": {"enum": ["enabled", "disabled", "adaptive"]},
                         "budget_tokens": INT, "display": STR}, ["type"])
    props: dict[str, Schema] = {
        "model": {"type": "string", "minLength": 1},
        "max_tokens": {"type": "integer", "minimum": 1},
        "messages": {"type": "array", "items": ref("message")},
        "system": system_block,
        "tools": {"type": "array", "items": ref("tool_definition", "tools")},
        "tool_choice": ref("tool_choice"),
        "container": ref("container_param"),
        "stream": BOOL,
        "metadata": obj(ctx, {"user_id": nullable(STR)}),
        "stop_sequences": str_array(),
        "temperature": {"type": "number"}, "top_p": {"type": "number"}, "top_k": INT,
        "thinking": thinking,
        "service_tier": {"enum": ["auto", "standard_only"]},
        "mcp_servers": {"type": "array", "items": ANY_OBJ},
        "betas": str_array(),
        # Structured outputs (beta structured-outputs-2025-11-13; since then also
        # output_config.format): 15 live 2xx requests carry it in issue 25's held-out captures,
        # real_traffic pydai__233 too [S: BetaJSONOutputFormatParam].
        "output_format": nullable(obj(ctx, {"type": const("json_schema"), "schema": ANY_OBJ},
                                      ["type", "schema"])),
        **{k: {} for k in ("cache_control", "context_management", "output_config", "diagnostics",
                           "inference_geo", "speed", "compaction", "fallbacks", "thread",
                           "user_profile_id", "workspace_id", "billing_policy",
                           "fallback_credit_token")},
    }
    if count_tokens:
        return obj(ctx, props, ["model", "messages"],
                   comment="count_tokens body: a create body without max_tokens")
    return obj(ctx, props, ["model", "max_tokens", "messages"],
               comment="Messages create body (SDK MessageCreateParams 2.10, plus the sampling "
                       "parameters of older models)")


def request_headers(ctx: Ctx) -> Schema:
    """The request headers that matter (names lower-cased, as ``SimRequest`` keeps them).

    Other headers (``x-stainless-*``, ``user-agent``...) are allowed in both modes."""
    beta = {"type": "string", "pattern": r"^\s*[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*\s*$",
            MESSAGE: "anthropic-beta is a comma-separated list of beta names",
            "$comment": "comma-separated beta names, e.g. code-execution-2025-05-22 for "
                        f"code_execution_20250522 ({protocol('5. Error responses: Bad beta name').cite()})"}
    s: Schema = {"type": "object", "properties": {
        "anthropic-version": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
                              MESSAGE: "anthropic-version is a date such as 2023-06-01"},
        "anthropic-beta": beta, "content-type": STR, "accept": STR}}
    if ctx.strict:
        s["required"] = ["anthropic-version"]
    return s


def build(ctx: Ctx) -> Schema:
    return document(ctx, NAME, {
        "request": request(ctx), "count_tokens_request": request(ctx, count_tokens=True),
        "message": message(ctx), "response": response(ctx),
        "tool_choice": tool_choice(ctx), "container": container(ctx),
        "container_param": container_param(ctx), "usage": usage(ctx),
        "delta_usage": delta_usage(ctx), "server_tool_usage": server_tool_usage(ctx),
        "usage_iteration": usage_iteration(ctx), "stop_details": stop_details(ctx),
        "stop_reason": stop_reason(ctx), "request_headers": request_headers(ctx),
    }, title="Messages requests and responses")
