"""Tool-definition rules read from the registry: type/name pairs, beta headers, models.

Sources: PROTOCOL.md §2-§5, seeds 000 (Versi alat) and 001 (Gunakan model yang kompatibel).
"""

from __future__ import annotations

import re

from ..models import lookup
from ..registry import ToolVersion, of_family
from ..sources import SEED_CODE_EXECUTION, protocol, seed
from .base import RuleContext, rule, tool_label
from .ptc import CODE_ONLY_BY_DEFAULT, effective_callers

FIXED_NAME = "{label}.name: Input should be '{name}'"
LEGACY_BETA = ("{label}: `{type}` requires the beta header `anthropic-beta: {header}`. Add the "
               "header, or use {newer}.")
UNKNOWN_BETA = ("Unexpected value(s) `{values}` for the `anthropic-beta` header. Please consult our "
                "documentation at platform.claude.com/docs or try again without the header.")
MODEL_TOOL = "{label}: `{type}` is not supported on model `{model}`.{hint}"
MODEL_PTC = ("{label}.allowed_callers: programmatic tool calling is not supported on model "
             "`{model}` (code execution runs there as code_execution_20250825); set "
             "`allowed_callers` to [\"direct\"].")
WEB_NEEDS_CE = ("{label}: `{web}` requires code_execution_20260120 or later, but the request has "
                "`{ce}`{behaves}. Use code_execution_20260120 or later, or remove the "
                "code_execution tool.")

#: How a beta name looks (``files-api-2025-04-14``, ``claude-code-20250219``): a name ending in a
#: date. The API's list of betas is not published; anything else is refused [I].
BETA_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*-(\d{4}-\d{2}-\d{2}|\d{8})$")


def _accepts(tv: ToolVersion, model: str) -> bool | None:
    """The registry's answer, plus: a programmatic-calling version on a model without PTC is
    accepted only where the model runs it as an older version (Haiku 4.5); Opus 4.1 supports only
    code_execution_20250825 (PROTOCOL.md §2 Versions)."""
    ok = tv.accepts_model(model)
    m = lookup(model)
    if ok and m is not None and tv.programmatic_calling and not m.ptc and m.id not in tv.behaves_as:
        return False
    return ok


def _newest(family: str, model: str) -> ToolVersion | None:
    ok = [t for t in of_family(family) if not t.legacy and _accepts(t, model)]  # type: ignore[arg-type]
    return max(ok, key=lambda t: t.type) if ok else None


@rule("tools.fixed_type_name", source=protocol("2. Code execution tool: Definition", "I"),
      statement="A built-in tool's type fixes its name.", message=FIXED_NAME)
def fixed_type_name(ctx: RuleContext) -> str | None:
    for i, t in enumerate(ctx.tools):
        tv = ctx.tool_version(t)
        if tv is not None and tv.name and t.get("name") != tv.name:
            return FIXED_NAME.format(label=tool_label(i, t), name=tv.name)
    return None


#: Computer use versions the registry does not list (retired with Sonnet 3.5), and their beta
#: headers (PROTOCOL.md §4); the current ones are registry entries.
COMPUTER_BETAS = {"computer_20241022": "computer-use-2024-10-22"}


@rule("beta.legacy_header_required", source=protocol("4. Bash tool: Versions", "I"),
      statement="Legacy tool versions need their beta header.", message=LEGACY_BETA)
def legacy_header_required(ctx: RuleContext) -> str | None:
    for i, t in enumerate(ctx.tools):
        header = COMPUTER_BETAS.get(str(t.get("type")))
        if header and header not in ctx.betas:
            return LEGACY_BETA.format(label=tool_label(i, t), type=t.get("type"), header=header,
                                      newer="a current version")
        tv = ctx.tool_version(t)
        if tv is None or not tv.beta_header or tv.side == "managed":
            continue
        if tv.beta_header not in ctx.betas:
            newer = _newest(tv.family, ctx.model) if lookup(ctx.model) else None
            newer_txt = f"`{newer.type}`" if newer else "a current version"
            return LEGACY_BETA.format(label=tool_label(i, t), type=tv.type, header=tv.beta_header,
                                      newer=newer_txt)
    return None


@rule("beta.header_known", source=protocol("5. Error responses: Bad beta name"),
      statement="Every anthropic-beta value names a beta (name-YYYY-MM-DD).", message=UNKNOWN_BETA)
def header_known(ctx: RuleContext) -> str | None:
    bad = sorted(b for b in ctx.betas if not BETA_NAME.match(b))
    return UNKNOWN_BETA.format(values=", ".join(bad)) if bad else None


@rule("tools.model_compatibility", source=seed(SEED_CODE_EXECUTION, "Versi alat", "I"),
      statement="The model accepts every tool version in the request (and programmatic calling).",
      message=MODEL_TOOL)
def model_compatibility(ctx: RuleContext) -> str | None:
    m = lookup(ctx.model)
    if m is None:
        return None  # unknown models are never refused on compatibility grounds
    for i, t in enumerate(ctx.tools):
        tv = ctx.tool_version(t)
        if tv is not None and _accepts(tv, ctx.model) is False:
            newer = _newest(tv.family, ctx.model)
            hint = f" Use `{newer.type}`." if newer else ""
            return MODEL_TOOL.format(label=tool_label(i, t), type=tv.type, model=ctx.model, hint=hint)
    if not m.ptc:
        # Web tools 20260209 on a model without PTC need allowed_callers ["direct"]: a validation
        # error says so (PROTOCOL.md §2 Dynamic filtering). A custom tool made code-callable is NOT
        # refused: seed 002 says the newer versions silently behave as 20250825 there, "and no
        # error will tell you" (Les chiffres); the engine serves such turns without PTC.
        for i, t in enumerate(ctx.tools):
            if t.get("type") in CODE_ONLY_BY_DEFAULT and any(
                    c != "direct" for c in effective_callers(t)):
                return MODEL_PTC.format(label=tool_label(i, t), model=ctx.model)
    return None


@rule("tools.web_tools_need_code_execution_20260120",
      source=seed(SEED_CODE_EXECUTION, "Versi alat", "I"),
      statement="web_search/web_fetch 20260209 need code_execution 20260120 or later alongside.",
      message=WEB_NEEDS_CE)
def web_tools_need_ce(ctx: RuleContext) -> str | None:
    web = [t for t in ctx.tools if t.get("type") in CODE_ONLY_BY_DEFAULT]
    if not web:
        return None
    for i, t, tv in ctx.code_execution_tools():
        eff = tv.effective_type(ctx.model)
        code_web = any(c != "direct" for w in web for c in effective_callers(w))
        if tv.type < "code_execution_20260120" or (code_web and eff < "code_execution_20260120"):
            behaves = f" (which runs as `{eff}` on `{ctx.model}`)" if eff != tv.type else ""
            return WEB_NEEDS_CE.format(label=tool_label(i, t), web=web[0].get("type"), ce=tv.type,
                                       behaves=behaves)
    return None




