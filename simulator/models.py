"""The Claude models the API serves, as the rules, the tool registry and the Models API need them.

A model is placed in a *generation* so tool versions can say "Claude 4 and later". The API
answers a model it does not serve (any spelling: a misspelled family, a made-up name, a model of
another vendor) and a retired one with 404 ``not_found_error`` ``model: <id>`` (real_traffic
pydai__056, pydai__326; issue 25: ``claude-3-5-sonnet-latest`` answered 404 on 2025-11-05, after
its retirement). So this table is the list of served models: a model it lacks is answered 404.

A model the table does not know yet (a newer one, a private preview) is added without changing
the code: the environment variable ``TOOLUSE_MODELS`` (ids separated by commas or spaces), the
``models=`` option of :class:`simulator.engine.Simulator` and of the transports, or ``tooluse
serve --model ID`` (repeatable). See docs/serve-and-record.md "Models".
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from .sources import SEED_CODE_EXECUTION, SEED_TEXT_EDITOR, Source, protocol, seed

#: Effort levels (``output_config.effort``) in the order the SDK lists them.
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
_E5 = EFFORT_LEVELS
_E4 = ("low", "medium", "high", "max")
_E3 = ("low", "medium", "high")
_1M = 1_000_000


@dataclass(frozen=True)
class Model:
    id: str
    display_name: str
    generation: float
    #: Programmatic tool calling and REPL state on code_execution 20260120+.
    ptc: bool = True
    #: Accepts the current code execution versions (seed 000 supportedModels).
    code_execution: bool = True
    lifecycle: str = "active"
    aliases: tuple[str, ...] = ()
    #: Effort levels the model accepts (empty: no effort parameter). Docs (build-with-claude/
    #: effort): max on Fable 5, Mythos 5, Opus 5, Opus 4.8, 4.7, 4.6, Sonnet 5, Sonnet 4.6; xhigh
    #: on Fable 5, Mythos 5, Opus 5, Opus 4.8, 4.7, Sonnet 5; Opus 4.5 low/medium/high. The 5.1
    #: and 5.5 models are given all five [I]. Live: real_traffic pydai__369 (Opus 4.6, no xhigh).
    effort: tuple[str, ...] = ()
    #: Input tokens the model accepts (Models API ``max_input_tokens``): 1M for the 4.6 and later
    #: Opus/Sonnet/Fable/Mythos models, 200k otherwise [I]; live: real_traffic rubyllm__058
    #: (Haiku 4.5: "> 200000 maximum").
    context_window: int = 200_000
    #: The day the API stops serving the model (None: no retirement announced). From then on a
    #: request for it is answered 404 like an unknown model.
    retired_on: date | None = None
    #: Where ``retired_on`` comes from (every retirement date carries one).
    retired_source: str = ""
    #: The last day live traffic shows the API serving the model past ``retired_on`` (None: no
    #: such evidence), with its source: the evidence wins over the documented date.
    served_until: date | None = None
    served_source: str = ""

    def retired(self, on: date) -> bool:
        """Whether a request for the model on day ``on`` is refused: from the documented
        retirement day, unless live traffic shows it served that day or later."""
        if self.retired_on is None or on < self.retired_on:
            return False
        return self.served_until is None or on > self.served_until


_CE = seed(SEED_CODE_EXECUTION, "featureMetadata.supportedModels")
#: The model deprecations page (https://platform.claude.com/docs/en/about-claude/model-deprecations).
_DEPRECATIONS = "[D: model deprecations page, https://platform.claude.com/docs/en/about-claude/model-deprecations]"
#: Sonnet 3.5 was announced for retirement on 2025-10-22 and live answered it on 2025-10-28 (issue
#: 40: a fresh set of live captures; the docs' own changelog of that day retires it then).
_SONNET_35_SERVED = "[3P: live captures answered 200 on 2025-10-28 (issue 40's fresh set)]"

MODELS: tuple[Model, ...] = (
    Model("claude-fable-5-1", "Claude Fable 5.1", 5.1, effort=_E5, context_window=_1M),
    Model("claude-mythos-5-1", "Claude Mythos 5.1", 5.1, effort=_E5, context_window=_1M),
    Model("claude-fable-5", "Claude Fable 5", 5.0, effort=_E5, context_window=_1M),
    Model("claude-mythos-5", "Claude Mythos 5", 5.0, effort=_E5, context_window=_1M),
    Model("claude-opus-5-5", "Claude Opus 5.5", 5.5, effort=_E5, context_window=_1M),
    Model("claude-opus-5", "Claude Opus 5", 5.0, effort=_E5, context_window=_1M),
    Model("claude-opus-4-8", "Claude Opus 4.8", 4.8, effort=_E5, context_window=_1M),
    Model("claude-opus-4-7", "Claude Opus 4.7", 4.7, effort=_E5, context_window=_1M),
    Model("claude-opus-4-6", "Claude Opus 4.6", 4.6, effort=_E4, context_window=_1M),
    Model("claude-opus-4-5-20251101", "Claude Opus 4.5", 4.5, aliases=("claude-opus-4-5",),
          effort=_E3),
    Model("claude-sonnet-5-5", "Claude Sonnet 5.5", 5.5, effort=_E5, context_window=_1M),
    Model("claude-sonnet-5", "Claude Sonnet 5", 5.0, effort=_E5, context_window=_1M),
    Model("claude-sonnet-4-6", "Claude Sonnet 4.6", 4.6, effort=_E4, context_window=_1M),
    Model("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", 4.5, aliases=("claude-sonnet-4-5",)),
    Model("claude-haiku-5-5", "Claude Haiku 5.5", 5.5, effort=_E5),
    # Seed 000: Haiku 4.5 accepts 20260120/20260521 but has no PTC and no REPL persistence.
    Model("claude-haiku-4-5-20251001", "Claude Haiku 4.5", 4.5, ptc=False, aliases=("claude-haiku-4-5",)),
    # PROTOCOL.md §2: Opus 4.1 (deprecated) supports only code_execution_20250825.
    Model("claude-opus-4-1-20250805", "Claude Opus 4.1", 4.1, ptc=False, lifecycle="deprecated",
          aliases=("claude-opus-4-1",)),
    # Seed 001: Claude 4 models use text_editor_20250429. Not in seed 000's current list, but live
    # captures (real_traffic pydai/llmanth, 2025) show code execution 20250522/20250825 accepted
    # on claude-sonnet-4-0 [3P]; like Opus 4.1 they have no PTC, so 20260120+ is refused.
    Model("claude-opus-4-20250514", "Claude Opus 4", 4.0, ptc=False, lifecycle="deprecated",
          aliases=("claude-opus-4-0",)),
    Model("claude-sonnet-4-20250514", "Claude Sonnet 4", 4.0, ptc=False, lifecycle="deprecated",
          aliases=("claude-sonnet-4-0",)),
    # Retired models (the model deprecations page of the docs [I]; PROTOCOL.md §3: Sonnet 3.5
    # and 3.7 "now retired"): served until ``retired_on``, 404 from then on; each date with its
    # source (_DEPRECATIONS), and live evidence of a later answer where there is one.
    Model("claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", 3.7, ptc=False, code_execution=False,
          lifecycle="retired", aliases=("claude-3-7-sonnet-latest",),
          retired_on=date(2026, 2, 19), retired_source=_DEPRECATIONS),
    Model("claude-3-5-haiku-20241022", "Claude Haiku 3.5", 3.5, ptc=False, code_execution=False,
          lifecycle="retired", aliases=("claude-3-5-haiku-latest",),
          retired_on=date(2026, 2, 19), retired_source=_DEPRECATIONS),
    Model("claude-3-5-sonnet-20241022", "Claude Sonnet 3.5", 3.5, ptc=False, code_execution=False,
          lifecycle="retired", aliases=("claude-3-5-sonnet-latest",),
          retired_on=date(2025, 10, 22), retired_source=_DEPRECATIONS,
          served_until=date(2025, 10, 28), served_source=_SONNET_35_SERVED),
    Model("claude-3-5-sonnet-20240620", "Claude Sonnet 3.5 (June 2024)", 3.5, ptc=False,
          code_execution=False, lifecycle="retired", retired_on=date(2025, 10, 22),
          retired_source=_DEPRECATIONS, served_until=date(2025, 10, 28),
          served_source=_SONNET_35_SERVED),
    Model("claude-3-opus-20240229", "Claude Opus 3", 3.0, ptc=False, code_execution=False,
          lifecycle="retired", aliases=("claude-3-opus-latest",), retired_on=date(2026, 1, 5),
          retired_source=_DEPRECATIONS),
    Model("claude-3-sonnet-20240229", "Claude Sonnet 3", 3.0, ptc=False, code_execution=False,
          lifecycle="retired", retired_on=date(2025, 7, 21), retired_source=_DEPRECATIONS),
    Model("claude-3-haiku-20240307", "Claude Haiku 3", 3.0, ptc=False, code_execution=False,
          lifecycle="deprecated"),
    Model("claude-2.1", "Claude 2.1", 2.1, ptc=False, code_execution=False, lifecycle="retired",
          retired_on=date(2025, 7, 21), retired_source=_DEPRECATIONS),
    Model("claude-2.0", "Claude 2.0", 2.0, ptc=False, code_execution=False, lifecycle="retired",
          retired_on=date(2025, 7, 21), retired_source=_DEPRECATIONS),
)

MODEL_SOURCES: dict[str, Source] = {
    "code_execution": _CE,
    "ptc": protocol("1. Programmatic tool calling: Requires"),
    "claude4_editor": seed(SEED_TEXT_EDITOR, "Gunakan model yang kompatibel"),
}

_BY_ID: dict[str, Model] = {}
for _m in MODELS:
    for _key in (_m.id, *_m.aliases):
        if _key in _BY_ID:
            raise ValueError(f"duplicate model id {_key!r}")
        _BY_ID[_key] = _m


def lookup(model_id: str) -> Model | None:
    """The known model for an id or alias, or None when this table does not know it."""
    return _BY_ID.get(model_id)


#: The environment variable naming models to serve beyond the table (commas or spaces).
MODELS_ENV = "TOOLUSE_MODELS"
_SPLIT = re.compile(r"[\s,]+")


def env_models() -> frozenset[str]:
    """The model ids of ``$TOOLUSE_MODELS`` (read at each call: a changed variable counts)."""
    raw = os.environ.get(MODELS_ENV, "")
    return frozenset(x for x in _SPLIT.split(raw) if x) if raw else frozenset()


def is_model_id(model_id: str, extra: Iterable[str] = ()) -> bool:
    """A model the table knows (retired ones included) or one added (``extra``,
    ``$TOOLUSE_MODELS``)."""
    return lookup(model_id) is not None or model_id in extra or model_id in env_models()
