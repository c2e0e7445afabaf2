"""Named request matchers: which recorded exchange an incoming request corresponds to.

A :class:`Matcher` has a stable ``name`` and a ``key`` function that extracts a comparable value
from a request (method, path, parsed JSON body). Two requests match on a matcher when their keys
are equal; the engine reports the first matcher that differs, with both values::

    Matcher("model", lambda r: r.body.get("model"))

Defaults (:data:`DEFAULT_MATCHERS`): ``method``, ``path``, ``model``, ``tools``, ``messages.shape``
(roles and block types), ``tool_use_ids.answered``. Tool result *contents* and ids a client
generates are never compared by default; pass your own tuple to compare more or less, or pick by
name with :func:`matchers_by_name`.

Named sets (:data:`MATCHER_SETS`, :func:`matcher_set`): ``exact`` (the defaults) and ``tolerant``
(:data:`TOLERANT_MATCHERS`), which matches every difference the live API answers the same way and
only those: :data:`EQUIVALENCES` states each kind of difference once, inert or meaning-carrying,
with its source (tools as a set by name with only what carries meaning, either conversation
management, ...). A matcher may relate keys by something other than equality (``same``), say what
it normalised for a pair it accepted (``explain``; the engine reports that with the exchange it
serves) and where a pair it refused first differs (``diff``: :func:`difference`, one line naming
the path, :class:`simulator.differences.Difference`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .differences import Difference, first_difference, label

if TYPE_CHECKING:
    from .history import RequestHistory


@dataclass(frozen=True)
class MatchRequest:
    """What matchers see: the method, the path (no query), and the parsed JSON body."""

    method: str
    path: str
    body: Mapping[str, Any]
    #: The engine's per-message facts of ``body`` (:mod:`simulator.history`), when it has them.
    history: RequestHistory | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_recorded(cls, request: Mapping[str, Any]) -> MatchRequest:
        body = request.get("body")
        return cls(str(request.get("method", "POST")).upper(), normalize_path(str(request["path"])),
                   body if isinstance(body, dict) else {})


@dataclass(frozen=True)
class Matcher:
    name: str
    key: Callable[[MatchRequest], Any]
    description: str = ""
    #: Whether two keys that are not equal still match (a tolerant relation); None: equality.
    same: Callable[[Any, Any], bool] | None = None
    #: What was normalised to match ``(recorded, incoming)``: lines naming what an exact
    #: comparison would have refused (empty when nothing was).
    explain: Callable[[MatchRequest, MatchRequest], list[str]] | None = None
    #: Where ``(recorded, incoming)`` first differ, in the request's own paths (None: the keys'
    #: first difference, under the matcher's name).
    diff: Callable[[MatchRequest, MatchRequest], Difference | None] | None = None

    def agrees(self, recorded_key: Any, incoming_key: Any) -> bool:
        """Whether keys of a recorded and an incoming request match."""
        return recorded_key == incoming_key or (
            self.same is not None and self.same(recorded_key, incoming_key))


@dataclass(frozen=True)
class MatchFailure:
    matcher: str
    expected: Any
    received: Any
    #: The first differing path with both values (:func:`difference`); None when not computed.
    difference: Difference | None = None

    @property
    def line(self) -> str:
        """One line naming the first differing path: ``tools[get_weather].input_schema.
        properties.location.type: recorded "string", received "number"``."""
        d = self.difference or first_difference(self.expected, self.received, self.matcher) \
            or Difference(self.matcher, self.expected, self.received)
        return d.line


def normalize_path(path: str) -> str:
    p = path.split("?", 1)[0]
    if "://" in p:
        p = "/" + p.split("://", 1)[1].split("/", 1)[-1]
    return p.rstrip("/") or "/"


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """Message content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _tools_key(r: MatchRequest) -> Any:
    tf = r.history.tools_facts if r.history is not None else None
    if tf is not None:  # the same tools (exactly): the same key
        if tf.match_key is None:
            tf.match_key = _tools_key(MatchRequest(r.method, r.path, r.body))
        return tf.match_key
    tools = _list(r.body.get("tools"))
    out = []
    for t in tools:
        if isinstance(t, dict):
            out.append({k: v for k, v in sorted(t.items()) if k != "cache_control"})
    return out


