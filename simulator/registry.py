"""The tool registry: the single source of truth for every tool type.

Schemas, rules, the fixture linter, the check catalog and the docs all read this table. Each
:class:`ToolVersion` registers itself in :data:`TOOLS`; a duplicate ``type`` fails at import.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from .models import MODELS, lookup
from .sources import (
    SEED_BASH,
    SEED_CODE_EXECUTION,
    SEED_MANAGED_AGENTS,
    SEED_PTC,
    SEED_TEXT_EDITOR,
    Source,
    capture,
    protocol,
    seed,
)

Family = Literal["code_execution", "bash", "text_editor", "web_search", "web_fetch", "custom",
                 "agent_toolset", "computer"]
Side = Literal["client", "server", "managed"]


@dataclass(frozen=True)
class Fact:
    """One documented property of a tool version, with where it comes from."""

    text: str
    source: Source


@dataclass(frozen=True)
class Command:
    """A command (or sub-tool) of a tool: its required and optional input fields."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    source: Source | None = None


@dataclass(frozen=True)
class ToolVersion:
    type: str
    family: Family
    #: The fixed ``name`` the definition must carry (None: chosen by the user).
    name: str | None
    side: Side
    source: Source
    commands: tuple[Command, ...] = ()
    #: Header value required in ``anthropic-beta`` for this version (legacy versions).
    beta_header: str | None = None
    #: Ids of the models that accept it; None means every model that supports the family.
    models: frozenset[str] | None = None
    min_generation: float | None = None
    max_generation: float | None = None
    #: Optional definition fields besides type and name.
    definition_fields: tuple[str, ...] = ()
    #: Server sub-tools (``server_tool_use.name``) and result block types.
    sub_tools: Mapping[str, str] = field(default_factory=dict)
    #: Error codes each sub-tool's result error can carry.
    error_codes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Programmatic tool calling (PTC) and REPL state persistence.
    programmatic_calling: bool = False
    repl_state: bool = False
    #: Wall-clock limit per Python cell in seconds (20260521), and whether detection_timeout exists.
    cell_limit_seconds: int | None = None
    detection_timeout: bool = False
    legacy: bool = False
    #: Field names the model may use for the text of an ``insert`` (editor).
    insert_text_fields: tuple[str, ...] = ()
    #: Schema-less: no ``input_schema`` in the definition (built into the model).
    schema_less: bool = True
    #: Models on which this version silently behaves as another one.
    behaves_as: Mapping[str, str] = field(default_factory=dict)
    facts: tuple[Fact, ...] = ()

    @property
    def command_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.commands)

    def command(self, name: str) -> Command | None:
        return next((c for c in self.commands if c.name == name), None)

    def accepts_model(self, model_id: str) -> bool | None:
        """True/False for a known model; None when the model is unknown to the registry."""
        m = lookup(model_id)
        if m is None:
            return None
        if self.models is not None:
            return m.id in self.models
        if self.family in ("code_execution", "web_search", "web_fetch") and not m.code_execution:
            return False
        if self.min_generation is not None and m.generation < self.min_generation:
            return False
        if self.max_generation is not None and m.generation > self.max_generation:
            return False
        return True

    def effective_type(self, model_id: str) -> str:
        """The version a model actually runs (Haiku 4.5 runs 20260120+ as 20250825)."""
        m = lookup(model_id)
        if m is not None and m.id in self.behaves_as:
            return self.behaves_as[m.id]
        return self.type


TOOLS: dict[str, ToolVersion] = {}


def register(tool: ToolVersion) -> ToolVersion:
    if tool.type in TOOLS:
        raise ValueError(f"tool type {tool.type!r} registered twice")
    if tool.side != "managed" and tool.family not in ("custom",) and not tool.name:
        raise ValueError(f"{tool.type}: a built-in tool needs its fixed name")
    TOOLS[tool.type] = tool
    return tool


def get(tool_type: str) -> ToolVersion | None:
    return TOOLS.get(tool_type)


def of_family(family: Family) -> Iterator[ToolVersion]:
    return (t for t in TOOLS.values() if t.family == family)


def fixed_names() -> Mapping[str, str]:
    """``type`` → required ``name`` for every built-in tool."""
    return MappingProxyType({t.type: t.name for t in TOOLS.values() if t.name})


# --- error codes -------------------------------------------------------------------------------

_CE_ERRORS_SRC = seed(SEED_CODE_EXECUTION, "Format respons / Error")
CODE_EXECUTION_ERROR_CODES = ("invalid_tool_input", "unavailable", "too_many_requests",
                              "execution_time_exceeded")
