"""Request-parameter rules the live API enforces: the model id, ``container``, effort levels,
thinking budgets, file sources and the context window.

Each message is the API's own, copied from a capture of live traffic (``../shared/real_traffic``;
the rule's source names the capture), except where the rule says it is inferred.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..count_tokens import cites_documents, estimate_tokens, message_chars
from ..models import is_model_id, lookup
from ..sources import capture, protocol
from .base import RuleContext, rule

MODEL_NOT_FOUND = "model: {model}"
CONTAINER_STRING = "container: Input should be a valid string"
EFFORT_LEVEL = "This model does not support effort level '{level}'. Supported levels: {levels}."
THINKING_BUDGET = ("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                   "documentation at https://docs.claude.com/en/docs/build-with-claude/"
                   "extended-thinking#max-tokens-and-context-window-size")
FILE_SOURCE = ("{path}.{block}.source: Input tag 'file' found using 'type' does not match any of "
               "the expected tags: {tags}")
PROMPT_TOO_LONG = "prompt is too long: {tokens} tokens > {limit} maximum"

#: Beta headers that change what these rules accept.
FILES_BETA = "files-api-2025-04-14"
SKILLS_BETA = "skills-2025-10-02"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
CONTEXT_1M_BETA = "context-1m-2025-08-07"
#: Source tags the API lists when ``file`` is not allowed (real_traffic pydai__531/533).
SOURCE_TAGS = {"document": "'base64', 'content', 'text', 'url'", "image": "'base64', 'url'"}


@rule("model.known", source=capture("pydai__056", "pydai__326"),
      statement="The model is one the API serves: any other name (a misspelled family, a made-up "
                "or another vendor's model) is answered 404. Models beyond the simulator's table "
                "are added with $TOOLUSE_MODELS, Simulator(models=...) or tooluse serve --model.",
      message=MODEL_NOT_FOUND, status=404, error_type="not_found_error")
def model_known(ctx: RuleContext) -> str | None:
    # Any spelling is judged (issue 25: `this-model-does-not-exist-12345` is a live 404): the
    # API serves the models of its list, whatever the name looks like. A missing or non-string
    # model is left to request.schema ("model: Field required").
    model = ctx.body.get("model")
    if isinstance(model, str) and not is_model_id(model, ctx.state.extra_models):
        return MODEL_NOT_FOUND.format(model=model)
    return None


@rule("model.not_retired", source=protocol("3. Text editor tool", "I"),
      statement="The model is not retired: from its retirement day the API answers a request for "
                "it as for an unknown model (404 `model: <id>`; issue 25: claude-3-5-sonnet-latest "
                "answered 404 on 2025-11-05). The day is the simulator's clock's.",
      message=MODEL_NOT_FOUND, status=404, error_type="not_found_error")
def model_not_retired(ctx: RuleContext) -> str | None:
    model = ctx.body.get("model")
    m = lookup(model) if isinstance(model, str) else None
    if m is not None and m.retired(ctx.state.now().date()):
        return MODEL_NOT_FOUND.format(model=model)
    return None


@rule("container.param_is_string", source=capture("pydai__324"),
      statement="`container` is a container id; the object form ({id, skills}) needs the skills "
                "beta.",
      message=CONTAINER_STRING)
def container_is_string(ctx: RuleContext) -> str | None:
    # The SDK's beta namespace types `container` as `BetaContainerParams | str` (skills); live
    # traffic refuses the object without that beta (pydai__324) [I: the beta condition].
    c = ctx.body.get("container")
    if c is None or isinstance(c, str) or SKILLS_BETA in ctx.betas:
        return None
    return CONTAINER_STRING


@rule("effort.supported_level", source=capture("pydai__369"),
      statement="`output_config.effort` is a level the model supports (build-with-claude/effort "
                "lists them per model).",
      message=EFFORT_LEVEL)
def effort_level(ctx: RuleContext) -> str | None:
    oc = ctx.body.get("output_config")
    level = oc.get("effort") if isinstance(oc, dict) else None
    m = lookup(ctx.model)
    # Models without effort, and models this table does not know, are not judged: the API's
    # message for them is not captured [?].
    if not isinstance(level, str) or m is None or not m.effort or level in m.effort:
        return None
    return EFFORT_LEVEL.format(level=level, levels=", ".join(sorted(m.effort)))


@rule("thinking.budget_below_max_tokens", source=capture("pydai__506"),
      statement="With thinking enabled, `max_tokens` is greater than `thinking.budget_tokens` "
                "(unless interleaved thinking lets the budget span the whole turn).",
      message=THINKING_BUDGET)
def thinking_budget(ctx: RuleContext) -> str | None:
    th = ctx.body.get("thinking")
    if not isinstance(th, dict) or th.get("type") != "enabled":
        return None
    budget, max_tokens = th.get("budget_tokens"), ctx.body.get("max_tokens")
    if not isinstance(budget, int) or not isinstance(max_tokens, int) or isinstance(budget, bool):
        return None
    # Interleaved thinking: the budget may exceed max_tokens (extended-thinking docs) [D].
    if INTERLEAVED_THINKING_BETA in ctx.betas:
        return None
    return THINKING_BUDGET if max_tokens <= budget else None


def _sources(ctx: RuleContext) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, block type, source) of every image/document block, nested tool_result content
    included, with the API's path (``messages.2.content.0.tool_result.content.0``)."""
    for i, m in enumerate(ctx.messages):
        for j, b in enumerate(m["content"]):
            kind = b.get("type")
            if kind in SOURCE_TAGS and isinstance(b.get("source"), dict):
                yield f"messages.{i}.content.{j}", str(kind), b["source"]
            elif kind == "tool_result" and isinstance(b.get("content"), list):
                for k, inner in enumerate(b["content"]):
                    if isinstance(inner, dict) and inner.get("type") in SOURCE_TAGS \
                            and isinstance(inner.get("source"), dict):
                        yield (f"messages.{i}.content.{j}.tool_result.content.{k}",
                               str(inner["type"]), inner["source"])