def _block_types(content: Any) -> list[Any]:
    """``[b["type"] for b in blocks_of(content)]`` without building the blocks."""
    if isinstance(content, str):
        return ["text"]
    if isinstance(content, list):
        return [b.get("type") for b in content if isinstance(b, dict)]
    return []


def _shape_key(r: MatchRequest) -> Any:
    h = r.history
    if h is not None:  # each message's shape, computed once across requests
        return _shapes(h)
    msgs = _list(r.body.get("messages"))
    return [(m.get("role"), _block_types(m.get("content"))) for m in msgs if isinstance(m, dict)]


def _shapes(h: RequestHistory) -> list[tuple[Any, list[Any]]]:
    """``(role, [block types])`` of every object message, from its facts (each computed once)."""
    out = []
    for f, m in zip(h.facts, h.messages, strict=True):
        if f.shape is None:
            if not isinstance(m, dict):
                continue
            f.shape = (m.get("role"), _block_types(m.get("content")))
        out.append(f.shape)
    return out


def _answered_key(r: MatchRequest) -> Any:
    h = r.history
    if h is not None and h.messages and isinstance(h.messages[-1], dict):
        f = h.facts[-1]  # the last message's key, computed once across requests
        if f.match_key is None:
            f.match_key = _answered_of(h.messages[-1])
        return f.match_key
    last = next((m for m in reversed(_list(r.body.get("messages"))) if isinstance(m, dict)), None)
    return _answered_of(last)


def _answered_of(last: Any) -> list[str]:
    if last is None or last.get("role") != "user":
        return []
    return sorted(str(b.get("tool_use_id")) for b in blocks_of(last.get("content"))
                  if b.get("type") == "tool_result")


# --- The tolerant set: API equivalence, stated once as data ----------------------------------
#
# The tolerant set matches every difference the live API answers the same way, and only those.
# Each kind of difference is one :class:`Equivalence` below, inert or meaning-carrying, with what
# it means and its source; the normalisation (:func:`tolerant_tool`) is derived from the table,
# and tests/test_matchers_equivalence.py proves both halves over generated rewrites of every
# corpus request.


@dataclass(frozen=True)
class Equivalence:
    """One kind of difference between two requests, and whether the live API answers alike."""

    #: What differs, in the protocol's words.
    what: str
    #: Where: ``schema`` (a keyword at any schema position of an ``input_schema``), ``tool`` (a
    #: field of a tool definition), ``tools``, ``messages``, ``body``, ``json`` (everywhere).
    where: str
    #: The keywords or fields concerned (empty: an order, or a relation).
    keys: tuple[str, ...]
    #: True: the API answers alike with either (the tolerant set matches); False: it refuses.
    inert: bool
    #: Why, from what the field means.
    why: str
    #: Where that comes from: a PROTOCOL.md section, a seed, a standard, live captures.
    source: str
    #: The matcher (or rule) that compares it; ``by construction`` when nothing compares it.
    judged_by: str = "tools.tolerant"


#: JSON Schema keywords that assert or apply: they decide which inputs are valid (JSON Schema
#: 2020-12 Validation §6, Core §10, and the draft-07 spellings frameworks still send). Any other
#: keyword is an annotation (Validation §9, Core §8.3 ``$comment``, §8.1.1 ``$schema``) or
#: unknown, which "SHOULD be treated as annotations" (Core §6.5).
SCHEMA_ASSERTIONS = frozenset({
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", "properties", "patternProperties", "additionalProperties", "items",
    "prefixItems", "additionalItems", "contains", "propertyNames", "allOf", "anyOf", "oneOf", "not",
    "if", "then", "else", "dependentSchemas", "dependencies", "unevaluatedItems",
    "unevaluatedProperties", "$ref", "$defs", "definitions", "$id", "$anchor", "$dynamicRef",
    "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary",
})
#: The annotation keywords JSON Schema names (Validation §9, §8; Core §8.3, §8.1.1).
SCHEMA_ANNOTATIONS = ("title", "description", "examples", "$comment", "default", "deprecated",
                      "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
                      "contentSchema", "$schema")

