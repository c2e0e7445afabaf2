"""Named request matchers: which recorded exchange an incoming request corresponds to.

A :class:`Matcher` has a stable ``name`` and a ``key`` function that extracts a comparable value
from a request (method, path, parsed JSON body). Two requests match on a matcher when their keys
are equal; the engine reports the first matcher that differs, with both values::

    Matcher("model", lambda r: r.body.get("model"))

Defaults (:data:`DEFAULT_MATCHERS`): ``method``, ``path``, ``model``, ``tools``, ``messages.shape``
(roles and block types), ``tool_use_ids.answered``. Tool result *contents* and ids a client
generates are never compared by default; pass your own tuple to compare more or less, or pick by
name with :func:`matchers_by_name`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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


@dataclass(frozen=True)
class MatchFailure:
    matcher: str
    expected: Any
    received: Any


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


METHOD = Matcher("method", lambda r: r.method, "HTTP method")
PATH = Matcher("path", lambda r: r.path, "request path without query")
MODEL = Matcher("model", lambda r: r.body.get("model"), "body.model")
TOOLS = Matcher("tools", _tools_key, "tool definitions (cache_control ignored)")
MESSAGES_SHAPE = Matcher("messages.shape", _shape_key,
                         "role and block types of every message")
TOOL_USE_IDS_ANSWERED = Matcher("tool_use_ids.answered", _answered_key,
                                "tool_use ids the last user message answers (sorted)")
STREAM = Matcher("stream", lambda r: bool(r.body.get("stream", False)), "body.stream (optional)")
SYSTEM = Matcher("system", lambda r: r.body.get("system"), "body.system (optional)")
TOOL_CHOICE = Matcher("tool_choice", lambda r: r.body.get("tool_choice"), "body.tool_choice (optional)")
MESSAGES = Matcher("messages", lambda r: r.body.get("messages"), "whole messages, contents included (optional)")

DEFAULT_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, MODEL, TOOLS, MESSAGES_SHAPE,
                                         TOOL_USE_IDS_ANSWERED)
ALL_MATCHERS: Mapping[str, Matcher] = {m.name: m for m in (
    METHOD, PATH, MODEL, TOOLS, MESSAGES_SHAPE, TOOL_USE_IDS_ANSWERED, STREAM, SYSTEM,
    TOOL_CHOICE, MESSAGES)}


def matchers_by_name(names: Iterable[str]) -> tuple[Matcher, ...]:
    """Matchers picked by name; an unknown name raises ``KeyError`` listing the known ones."""
    out = []
    for n in names:
        if n not in ALL_MATCHERS:
            raise KeyError(f"unknown matcher {n!r}; known: {', '.join(ALL_MATCHERS)}")
        out.append(ALL_MATCHERS[n])
    return tuple(out)


def first_failure(matchers: Iterable[Matcher], recorded: MatchRequest,
                  incoming: MatchRequest) -> MatchFailure | None:
    """The first matcher on which ``incoming`` differs from ``recorded``, or None."""
    for m in matchers:
        want, got = m.key(recorded), m.key(incoming)
        if want != got:
            return MatchFailure(m.name, want, got)
    return None