_SCAN = "rules.request.scan"


def _has_file_source(message: Any) -> bool:
    """A file source anywhere in the message (a pure function of it)."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return False
    for b in content:
        if not isinstance(b, dict):
            continue
        inner = b.get("content") if b.get("type") == "tool_result" else None
        for x in (b, *(inner if isinstance(inner, list) else ())):
            src = x.get("source") if isinstance(x, dict) else None
            if isinstance(src, dict) and src.get("type") == "file":
                return True
    return False


def _scan(ctx: RuleContext) -> tuple[int | None, bool, bool | None]:
    """(characters of ``messages`` for the token estimate, whether some message has a file
    source, whether some message cites documents), each message's triple kept with its cached
    facts (:mod:`simulator.history`) so a resent history is not walked again; computed once per
    request. Without history: (None, the answer from a walk, None)."""
    memo = ctx.__dict__.get("_request_scan")
    if memo is not None:
        return memo
    h = ctx.history
    out: tuple[int | None, bool, bool | None]
    if h is None or len(h.facts) != len(h.messages):
        out = (None, any(_has_file_source(m) for m in ctx.raw_messages), None)
    else:
        total, found, cites = 0, False, False
        for m, f in zip(h.messages, h.facts, strict=True):
            d = f.derived
            if d is None:
                d = f.derived = {}
            triple = d.get(_SCAN)
            if triple is None:
                triple = d[_SCAN] = (message_chars(m), _has_file_source(m), cites_documents(m))
            total += triple[0]
            found = found or triple[1]
            cites = cites or triple[2]
        out = (total, found, cites)
    ctx.__dict__["_request_scan"] = out
    return out


@rule("content.file_source_needs_files_beta",
      source=capture("pydai__531", "pydai__533", "pydai__535", "pydai__537"),
      statement="An image or document with `source.type: \"file\"` needs the Files API beta "
                f"({FILES_BETA}).",
      message=FILE_SOURCE)
def file_source(ctx: RuleContext) -> str | None:
    if FILES_BETA in ctx.betas or not _scan(ctx)[1]:
        return None
    for path, kind, src in _sources(ctx):
        if src.get("type") == "file":
            return FILE_SOURCE.format(path=path, block=kind, tags=SOURCE_TAGS[kind])
    return None


@rule("request.prompt_within_context_window", source=capture("rubyllm__058"),
      statement="The prompt fits the model's context window (the count is the simulator's "
                "estimate: simulator.count_tokens, about 4 characters a token).",
      message=PROMPT_TOO_LONG)
def prompt_within_window(ctx: RuleContext) -> str | None:
    m = lookup(ctx.model)
    if m is None:
        return None
    limit = m.context_window
    if CONTEXT_1M_BETA in ctx.betas:
        limit = max(limit, 1_000_000)
    scan = _scan(ctx)
    tokens = estimate_tokens(ctx.body, messages_chars=scan[0], citations=scan[2])
    return PROMPT_TOO_LONG.format(tokens=tokens, limit=limit) if tokens > limit else None