EQUIVALENCES: tuple[Equivalence, ...] = (
    # --- inert: the API answers alike -----------------------------------------------------------
    Equivalence(
        "JSON Schema annotation keywords and unknown keywords, at any depth (title, description, "
        "examples, $comment, default, deprecated, readOnly, writeOnly, content*, $schema; "
        "e.g. ruby_llm's `strict: true` inside the schema)", "schema", SCHEMA_ANNOTATIONS, True,
        "they annotate an instance and change no instance's validity: the tool accepts the same "
        "inputs, its callers call it the same way",
        "JSON Schema 2020-12 Validation §9 (meta-data annotations), Core §6.5 (unknown keywords "
        "are annotations), §8.3 ($comment), §8.1.1 ($schema names the dialect); issue 37 (two "
        "frameworks add `description` to every property); real_traffic: description on 145 "
        "schema nodes, title 41, strict 17 (rubyllm), $schema 9, default 7"),
    Equivalence(
        "`additionalProperties: true` or `false` (absent is true)", "schema",
        ("additionalProperties",), True,
        "the object's declared properties, the ones the model fills, are the same; the API does "
        "not validate a tool_use input against input_schema unless the tool is `strict: true` "
        "(which counts)", "issue 23 (pydantic-ai adds false); real_traffic: 227 schema nodes"),
    Equivalence(
        "the order of `required`, of `enum` and of a `type` list", "schema",
        ("required", "enum", "type"), True,
        "each is a set: an instance is valid when it has every required name, equals one enum "
        "value, is one of the types", "JSON Schema 2020-12 Validation §6.5.3, §6.1.2, §6.1.1"),
    Equivalence(
        "key order of any JSON object", "json", (), True,
        "\"An object is an unordered collection of zero or more name/value pairs\"",
        "RFC 8259 §4", "by construction (keys compare as mappings)"),
    Equivalence(
        "tool order in `tools`", "tools", (), True,
        "a tool is named by `name` everywhere the protocol refers to one (tool_use.name, "
        "tool_choice.name, allowed_callers); no part refers to a position",
        "docs/protocol-notes.md §1 (tool_use, caller); issue 23 (pydantic-ai and LangChain list client "
        "tools first)"),
    Equivalence(
        "`\"type\": \"custom\"` on a custom tool (a tool without a type is custom)", "tool",
        ("type",), True, "the SDK's ToolParam `type: Optional[Literal[\"custom\"]]`: the same tool",
        "docs/protocol-notes.md §7 (custom tool definition) [S types/tool_param.py]; LiteLLM sends it"),
    Equivalence(
        "`cache_control` on a tool (and on any block: not compared)", "tool", ("cache_control",),
        True, "prompt caching changes cost and usage, never a turn",
        "docs/protocol-notes.md §2, §3 (optional definition fields) [S]"),
    Equivalence(
        "`eager_input_streaming`", "tool", ("eager_input_streaming",), True,
        "streams a tool_use input in finer input_json_delta parts; the input is the same",
        "SDK ToolParam [S]; issue 23"),
    Equivalence(
        "an explicit default: `strict: false`, `defer_loading: false`, `allowed_callers: "
        "[\"direct\"]` on a custom tool", "tool", ("strict", "defer_loading", "allowed_callers"),
        True, "a field set to the value its absence means",
        "docs/protocol-notes.md §1 (`allowed_callers` accepts \"direct\" (the default)), §2 (optional "
        "fields) [S: strict and defer_loading default to false]"),
    Equivalence(
        "`caller: {\"type\": \"direct\"}` on a resent block, present or omitted", "messages",
        ("caller",), True, "the default caller; `caller` is optional on tool_use and the server "
        "blocks", "docs/protocol-notes.md §1 (caller union) [S]; real_traffic: 82 live resends drop it",
        "by construction (block contents are not matched); rule messages.resent_turn.unchanged"),
    Equivalence(
        "`metadata`, `system`, `max_tokens`, sampling, `stream`, `cache_control` on messages, "
        "the text of messages", "body", ("metadata", "system", "max_tokens", "temperature",
                                         "stream"), True,
        "the replay serves the recorded answer; none changes the protocol of a turn",
        "docs/serve-and-record.md (not compared)", "by construction"),
    Equivalence(
        "text as a string or as text blocks; a run of text blocks", "messages", (), True,
        "MessageParam content is a string or a list of blocks [S]; a run of text blocks reads "
        "as one text", "SDK MessageParam [S]; issue 23", "messages.shape.tolerant"),
    Equivalence(
        "the whole earlier conversation, or a restart with the new question", "messages", (),
        True, "either conversation management asks the same question of the same container",
        "issue 23 (pydantic-ai message_history)", "messages.shape.tolerant"),
    # --- meaning-carrying: still refused ----------------------------------------------------------
    Equivalence("a tool's `name`; a tool missing or added", "tools", ("name",), False,
                "the model calls a tool by name; tool_use.name and tool_choice name it",
                "docs/protocol-notes.md §1, §2 (definitions)"),
    Equivalence("a tool's `type` and version (`code_execution_20250825` vs `_20260120`)", "tool",
                ("type",), False, "another version is another runtime (REPL state, PTC)",
                "docs/protocol-notes.md §2 (versions); code execution docs (Tool versions)"),
    Equivalence("`allowed_callers` (as a set)", "tool", ("allowed_callers",), False,
                "who may call the tool: direct, or code (programmatic tool calling)",
                "docs/protocol-notes.md §1; programmatic tool calling docs (The caller field)"),
    Equivalence("a tool's own `description` (not a schema's)", "tool", ("description",), False,
                "the model reads it as the tool's contract: \"La phrase sur le format de sortie "
                "dans la description de votre outil cesse d'être de la documentation et devient "
                "du code porteur\"", "programmatic tool calling docs (What actually happens)"),
    Equivalence("every other tool option: `strict: true`, `defer_loading: true`, "
                "`input_examples`, `max_uses`, `allowed_domains`, `max_characters`, ...", "tool",
                ("strict", "defer_loading", "input_examples"), False,
                "each changes what the API or the model does with the tool",
                "docs/protocol-notes.md §2, §3 (definition fields); text editor docs (max_characters)"),
    Equivalence("property names, property types, `required` names, `enum` values and every "
                "other assertion keyword (SCHEMA_ASSERTIONS) at any depth", "schema",
                tuple(sorted(SCHEMA_ASSERTIONS)), False,
                "they decide which inputs are valid: another input contract",
                "JSON Schema 2020-12 Validation §6, Core §10"),
    Equivalence("the roles and block types of the messages, in order; the tool_use ids the last "
                "message answers", "messages", (), False,
                "the protocol of the conversation: what was called, what answers it",
                "docs/protocol-notes.md §1 (continuation), §2 (client tool alongside code execution)",
                "messages.shape.tolerant, tool_use_ids.answered"),
    Equivalence("a resent assistant turn's tool blocks: their order, inputs, callers, results",
                "messages", ("input", "caller", "content"), False,
                "the conversation tells the model what it did", "docs/protocol-notes.md §1, §2",
                "rule messages.resent_turn.unchanged"),
    Equivalence("`model`", "body", ("model",), False, "another model answers", "docs/protocol-notes.md §1",
                "model"),
)


