"""JSON Schemas (2020-12) of the tool-use protocol, generated from :mod:`simulator.registry`.

``build_documents(mode)`` returns every schema document of one mode; the committed
``<name>.<mode>.json`` files next to this module are the same documents written out by
``python -m simulator.schemas.generate`` (a test checks they are up to date). :data:`KINDS` maps
each kind of JSON object the validation API knows to the ``$defs`` entry describing it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from .. import registry
from ..sources import protocol
from . import _blocks, _errors, _managed_agents, _messages, _streaming, _tools
from ._core import (
    BASE_URI,
    DEFAULT_MAX_AGENT_TOOLS,
    KNOWN,
    MESSAGE,
    MODES,
    RULE,
    Ctx,
    Mode,
    Schema,
)

__all__ = [
    "BASE_URI", "BLOCK_TYPES", "DEFAULT_MAX_AGENT_TOOLS", "DOCUMENTS", "KINDS", "KNOWN", "MESSAGE",
    "MODES", "RULE", "SCHEMA_DIR", "Ctx", "Mode", "Schema", "build_documents", "enum_sources",
    "kind_uri", "schema_file",
]

SCHEMA_DIR = Path(__file__).resolve().parent
_BUILDERS = {
    _blocks.NAME: _blocks.build, _tools.NAME: _tools.build, _messages.NAME: _messages.build,
    _streaming.NAME: _streaming.build, _errors.NAME: _errors.build,
    _managed_agents.NAME: _managed_agents.build,
}
DOCUMENTS: tuple[str, ...] = tuple(_BUILDERS)
BLOCK_TYPES: tuple[str, ...] = _blocks.BLOCK_TYPES

#: kind -> (document, $defs entry).
KINDS: dict[str, tuple[str, str]] = {
    "request": ("messages", "request"),
    "request_headers": ("messages", "request_headers"),
    "count_tokens_request": ("messages", "count_tokens_request"),
    "message": ("messages", "message"),
    "response": ("messages", "response"),
    "usage": ("messages", "usage"),
    "block": ("blocks", "block"),
    "caller": ("blocks", "caller"),
    "tool_definition": ("tools", "tool_definition"),
    "sse_event": ("streaming", "sse_event"),
    "sse_events": ("streaming", "sse_events"),
    "error": ("errors", "error_body"),
    "ma_event": ("managed_agents", "ma_event"),
    "ma_tool": ("tools", "ma_tool"),
    "ma_agent": ("managed_agents", "ma_agent"),
    "work_item": ("managed_agents", "work_item"),
    "work_heartbeat": ("managed_agents", "work_heartbeat"),
    "work_queue_stats": ("managed_agents", "work_queue_stats"),
}
#: ``tool_input:<type>``: the input of one client tool version.
for _t in registry.TOOLS.values():
    if _t.side == "client" and _t.commands:
        KINDS[f"tool_input:{_t.type}"] = ("tools", f"input.{_t.type}")
for _b in BLOCK_TYPES:
    KINDS[f"block:{_b}"] = ("blocks", _b)


@cache
def build_documents(mode: Mode, max_agent_tools: int = DEFAULT_MAX_AGENT_TOOLS) -> dict[str, Schema]:
    """Every schema document of ``mode``, by document name (do not mutate the result)."""
    ctx = Ctx(mode, max_agent_tools)
    return {name: build(ctx) for name, build in _BUILDERS.items()}


def kind_uri(kind: str, mode: Mode) -> str:
    doc, name = KINDS[kind]
    return f"{BASE_URI}{mode}/{doc}.json#/$defs/{name}"


def schema_file(name: str, mode: Mode) -> Path:
    return SCHEMA_DIR / f"{name}.{mode}.json"


def enum_sources() -> dict[str, Any]:
    """Sidecar: every enumerated error code, stop reason and error type with its source."""
    ce = registry.ERROR_CODES_SOURCE.cite()
    legacy = registry.LEGACY_ERROR_CODES_SOURCE.cite()
    web = registry.WEB_ERROR_CODES_SOURCE.cite()

    def codes(values: tuple[str, ...], src: str) -> dict[str, str]:
        return {v: src for v in values}

    stop = {r: registry.STOP_REASONS_SOURCE.cite() for r in registry.STOP_REASONS}
    stop["pause_turn"] = registry.PAUSE_TURN_SOURCE.cite()
    stop.update({r: f"{registry.STOP_REASONS_SOURCE.cite()} (beta)" for r in registry.BETA_STOP_REASONS})
    return {
        "$comment": "Generated from simulator.registry by python -m simulator.schemas.generate",
        "error_codes": {
            "code_execution_tool_result_error": codes(registry.CODE_EXECUTION_ERROR_CODES, ce),
            "bash_code_execution_tool_result_error": codes(registry.BASH_ERROR_CODES, ce),
            "text_editor_code_execution_tool_result_error": codes(registry.TEXT_EDITOR_ERROR_CODES, ce),
            "web_search_tool_result_error": codes(registry.WEB_SEARCH_ERROR_CODES, web),
            "web_fetch_tool_result_error": codes(registry.WEB_FETCH_ERROR_CODES, web),
            "legacy (lenient mode only, INFO)": codes(registry.LEGACY_ERROR_CODES, legacy),
        },
        "stop_reasons": stop,
        "api_error_types": {
            **{t: f"{registry.API_ERROR_TYPES_SOURCE.cite()} (HTTP {s})"
               for s, t in registry.API_ERROR_TYPES.items()},
            **{t: protocol("5. Error responses", "S").cite() + " (SDK ErrorType only)"
               for t in registry.SDK_API_ERROR_TYPES},
        },
        "caller_types": codes(registry.CALLER_TYPES, registry.CALLERS_SOURCE.cite()),
        "allowed_callers": codes(registry.ALLOWED_CALLERS, registry.CALLERS_SOURCE.cite()),
        "session_stop_reasons": codes(_managed_agents.SESSION_STOP_REASONS,
                                      protocol("7. Managed Agents: Events", "S").cite()),
    }


def expected_files() -> dict[Path, str]:
    """Every committed JSON file and the text it must hold."""
    out: dict[Path, str] = {}
    for mode in MODES:
        for name, doc in build_documents(mode).items():
            out[schema_file(name, mode)] = _dump(doc)
    out[SCHEMA_DIR / "enums.json"] = _dump(enum_sources())
    return out


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