BASH_ERROR_CODES = (*CODE_EXECUTION_ERROR_CODES, "output_file_too_large")
TEXT_EDITOR_ERROR_CODES = (*CODE_EXECUTION_ERROR_CODES, "file_not_found")
#: Only in older doc revisions (PROTOCOL.md "Known discrepancies"): lenient mode, INFO.
LEGACY_ERROR_CODES = ("container_expired", "string_not_found")

STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                "model_context_window_exceeded")
BETA_STOP_REASONS = ("compaction",)

#: ``allowed_callers`` values (PROTOCOL.md §1).
ALLOWED_CALLERS = ("direct", "code_execution_20250825", "code_execution_20260120",
                   "code_execution_20260521")
#: ``caller`` types a response can carry (PROTOCOL.md §1: no 20260521 variant).
CALLER_TYPES = ("direct", "code_execution_20250825", "code_execution_20260120")

#: Where each enumerated value above comes from (the JSON Schemas record it in ``$comment``).
ERROR_CODES_SOURCE = _CE_ERRORS_SRC
LEGACY_ERROR_CODES_SOURCE = protocol("Known discrepancies to encode, not to resolve silently")
STOP_REASONS_SOURCE = protocol("6. Streaming (SSE): Stop reasons", "S")
PAUSE_TURN_SOURCE = seed(SEED_CODE_EXECUTION, "Alasan berhenti pause_turn")
CALLERS_SOURCE = protocol("1. Programmatic tool calling: allowed_callers / caller union", "S")
#: Result errors of the web tools (SDK enums; PROTOCOL.md has no list of its own).
WEB_SEARCH_ERROR_CODES = ("invalid_tool_input", "unavailable", "max_uses_exceeded",
                          "too_many_requests", "query_too_long", "request_too_large")
WEB_FETCH_ERROR_CODES = ("invalid_tool_input", "url_too_long", "url_not_allowed",
                         "url_not_in_prior_context", "url_not_accessible", "unsupported_content_type",
                         "too_many_requests", "max_uses_exceeded", "unavailable", "content_too_large")
WEB_ERROR_CODES_SOURCE = protocol("2. Code execution tool: Dynamic filtering", "S")
#: HTTP status -> API error ``type`` (PROTOCOL.md §5), and the SDK's extra types.
API_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                   403: "permission_error", 404: "not_found_error", 409: "conflict_error",
                   413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                   504: "timeout_error", 529: "overloaded_error"}
SDK_API_ERROR_TYPES = ("memory_precondition_failed_error", "memory_path_conflict_error")
API_ERROR_TYPES_SOURCE = protocol("5. Error responses: Status to type")

_DEF_FIELDS = ("allowed_callers", "cache_control", "defer_loading", "strict")

# --- code execution ----------------------------------------------------------------------------

_CE_VERSIONS = seed(SEED_CODE_EXECUTION, "Versi alat")
_CE_SUBTOOLS = {
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
}
_CE_COMMANDS = (
    Command("bash_code_execution", ("command",), source=seed(SEED_CODE_EXECUTION, "Respons perintah Bash")),
    Command("text_editor_code_execution", ("command", "path"),
            ("file_text", "old_str", "new_str", "view_range"),
            source=seed(SEED_CODE_EXECUTION, "Respons operasi file")),
)
_CE_ERROR_MAP = {
    "bash_code_execution": BASH_ERROR_CODES,
    "text_editor_code_execution": TEXT_EDITOR_ERROR_CODES,
    "code_execution": CODE_EXECUTION_ERROR_CODES,
}
_HAIKU_45 = "claude-haiku-4-5-20251001"