def _inert_keys(where: str) -> frozenset[str]:
    return frozenset(k for e in EQUIVALENCES if e.inert and e.where == where for k in e.keys)


#: Schema keywords whose order is not meaning (sets), derived from the table.
_SET_KEYWORDS = frozenset(next(e.keys for e in EQUIVALENCES if e.inert and "required" in e.keys
                               and e.where == "schema"))
#: Tool fields the tolerant set leaves out whatever their value (derived from the table).
TOOL_INERT = frozenset({"cache_control", "eager_input_streaming"}) & _inert_keys("tool")
#: A tool field equal to its default is left out (``allowed_callers`` on a custom tool only).
TOOL_DEFAULTS: Mapping[str, Any] = {"strict": False, "defer_loading": False,
                                    "allowed_callers": ["direct"], "type": "custom"}
assert set(TOOL_DEFAULTS) <= _inert_keys("tool")

_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "not", "if", "then", "else", "contains", "propertyNames",
               "additionalProperties", "unevaluatedProperties", "unevaluatedItems",
               "additionalItems")


def _as_set(values: list[Any]) -> list[Any]:
    return sorted(values, key=lambda v: json.dumps(v, sort_keys=True, default=str))


def _schema(schema: Any, where: str, notes: list[str]) -> Any:
    """``schema`` with only what decides validity: annotation and unknown keywords left out at
    every schema position (never a property *name*: those are keys of ``properties``),
    ``additionalProperties`` true or false left out, sets sorted."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k not in SCHEMA_ASSERTIONS:
            notes.append(f"{where}.{k}")
        elif k == "additionalProperties" and isinstance(v, bool):
            notes.append(f"{where}.additionalProperties: {json.dumps(v)}")
        elif k in _SET_KEYWORDS and isinstance(v, list):
            out[k] = _as_set(v)
            if out[k] != v:
                notes.append(f"{where}.{k} order")
        elif k in _SUBSCHEMA_MAPS and isinstance(v, dict):
            out[k] = {n: _schema(sub, f"{where}.{k}.{n}", notes) for n, sub in v.items()}
        elif k in _SUBSCHEMA_LISTS and isinstance(v, list):
            out[k] = [_schema(sub, f"{where}.{k}[{i}]", notes) for i, sub in enumerate(v)]
        elif k in _SUBSCHEMAS:
            out[k] = ([_schema(sub, f"{where}.{k}[{i}]", notes) for i, sub in enumerate(v)]
                      if isinstance(v, list) else _schema(v, f"{where}.{k}", notes))
        else:
            out[k] = v
    return out


def _custom(tool: Mapping[str, Any]) -> bool:
    return tool.get("type") in (None, "custom")


def tolerant_tool(tool: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A tool definition with only what carries meaning (:data:`EQUIVALENCES`), and what was
    left out (``input_schema.title``, ``type: "custom"``, ...)."""
    notes: list[str] = []
    out: dict[str, Any] = {}
    custom = _custom(tool)
    for k, v in tool.items():
        if k in TOOL_INERT:
            if k != "cache_control":  # the exact set ignores it too: nothing to report
                notes.append(k)
        elif k in TOOL_DEFAULTS and v == TOOL_DEFAULTS[k] and (custom or k != "allowed_callers"):
            notes.append(f"{k}: {json.dumps(v)}")
        elif k == "input_schema":
            out[k] = _schema(v, k, notes)
        elif k == "allowed_callers" and isinstance(v, list):
            out[k] = _as_set(v)
            if out[k] != v:
                notes.append("allowed_callers order")
        else:
            out[k] = v
    return out, notes


