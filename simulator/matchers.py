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
(:data:`TOLERANT_MATCHERS`), which judges the protocol rather than a client's formatting: tools as
a set by name with schema noise normalised, and either conversation management (a later turn that
restarts with only the new question, or continues the whole history). A matcher may relate keys
by something other than equality (``same``) and say what it normalised for a pair it accepted
(``explain``); the engine reports that with the exchange it serves.
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


# --- The tolerant set ------------------------------------------------------------------------
#
# What frameworks change in a request without changing the protocol (issue 23; evidence in the
# real traffic they send): the order of the tools (pydantic-ai and LangChain list client tools
# first), JSON Schema noise in ``input_schema`` (``additionalProperties: false`` from pydantic,
# ``$schema`` from zod, ``title`` from pydantic models), ``"type": "custom"`` on a custom tool
# (LiteLLM), and tool options that change no turn of the conversation (``cache_control``,
# ``strict``, ``eager_input_streaming``). A tool's ``type`` (and so its version), ``name``,
# ``allowed_callers`` (as a set), input properties and every other option still count.

#: Tool fields a tolerant comparison ignores (documented as optional; they change no turn).
TOOL_NOISE = ("cache_control", "strict", "eager_input_streaming")
#: Schema keywords that never change what input is valid for the tool's callers here.
SCHEMA_NOISE = ("$schema", "title")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "not", "if", "then", "else", "contains", "propertyNames",
               "additionalProperties", "unevaluatedProperties", "unevaluatedItems")


def _schema(schema: Any, where: str, notes: list[str]) -> Any:
    """``schema`` without its noise keywords (at every level, never inside a property *name*)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in SCHEMA_NOISE:
            notes.append(f"{where}.{k}")
        elif k == "additionalProperties" and v is False:
            notes.append(f"{where}.additionalProperties: false")
        elif k == "required" and isinstance(v, list):
            out[k] = sorted(v, key=str)
            if out[k] != v:
                notes.append(f"{where}.required order")
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


def tolerant_tool(tool: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A tool definition without formatting noise, and what was left out (``input_schema.title``,
    ``type: "custom"``, ...)."""
    notes: list[str] = []
    out: dict[str, Any] = {}
    for k, v in tool.items():
        if k in TOOL_NOISE:
            if k != "cache_control":  # the exact set ignores it too: nothing to report
                notes.append(k)
        elif k == "type" and v == "custom":
            notes.append('type: "custom"')
        elif k == "input_schema":
            out[k] = _schema(v, k, notes)
        elif k == "allowed_callers" and isinstance(v, list):
            out[k] = sorted(v, key=str)
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
    "tool definitions as a set by name; schema noise ($schema, title, additionalProperties: "
    "false, required order), type \"custom\", cache_control, strict, eager_input_streaming "
    "ignored", explain=_explain_tools, diff=_diff_tolerant_tools)
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