register(ToolVersion(
    type="code_execution_20250522", family="code_execution", name="code_execution", side="server",
    source=protocol("2. Code execution tool: Versions"), legacy=True,
    beta_header="code-execution-2025-05-22",
    commands=(Command("code_execution", ("code",), source=protocol("2. Legacy 20250522 server_tool_use", "I")),),
    sub_tools={"code_execution": "code_execution_tool_result"},
    error_codes={"code_execution": CODE_EXECUTION_ERROR_CODES},
    definition_fields=_DEF_FIELDS,
    facts=(
        Fact("Python only; the result block is code_execution_result.", protocol("2. Code execution tool: Versions")),
        Fact("Needs the beta header code-execution-2025-05-22.", protocol("2. Code execution tool: Versions")),
        Fact("Migrate to the current versions.", seed(SEED_CODE_EXECUTION, "Upgrade ke versi alat terbaru")),
    ),
))
register(ToolVersion(
    type="code_execution_20250825", family="code_execution", name="code_execution", side="server",
    source=_CE_VERSIONS, commands=_CE_COMMANDS, sub_tools=_CE_SUBTOOLS, error_codes=_CE_ERROR_MAP,
    definition_fields=_DEF_FIELDS,
    facts=(Fact("Bash commands and file operations; no beta header.", _CE_VERSIONS),),
))
register(ToolVersion(
    type="code_execution_20260120", family="code_execution", name="code_execution", side="server",
    source=_CE_VERSIONS, commands=_CE_COMMANDS,
    sub_tools={**_CE_SUBTOOLS, "code_execution": "code_execution_tool_result"},
    error_codes=_CE_ERROR_MAP, definition_fields=_DEF_FIELDS,
    programmatic_calling=True, repl_state=True, behaves_as={_HAIKU_45: "code_execution_20250825"},
    facts=(
        Fact("Adds REPL state persistence and programmatic tool calling.", _CE_VERSIONS),
        Fact("Claude Haiku 4.5 accepts it but runs it as code_execution_20250825.", _CE_VERSIONS),
        Fact("web_search/web_fetch 20260209 need code execution 20260120 or later.", _CE_VERSIONS),
    ),
))
register(ToolVersion(
    type="code_execution_20260521", family="code_execution", name="code_execution", side="server",
    source=_CE_VERSIONS, commands=_CE_COMMANDS,
    sub_tools={**_CE_SUBTOOLS, "code_execution": "code_execution_tool_result"},
    error_codes=_CE_ERROR_MAP, definition_fields=_DEF_FIELDS,
    programmatic_calling=True, repl_state=True, cell_limit_seconds=90, detection_timeout=True,
    behaves_as={_HAIKU_45: "code_execution_20250825"},
    facts=(
        Fact("Same runtime as 20260120; the description discloses a 90 s wall-clock limit per "
             "Python cell.", _CE_VERSIONS),
        Fact("A cell over the limit returns a normal result with non-zero return_code and a "
             "detection_timeout status message; distinct from execution_time_exceeded.", _CE_VERSIONS),
        Fact("Claude Haiku 4.5 accepts it but runs it as code_execution_20250825.", _CE_VERSIONS),
    ),
))

# --- bash --------------------------------------------------------------------------------------

_BASH_CMDS = (Command("bash", (), ("command", "restart"), source=seed(SEED_BASH, "파라미터 (Parameters)")),)
register(ToolVersion(
    type="bash_20241022", family="bash", name="bash", side="client",
    source=protocol("4. Bash tool: Versions"), commands=_BASH_CMDS,
    beta_header="computer-use-2024-10-22", models=frozenset({"claude-3-5-sonnet-20241022"}),
    definition_fields=(*_DEF_FIELDS, "input_examples"),
    facts=(Fact("Only the Oct-2024 Sonnet 3.5 (retired); SDK beta namespace only.",
                protocol("4. Bash tool: Versions")),),
))
register(ToolVersion(
    type="bash_20250124", family="bash", name="bash", side="client",
    source=seed(SEED_BASH, "Bash 도구 (Bash tool)"), commands=_BASH_CMDS, min_generation=3.7,
    definition_fields=(*_DEF_FIELDS, "input_examples"),
    facts=(
        Fact("No beta header; Sonnet 3.7 onward, all current models.", protocol("4. Bash tool: Versions")),
        Fact("One bash process kept alive between calls: working directory, environment and "
             "files persist.", seed(SEED_BASH, "Bash 도구 (Bash tool)")),
    ),
))

# --- text editor -------------------------------------------------------------------------------

_TE = seed(SEED_TEXT_EDITOR, "Perintah tool editor teks")
_TE_VIEW = Command("view", ("path",), ("view_range",), source=_TE)
_TE_STR_REPLACE = Command("str_replace", ("path", "old_str", "new_str"), source=_TE)
_TE_CREATE = Command("create", ("path", "file_text"), source=_TE)
_TE_INSERT = Command("insert", ("path", "insert_line"), ("new_str", "insert_text"), source=_TE)
_TE_UNDO = Command("undo_edit", ("path",), source=seed(SEED_TEXT_EDITOR, "undo_edit"))
_TE_BASE = (_TE_VIEW, _TE_STR_REPLACE, _TE_CREATE, _TE_INSERT)
_TE_CHANGELOG = seed(SEED_TEXT_EDITOR, "Log perubahan")