def _named_tools(r: MatchRequest) -> list[tuple[str, dict[str, Any], list[str]]]:
    return [(str(t.get("name")), *tolerant_tool(t)) for t in _list(r.body.get("tools"))
            if isinstance(t, dict)]


def _tolerant_tools_key(r: MatchRequest) -> Any:
    tf = r.history.tools_facts if r.history is not None else None
    if tf is not None:  # the same tools (exactly): the same key
        if tf.tolerant_key is None:
            tf.tolerant_key = _tolerant_tools_key(MatchRequest(r.method, r.path, r.body))
        return tf.tolerant_key
    return sorted(((name, tool) for name, tool, _ in _named_tools(r)),
                  key=lambda nt: (nt[0], json.dumps(nt[1], sort_keys=True, default=str)))


def _explain_tools(recorded: MatchRequest, incoming: MatchRequest) -> list[str]:
    if _tools_key(recorded) == _tools_key(incoming):
        return []
    rec, inc = _named_tools(recorded), _named_tools(incoming)
    out = []
    if [n for n, _, _ in rec] != [n for n, _, _ in inc]:
        out.append(f"tools: order (recorded {[n for n, _, _ in rec]}, "
                   f"received {[n for n, _, _ in inc]})")
    rec_notes = {n: set(notes) for n, _, notes in rec}
    for name, _, notes in inc:
        mine, theirs = set(notes), rec_notes.get(name, set())
        out += [f"tools[{name}]: {note} (received only)" for note in sorted(mine - theirs)]
        out += [f"tools[{name}]: {note} (recorded only)" for note in sorted(theirs - mine)]
    return out


def _tolerant_shape_key(r: MatchRequest) -> Any:
    """Each message's role and block types, a run of text blocks counted as one (a string and a
    list of text blocks are the same content)."""
    out = []
    for role, types in _shape_key(r):
        collapsed: list[Any] = []
        for t in types:
            if not (t == "text" and collapsed and collapsed[-1] == "text"):
                collapsed.append(t)
        out.append((role, tuple(collapsed)))
    return out


