"""Request-level protocol rules, registered by id (see :mod:`simulator.rules.base`).

Public surface::

    RULES: dict[str, Rule]          # every rule by id
    ALL_RULES: tuple[Rule, ...]     # every rule, in check order
    DEFAULT_RULES: tuple[Rule, ...] # what the engine runs by default (``Rule.default``)
    rules_except(*ids) -> tuple[Rule, ...]   # disable rules by id
    check_request(body, headers, state, rules=ALL_RULES) -> list[Violation]

A :class:`Rule` carries ``id``, ``level`` (MUST/SHOULD/INFO), ``source`` (a
:class:`simulator.sources.Source`; tag ``I``/``?`` when the exact message is inferred),
``statement``, ``message`` (template) and ``check``. Modules, one per theme: ``schema``,
``tools`` (type/name, betas, model compatibility), ``messages`` (roles, tool_result pairing),
``fields`` (closed sets and ranges: roles, ``tool_choice`` types, block types, sampling
ranges, top-level fields), ``ptc`` (programmatic calling), ``server_tools`` (containers,
pause_turn, pending server tools), ``resent`` (a served assistant turn sent back as served),
``request`` (model id, ``container`` form, effort levels, thinking budget, file sources, context
window: the live API's own refusals, real_traffic captures as sources).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import schema as _schema  # noqa: F401  (registration order = check order)
from . import tools as _tools  # noqa: F401

from . import fields as _fields  # noqa: F401  # isort: skip
from . import messages as _messages  # noqa: F401  # isort: skip
from . import ptc as _ptc  # noqa: F401  # isort: skip
from . import server_tools as _server_tools  # noqa: F401  # isort: skip
from . import request as _request  # noqa: F401  # isort: skip
from . import resent as _resent  # noqa: F401  # isort: skip
from ..state import SimState
from .base import RULES, Rule, RuleContext, Violation, rule, run_rules

#: Check order: the request as a whole, then tool definitions, then the conversation, then state.
ORDER = (
    "request.schema", "tool_choice.type_known", "messages.roles.known", "content.block_type_known",
    "sampling.temperature_range", "sampling.top_p_range", "request.known_fields", "model.known",
    "model.not_retired", "container.param_is_string", "effort.supported_level",
    "thinking.budget_below_max_tokens", "content.file_source_needs_files_beta",
    "request.prompt_within_context_window", "beta.header_known", "tools.fixed_type_name", "beta.legacy_header_required",
    "tools.model_compatibility", "tools.web_tools_need_code_execution_20260120",
    "ptc.strict_unsupported", "ptc.disable_parallel_tool_use_unsupported", "ptc.recursive_ref",
    "ptc.mcp_not_code_callable", "tool_choice.requires_direct_caller", "messages.roles.alternate",
    "messages.tool_result.answers_previous_tool_use", "ptc.pending.only_tool_results",
    "ptc.tool_result.text_content_only", "messages.tool_use.answered_once_in_next_message",
    "messages.tool_result.before_other_content", "container.unknown_or_expired",
    "ptc.container.required", "pause_turn.resend_assistant_content",
    "messages.resent_turn.unchanged", "server_tool_use.pending.same_tools",
)
ALL_RULES: tuple[Rule, ...] = tuple(RULES[i] for i in ORDER) + tuple(
    r for i, r in RULES.items() if i not in ORDER)
#: ``messages.roles.alternate`` is off: live traffic (real_traffic ``pysdk__096``) shows the API
#: accepting two user turns in a row (it combines them). Enable it with ``rules=ALL_RULES``.
DEFAULT_RULES: tuple[Rule, ...] = tuple(r for r in ALL_RULES if r.default)
#: Rules whose verdict depends only on the tool definitions, ``model``, ``tool_choice`` and the
#: betas (body ``betas`` and the ``anthropic-beta`` header): neither messages nor state. The
#: engine skips them for a request whose definitions equal those of a request that passed every
#: rule (:mod:`simulator.history`: the last one of the simulator, or any in the process).
DEFINITION_RULES = frozenset({
    "beta.header_known", "tools.fixed_type_name", "beta.legacy_header_required",
    "tools.model_compatibility", "tools.web_tools_need_code_execution_20260120",
    "ptc.strict_unsupported", "ptc.disable_parallel_tool_use_unsupported", "ptc.recursive_ref",
    "ptc.mcp_not_code_callable", "tool_choice.requires_direct_caller", "tool_choice.type_known",
})
#: Rules judging a request against what this simulation served (the state's served turns):
#: the engine runs them on every request, outside the verdicts it remembers for a blank state.
SERVED_RULES = frozenset({"messages.resent_turn.unchanged"})


def rules_except(*ids: str, base: Iterable[Rule] | None = None) -> tuple[Rule, ...]:
    """``base`` (default ``ALL_RULES``) without the given ids (an unknown id raises ``KeyError``)."""
    unknown = [i for i in ids if i not in RULES]
    if unknown:
        raise KeyError(f"unknown rule id(s) {unknown}; known: {', '.join(RULES)}")
    return tuple(r for r in (ALL_RULES if base is None else base) if r.id not in ids)


def check_request(body: Mapping[str, Any], headers: Mapping[str, str], state: SimState,
                  rules: Iterable[Rule] = DEFAULT_RULES) -> list[Violation]:
    return run_rules(RuleContext(body, headers, state), rules)


__all__ = ["ALL_RULES", "DEFAULT_RULES", "DEFINITION_RULES", "RULES", "SERVED_RULES", "Rule", "RuleContext", "Violation", "check_request", "rule",
           "rules_except"]