register(ToolVersion(
    type="text_editor_20241022", family="text_editor", name="str_replace_editor", side="client",
    source=_TE_CHANGELOG, commands=(*_TE_BASE, _TE_UNDO), beta_header="computer-use-2024-10-22",
    models=frozenset({"claude-3-5-sonnet-20241022"}), insert_text_fields=("new_str",),
    definition_fields=(*_DEF_FIELDS, "input_examples"),
    facts=(Fact("Claude Sonnet 3.5 needs the beta header computer-use-2024-10-22.",
                seed(SEED_TEXT_EDITOR, "Gunakan model yang kompatibel")),),
))
register(ToolVersion(
    type="text_editor_20250124", family="text_editor", name="str_replace_editor", side="client",
    source=_TE_CHANGELOG, commands=(*_TE_BASE, _TE_UNDO), min_generation=3.7, max_generation=3.7,
    insert_text_fields=("new_str",), definition_fields=(*_DEF_FIELDS, "input_examples"),
    facts=(Fact("Claude Sonnet 3.7; same capabilities as 20241022; no beta header.", _TE_CHANGELOG),),
))
register(ToolVersion(
    type="text_editor_20250429", family="text_editor", name="str_replace_based_edit_tool",
    side="client", source=_TE_CHANGELOG, commands=_TE_BASE, min_generation=4.0,
    insert_text_fields=("new_str",), definition_fields=(*_DEF_FIELDS, "input_examples"),
    facts=(Fact("Claude 4: removes undo_edit; renamed to str_replace_based_edit_tool.", _TE_CHANGELOG),),
))
register(ToolVersion(
    type="text_editor_20250728", family="text_editor", name="str_replace_based_edit_tool",
    side="client", source=protocol("3. Text editor tool: Change log"), commands=_TE_BASE,
    min_generation=4.0, insert_text_fields=("insert_text", "new_str"),
    definition_fields=(*_DEF_FIELDS, "input_examples", "max_characters"),
    facts=(
        Fact("Adds max_characters: the handler truncates view output to that length.",
             protocol("3. Text editor tool: Type/name pairs")),
        Fact("insert carries insert_text (the current docs); the model may also send new_str.",
             protocol("3. Text editor tool: Commands")),
        Fact("No undo_edit (as 20250429).", _TE_CHANGELOG),
    ),
))

# --- web search / fetch (dynamic filtering) ----------------------------------------------------

_DF = protocol("2. Code execution tool: Dynamic filtering")
register(ToolVersion(
    type="web_search_20260209", family="web_search", name="web_search", side="server", source=_DF,
    sub_tools={"web_search": "web_search_tool_result"}, definition_fields=(*_DEF_FIELDS, "max_uses",
    "allowed_domains", "blocked_domains", "user_location"),
    facts=(Fact("Needs code_execution 20260120 or later when code execution is in the request.",
                seed(SEED_CODE_EXECUTION, "Versi alat")),),
))
register(ToolVersion(
    type="web_fetch_20260209", family="web_fetch", name="web_fetch", side="server", source=_DF,
    sub_tools={"web_fetch": "web_fetch_tool_result"}, definition_fields=(*_DEF_FIELDS, "max_uses",
    "allowed_domains", "blocked_domains", "citations", "max_content_tokens"),
    facts=(Fact("Needs code_execution 20260120 or later when code execution is in the request.",
                seed(SEED_CODE_EXECUTION, "Versi alat")),),
))