def _starts_a_turn(message_shape: Any) -> bool:
    """A user message asking something (no ``tool_result``): where a conversation may restart."""
    role, types = message_shape
    return role == "user" and "tool_result" not in types


def _history_split(recorded_key: Any, incoming_key: Any) -> int | None:
    """How many earlier messages one side sends that the other leaves out, restarting with the
    new question (the rest being equal); None when they are not one conversation that way."""
    if len(recorded_key) == len(incoming_key):
        return None
    short, long = sorted((recorded_key, incoming_key), key=len)
    cut = len(long) - len(short)
    if not short or long[cut:] != short or not _starts_a_turn(short[0]):
        return None
    return cut if long[cut - 1][0] == "assistant" else None


def _same_conversation(recorded_key: Any, incoming_key: Any) -> bool:
    return _history_split(recorded_key, incoming_key) is not None


def _explain_shape(recorded: MatchRequest, incoming: MatchRequest) -> list[str]:
    exact_rec, exact_inc = _shape_key(recorded), _shape_key(incoming)
    if exact_rec == exact_inc:
        return []
    rec, inc = _tolerant_shape_key(recorded), _tolerant_shape_key(incoming)
    out = []
    cut = _history_split(rec, inc)
    if cut is not None:
        out.append(f"messages: the recording restarted the conversation with the new question "
                   f"and the request continues the whole history ({cut} earlier message(s))"
                   if len(inc) > len(rec) else
                   f"messages: the recording continued the whole history and the request "
                   f"restarts the conversation with the new question ({cut} earlier message(s) "
                   "left out)")
    n = min(len(exact_rec), len(exact_inc))
    if exact_rec[len(exact_rec) - n:] != exact_inc[len(exact_inc) - n:]:
        out.append("messages: a run of text blocks counted as one text block")
    return out


# --- Where two requests differ (one line each: simulator.differences) -----------------------

def _exact_tools(r: MatchRequest) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if k != "cache_control"}
            for t in _list(r.body.get("tools")) if isinstance(t, dict)]


def _diff_tool_lists(rec: list[tuple[str, dict[str, Any]]], inc: list[tuple[str, dict[str, Any]]],
                     by_name: bool) -> Difference | None:
    """The first difference between two lists of ``(name, tool)``: by position, or as sets by
    name (``by_name``), each tool named by its ``name`` in the path."""
    if not by_name:
        for i, ((rn, rt), (n, t)) in enumerate(zip(rec, inc, strict=False)):
            if rn != n:
                return Difference(f"tools[{i}].name", rn, n)
            d = first_difference(rt, t, f"tools[{label(n)}]")
            if d is not None:
                return d
        k = min(len(rec), len(inc))
        if len(rec) > k:
            return Difference(f"tools[{label(rec[k][0])}]", rec[k][1], None, "received")
        if len(inc) > k:
            return Difference(f"tools[{label(inc[k][0])}]", None, inc[k][1], "recorded")
        return None
    theirs: dict[str, list[dict[str, Any]]] = {}
    for n, t in inc:
        theirs.setdefault(n, []).append(t)
    mine: dict[str, list[dict[str, Any]]] = {}
    for n, t in rec:
        mine.setdefault(n, []).append(t)
    for n, tools in mine.items():
        others = theirs.get(n, [])
        for i, t in enumerate(tools):
            where = f"tools[{label(n)}]" + (f"#{i + 1}" if i else "")
            if i >= len(others):
                return Difference(where, t, None, "received")
            d = first_difference(t, others[i], where)
            if d is not None:
                return d
    for n, others in theirs.items():
        k = len(mine.get(n, []))
        if len(others) > k:
            return Difference(f"tools[{label(n)}]" + (f"#{k + 1}" if k else ""), None, others[k],
                              "recorded")
    return None


def _diff_tools(recorded: MatchRequest, incoming: MatchRequest) -> Difference | None:
    return _diff_tool_lists([(str(t.get("name")), t) for t in _exact_tools(recorded)],
                            [(str(t.get("name")), t) for t in _exact_tools(incoming)], False)


def _diff_tolerant_tools(recorded: MatchRequest, incoming: MatchRequest) -> Difference | None:
    return _diff_tool_lists([(n, t) for n, t, _ in _named_tools(recorded)],
                            [(n, t) for n, t, _ in _named_tools(incoming)], True)


def _message_blocks(r: MatchRequest, collapse: bool) -> list[tuple[Any, list[tuple[int, Any]]]]:
    """Each object message's role and ``(index, type)`` of its blocks (a run of text blocks as
    its first one when ``collapse``); the index is the block's own in ``content``."""
    out = []
    for m in _list(r.body.get("messages")):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        types = _block_types(content)
        blocks: list[tuple[int, Any]] = []
        for i, t in enumerate(types):
            if not (collapse and t == "text" and blocks and blocks[-1][1] == "text"):
                blocks.append((i, t))
        out.append((m.get("role"), blocks))
    return out


def _message_summary(role: Any, blocks: list[tuple[int, Any]]) -> dict[str, Any]:
    return {"role": role, "content": [t for _, t in blocks]}


def _diff_shapes(recorded: MatchRequest, incoming: MatchRequest, collapse: bool
                 ) -> Difference | None:
    rec, inc = _message_blocks(recorded, collapse), _message_blocks(incoming, collapse)
    for i, ((rr, rb), (r, b)) in enumerate(zip(rec, inc, strict=False)):
        if rr != r:
            return Difference(f"messages[{i}].role", rr, r)
        for (_, rt), (j, t) in zip(rb, b, strict=False):
            if rt != t:
                return Difference(f"messages[{i}].content[{j}].type", rt, t)
        k = min(len(rb), len(b))
        if len(rb) > k:
            return Difference(f"messages[{i}].content[{rb[k][0]}]", {"type": rb[k][1]}, None,
                              "received")
        if len(b) > k:
            return Difference(f"messages[{i}].content[{b[k][0]}]", None, {"type": b[k][1]},
                              "recorded")
    k = min(len(rec), len(inc))
    if len(rec) > k:
        return Difference(f"messages[{k}]", _message_summary(*rec[k]), None, "received")
    if len(inc) > k:
        return Difference(f"messages[{k}]", None, _message_summary(*inc[k]), "recorded")
    return None


def _diff_answered(recorded: MatchRequest, incoming: MatchRequest) -> Difference | None:
    want, got = _answered_key(recorded), _answered_key(incoming)
    if want == got:
        return None
    n = sum(1 for m in _list(incoming.body.get("messages")) if isinstance(m, dict))
    return Difference(f"messages[{max(n - 1, 0)}].content[].tool_use_id", want, got)


TOLERANT_TOOLS = Matcher(
    "tools.tolerant", _tolerant_tools_key,
    "tool definitions as a set by name, each with only what carries meaning (EQUIVALENCES): "
    "annotation and unknown schema keywords, additionalProperties true/false, the order of "
    "sets, type \"custom\", cache_control, eager_input_streaming and explicit defaults left out",
    explain=_explain_tools, diff=_diff_tolerant_tools)
TOLERANT_MESSAGES_SHAPE = Matcher(
    "messages.shape.tolerant", _tolerant_shape_key,
    "messages.shape, a run of text blocks as one, and the whole history or a restart with the "
    "new question alike", same=_same_conversation, explain=_explain_shape,
    diff=lambda rec, inc: _diff_shapes(rec, inc, True))


METHOD = Matcher("method", lambda r: r.method, "HTTP method")
PATH = Matcher("path", lambda r: r.path, "request path without query")
MODEL = Matcher("model", lambda r: r.body.get("model"), "body.model")
TOOLS = Matcher("tools", _tools_key, "tool definitions (cache_control ignored)",
                diff=_diff_tools)
MESSAGES_SHAPE = Matcher("messages.shape", _shape_key,
                         "role and block types of every message",
                         diff=lambda rec, inc: _diff_shapes(rec, inc, False))
TOOL_USE_IDS_ANSWERED = Matcher("tool_use_ids.answered", _answered_key,
                                "tool_use ids the last user message answers (sorted)",
                                diff=_diff_answered)