# Versions live traffic uses beyond the seeds (real_traffic captures; their definitions and answers
# are the evidence). web_search_20250305 and web_fetch_20250910 search/fetch directly (no code
# execution); the 20260318 versions filter results with code the API runs itself: a request
# naming only web_fetch_20260318 is answered with a `code_execution` server_tool_use and a
# code_execution_tool_result (pydai__249/250), and they take `response_inclusion`/`use_cache`.
_WEB_FIELDS = (*_DEF_FIELDS, "max_uses", "allowed_domains", "blocked_domains")
_ALL_MODELS = frozenset(m.id for m in MODELS)
register(ToolVersion(
    type="web_search_20250305", family="web_search", name="web_search", side="server",
    source=capture("pydai__001", "pydai__072", "llmanth__016"),
    sub_tools={"web_search": "web_search_tool_result"}, models=_ALL_MODELS,
    definition_fields=(*_WEB_FIELDS, "user_location"),
    facts=(
        Fact("The first web search version: results come back directly (web_search_tool_result, "
             "cited text blocks), no code execution.", capture("pydai__072")),
        Fact("Accepted on every model, Claude Sonnet 3.5 included (it predates code execution).",
             capture("pydai__408", "pydai__409")),
    ),
))
register(ToolVersion(
    type="web_fetch_20250910", family="web_fetch", name="web_fetch", side="server",
    source=capture("pydai__446", "pydai__259"),
    sub_tools={"web_fetch": "web_fetch_tool_result"}, min_generation=4.0,
    definition_fields=(*_WEB_FIELDS, "citations", "max_content_tokens"),
    facts=(
        Fact("The first web fetch version: pages come back directly (web_fetch_tool_result), no "
             "code execution.", capture("pydai__447", "vercel__093")),
        Fact("Older docs required the beta header web-fetch-2025-09-10; whether the API still does "
             "is not captured (pydantic-ai's recordings drop headers), so it is not enforced [?].",
             capture("pydai__446")),
    ),
))
register(ToolVersion(
    type="web_search_20260318", family="web_search", name="web_search", side="server",
    source=capture("pydai__251", "rubyllm__059"),
    sub_tools={"web_search": "web_search_tool_result"},
    definition_fields=(*_WEB_FIELDS, "user_location", "response_inclusion"),
    facts=(
        Fact("Filters results with code the API runs (server_tool_use code_execution, encrypted "
             "code_execution results) without a code execution tool in the request.",
             capture("pydai__252", "pydai__254")),
        Fact("response_inclusion: 'excluded' keeps the raw results out of the answer.",
             capture("pydai__251")),
    ),
))
register(ToolVersion(
    type="web_fetch_20260318", family="web_fetch", name="web_fetch", side="server",
    source=capture("pydai__249", "pydai__257"),
    sub_tools={"web_fetch": "web_fetch_tool_result"},
    definition_fields=(*_WEB_FIELDS, "citations", "max_content_tokens", "response_inclusion",
                       "use_cache"),
    facts=(
        Fact("Filters fetched pages with code the API runs (server_tool_use code_execution, "
             "code_execution_result) without a code execution tool in the request.",
             capture("pydai__250")),
        Fact("response_inclusion: 'excluded' keeps the raw page out of the answer; use_cache: "
             "false asks for a fresh fetch.", capture("pydai__249")),
    ),
))

# --- computer use ------------------------------------------------------------------------------

#: The display a computer use definition describes (the SDK's BetaToolComputerUse20250124Param
#: and ...20251124Param [S]); 20251124 adds ``enable_zoom``.
_COMPUTER_FIELDS = (*_DEF_FIELDS, "display_width_px", "display_height_px", "display_number")
_COMPUTER = protocol("4. Bash tool: Versions")
register(ToolVersion(
    type="computer_20250124", family="computer", name="computer", side="client", source=_COMPUTER,
    beta_header="computer-use-2025-01-24", min_generation=3.7, definition_fields=_COMPUTER_FIELDS,
    facts=(Fact("Needs the beta header computer-use-2025-01-24; live 2xx requests carry it "
                "(issue 25's held-out captures: 8 requests with computer use tools).", _COMPUTER),),
))
register(ToolVersion(
    type="computer_20251124", family="computer", name="computer", side="client", source=_COMPUTER,
    beta_header="computer-use-2025-11-24", min_generation=4.5,
    definition_fields=(*_COMPUTER_FIELDS, "enable_zoom"),
    facts=(Fact("Needs the beta header computer-use-2025-11-24; adds enable_zoom.", _COMPUTER),),
))

# --- custom tools and Managed Agents -----------------------------------------------------------

register(ToolVersion(
    type="custom", family="custom", name=None, side="client",
    source=seed(SEED_PTC, "L'activer"), schema_less=False,
    definition_fields=("description", "input_schema", "allowed_callers", "cache_control",
                       "defer_loading", "strict", "input_examples", "eager_input_streaming"),
    facts=(
        Fact("allowed_callers: direct and/or code_execution_20260120 (20260521 interchangeable).",
             protocol("1. Programmatic tool calling: allowed_callers")),
        Fact("Managed Agents custom tools: name 1-128 chars [A-Za-z0-9_-], no mcp__/ant__ prefix, "
             "non-empty description, no $ref, no top-level oneOf/anyOf/allOf, at most 256 entries.",
             seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")),
    ),
))
register(ToolVersion(
    type="agent_toolset_20260401", family="agent_toolset", name=None, side="managed",
    source=protocol("7. Managed Agents"), beta_header="managed-agents-2026-04-01",
    commands=tuple(Command(n, ()) for n in ("bash", "read", "write", "edit", "glob", "grep",
                                            "web_fetch", "web_search")),
    definition_fields=("configs", "default_config"),
    facts=(Fact("The Managed Agents built-in toolset; its names are reserved for custom tools.",
                seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API")),),
))

#: Built-in names a Managed Agents custom tool may not take.
RESERVED_AGENT_TOOL_NAMES = frozenset(TOOLS["agent_toolset_20260401"].command_names)
RESERVED_AGENT_TOOL_PREFIXES = ("mcp__", "ant__")