STREAM = Matcher("stream", lambda r: bool(r.body.get("stream", False)), "body.stream (optional)")
SYSTEM = Matcher("system", lambda r: r.body.get("system"), "body.system (optional)")
TOOL_CHOICE = Matcher("tool_choice", lambda r: r.body.get("tool_choice"), "body.tool_choice (optional)")
MESSAGES = Matcher("messages", lambda r: r.body.get("messages"), "whole messages, contents included (optional)",
                   diff=lambda rec, inc: first_difference(rec.body.get("messages"),
                                                          inc.body.get("messages"), "messages"))

DEFAULT_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, MODEL, TOOLS, MESSAGES_SHAPE,
                                         TOOL_USE_IDS_ANSWERED)

#: The protocol, not a client's formatting (see "The tolerant set" above): ``tools.tolerant`` and
#: ``messages.shape.tolerant`` in place of ``tools`` and ``messages.shape``.
TOLERANT_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, MODEL, TOLERANT_TOOLS,
                                          TOLERANT_MESSAGES_SHAPE, TOOL_USE_IDS_ANSWERED)
#: Matcher sets by name: ``Simulator(matchers="tolerant")``, ``tooluse serve --matching tolerant``.
MATCHER_SETS: Mapping[str, tuple[Matcher, ...]] = {"exact": DEFAULT_MATCHERS,
                                                   "tolerant": TOLERANT_MATCHERS}
ALL_MATCHERS: Mapping[str, Matcher] = {m.name: m for m in (
    METHOD, PATH, MODEL, TOOLS, MESSAGES_SHAPE, TOOL_USE_IDS_ANSWERED, STREAM, SYSTEM,
    TOOL_CHOICE, MESSAGES, TOLERANT_TOOLS, TOLERANT_MESSAGES_SHAPE)}


def matcher_set(name: str) -> tuple[Matcher, ...]:
    """The matcher set called ``name``; an unknown name raises ``KeyError`` listing the known ones."""
    if name not in MATCHER_SETS:
        raise KeyError(f"unknown matcher set {name!r}; known: {', '.join(MATCHER_SETS)}")
    return MATCHER_SETS[name]


def resolve_matchers(matchers: str | Iterable[Matcher]) -> tuple[Matcher, ...]:
    """A matcher set's name or matchers, as a tuple of matchers."""
    return matcher_set(matchers) if isinstance(matchers, str) else tuple(matchers)


def normalised(matchers: Iterable[Matcher], recorded: MatchRequest,
               incoming: MatchRequest) -> list[str]:
    """What the tolerant matchers among ``matchers`` normalised to match this pair."""
    return [line for m in matchers if m.explain is not None
            for line in m.explain(recorded, incoming)]


def matchers_by_name(names: Iterable[str]) -> tuple[Matcher, ...]:
    """Matchers picked by name; an unknown name raises ``KeyError`` listing the known ones."""
    out = []
    for n in names:
        if n not in ALL_MATCHERS:
            raise KeyError(f"unknown matcher {n!r}; known: {', '.join(ALL_MATCHERS)}")
        out.append(ALL_MATCHERS[n])
    return tuple(out)


def difference(matcher: Matcher, recorded: MatchRequest, incoming: MatchRequest,
               ) -> Difference:
    """Where ``incoming`` first differs from ``recorded`` on ``matcher`` (which refused it): the
    path in the request's own words and both values, one line with ``.line``."""
    plain_rec = MatchRequest(recorded.method, recorded.path, recorded.body)
    plain_inc = MatchRequest(incoming.method, incoming.path, incoming.body)
    found = matcher.diff(plain_rec, plain_inc) if matcher.diff is not None else None
    if found is not None:
        return found
    want, got = matcher.key(plain_rec), matcher.key(plain_inc)
    return first_difference(want, got, matcher.name) or Difference(matcher.name, want, got)


def first_failure(matchers: Iterable[Matcher], recorded: MatchRequest,
                  incoming: MatchRequest) -> MatchFailure | None:
    """The first matcher on which ``incoming`` differs from ``recorded`` (with where it differs:
    :attr:`MatchFailure.difference`), or None."""
    for m in matchers:
        want, got = m.key(recorded), m.key(incoming)
        if not m.agrees(want, got):
            return MatchFailure(m.name, want, got, difference(m, recorded, incoming))
    return None
