"""What the engine already knows about the messages a request resends.

An agent loop resends the whole conversation with every request, so a request of turn N carries
the N-1 turns the simulator judged already. :class:`History` remembers facts about each message,
keyed by the message's exact encoding (``marshal``: types are kept, so ``1``, ``1.0`` and ``True``
differ, and so does key order; a different encoding is only a cache miss), and the messages of
the last request that passed every rule. The engine and the rules use it to judge only what is
new; every answer stays the one a full judgement gives:

- nesting depth: the body's depth is computed from each message's (measured once);
- ``request.schema``: message items validate independently (``messages.items``), so only the
  messages not yet known valid are validated, with the rest of the body;
- pairwise conversation rules (``messages.tool_result.*``, ``messages.tool_use.*``): pairs of
  combined messages lying entirely inside the prefix shared with the last request that passed
  every rule (same tools) passed then and pass now; the rules start after them;
- the state's answered tool_use ids per message.

Facts are pure functions of a message's content, so they are kept process-wide (every
simulator of the process shares them: the tests of a suite replaying the same cassettes judge a
message once), bounded in count and bytes (oldest forgotten first; :func:`clear_facts` forgets
all). What the last passing request established is per :class:`History` (one per simulator).
"""

from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_LIMIT = 65536
#: Version 2: no back-references (version 3+ writes one where an object is shared, so the same
#: content could encode differently from one request to the next).
_MARSHAL_VERSION = 2
#: Messages whose encoding is larger are judged every time (keeps the memory bounded).
MAX_KEY_BYTES = 1 << 20
#: Total encoded bytes the facts are kept for.
MAX_TOTAL_BYTES = 64 << 20


@dataclass(slots=True, eq=False)
class MessageFacts:
    """Facts about one message, each computed at most once (None: not known yet)."""

    depth: int | None = None
    #: Valid against ``messages.items`` in lenient mode (True only; a failure is never cached).
    valid: bool = False
    answered: frozenset[str] | None = None
    #: ``(role, [block types])``, what the ``messages.shape`` matcher compares.
    shape: tuple[Any, list[Any]] | None = None
    #: The ``tools`` matcher's key (for the facts of a ``tools`` value); for a message, the
    #: ``tool_use_ids.answered`` matcher's key were it the last message.
    match_key: list[Any] | None = None
    #: The ``tools.tolerant`` matcher's key (for the facts of a ``tools`` value).
    tolerant_key: list[Any] | None = None
    #: For a ``tools`` value: what rules derive from it, by name (``RuleContext.from_tools``).
    derived: dict[str, Any] | None = None


def _key(value: Any) -> bytes | None:
    try:
        key = marshal.dumps(value, _MARSHAL_VERSION)
    except ValueError:  # an unmarshallable or too deeply nested value: never cached
        return None
    return key if len(key) <= MAX_KEY_BYTES else None


@dataclass(slots=True)
class RequestHistory:
    """One request's messages, their keys and facts, and how much it shares with the last
    request that passed every rule."""

    messages: list[Any]
    #: Each message's exact encoding (its JSON text, or its ``marshal`` bytes); None: none.
    keys: list[Any]
    facts: list[MessageFacts]
    #: Leading messages identical to the last request that passed every rule (same rules).
    shared: int = 0
    #: The tools are identical to that request's.
    same_tools: bool = False
    tools_key: bytes | None = None
    #: The last passing request's combined messages (``RuleContext.messages``) and, per raw
    #: message, its combined index: the prefix is reused instead of combined again.
    prev_combined: list[dict[str, Any]] | None = None
    prev_combined_of: list[int] | None = None
    #: Depth of ``tools`` (cached with the message facts).
    tools_facts: MessageFacts | None = None
    #: What the definition rules read (tools, model, tool_choice, betas), encoded; and whether
    #: it equals the last passing request's (those rules passed it, so they pass this one).
    definitions_key: bytes | None = None
    same_definitions: bool = False


class FactStore:
    """Facts by message encoding, bounded in count and bytes (oldest forgotten first)."""

    def __init__(self, limit: int = DEFAULT_LIMIT, max_bytes: int = MAX_TOTAL_BYTES) -> None:
        self.limit, self.max_bytes = limit, max_bytes
        #: Oldest first (an OrderedDict: evicting from the front of a plain dict leaves holes that
        #: make every later eviction slower).
        self.facts: OrderedDict[bytes | str, MessageFacts] = OrderedDict()
        self.bytes = 0
        self._lock = threading.Lock()

    def add(self, k: bytes | str) -> MessageFacts:
        with self._lock:  # simulators in several threads may share the store
            f = self.facts.get(k)
            if f is None:
                store = self.facts
                while store and (len(store) >= self.limit or self.bytes + len(k) > self.max_bytes):
                    old, _ = store.popitem(last=False)
                    self.bytes -= len(old)
                f = store[k] = MessageFacts()
                self.bytes += len(k)
            return f

    def clear(self) -> None:
        with self._lock:
            self.facts.clear()
            self.bytes = 0


#: The process-wide store (see the module docstring).
FACTS = FactStore()


class _Bounded(set[tuple[tuple[str, ...], bytes]]):
    """A set that forgets everything once it holds ``limit`` items (definitions are few)."""

    def __init__(self, limit: int = 4096) -> None:
        super().__init__()
        self.limit = limit

    def add(self, item: tuple[tuple[str, ...], bytes]) -> None:
        if len(self) >= self.limit:
            self.clear()
        super().add(item)


#: ``(rule ids, definitions key)`` of every request that passed all those rules, process-wide:
#: the definition rules (tools, model, tool_choice, betas: :data:`simulator.rules.
#: DEFINITION_RULES`) read nothing else, so they pass any request with the same definitions.
PASSED_DEFINITIONS = _Bounded()


class BoundedStore:
    """A process-wide memo, oldest entry forgotten first, bounded in count and (``size``: an
    entry's weight, e.g. the bytes its key holds) in total size. A key already stored keeps its
    value: what is stored is a pure function of the key."""

    def __init__(self, limit: int, *, max_size: int | None = None,
                 size: Callable[[Any], int] | None = None) -> None:
        self.limit, self.max_size, self._size = limit, max_size, size
        self.entries: OrderedDict[Any, Any] = OrderedDict()
        self.total = 0
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        return self.entries.get(key)

    def put(self, key: Any, value: Any) -> None:
        size = self._size(key) if self._size is not None else 0
        if self.max_size is not None and size > self.max_size // 8:
            return  # one entry may not crowd out the others
        with self._lock:
            store = self.entries
            if key in store:
                return
            while store and (len(store) >= self.limit or (
                    self.max_size is not None and self.total + size > self.max_size)):
                old, _ = store.popitem(last=False)
                self.total -= self._size(old) if self._size is not None else 0
            store[key] = value
            self.total += size

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self.total = 0


#: The rules' verdicts on whole requests, by :func:`verdict_key`: ``(violations, notes)``.
#: Rules are pure functions of the request's body, its ``anthropic-beta`` header and the
#: simulator's state; with a blank state (``SimState.blank()``: nothing a rule reads from it) a
#: request identical to one judged before, under the same rules, gets the same verdict: a replay
#: suite that drives the same conversation again (other subjects, other tests, a second run) has
#: each request judged once per process.
VERDICTS = BoundedStore(8192)

#: What the engine derived from a request body it has seen, by the body's exact bytes, the
#: ``anthropic-beta`` header and the rules: ``(verdict key, matcher keys by key function)``
#: (pure functions of the body), so an identical request skips the per-message analysis and
#: the matcher keys. Bounded to 32 MB of bodies.
SEEN = BoundedStore(4096, max_size=32 << 20, size=lambda key: len(key[0]))


def verdict_key(req: RequestHistory, body: Mapping[str, Any],
                rules: tuple[str, ...]) -> tuple[Any, ...] | None:
    """What a whole-request verdict depends on, the state aside: the rules, the definitions
    (tools, model, tool_choice, betas, ``anthropic-beta``), every message's encoding and the rest
    of the body. None when some part has no encoding (never cached)."""
    if req.definitions_key is None or None in req.keys:
        return None
    rest = _key([(k, v) for k, v in body.items() if k != "messages" and k != "tools"])
    if rest is None:
        return None
    return (rules, req.definitions_key, rest, *req.keys)


def clear_facts() -> None:
    """Forget every message fact and verdict (e.g. to measure a cold engine)."""
    FACTS.clear()
    VERDICTS.clear()
    PASSED_DEFINITIONS.clear()
    SEEN.clear()


class History:
    """What one simulator knows about resent messages; see the module docstring."""

    def __init__(self, store: FactStore | None = None) -> None:
        self._store = store if store is not None else FACTS
        self._last_keys: list[Any] = []
        self._last_tools: bytes | None = None
        self._last_rules: tuple[str, ...] = ()
        self._last_combined: tuple[list[dict[str, Any]], list[int]] | None = None
        self._last_definitions: bytes | None = None
        #: Share what passed with every simulator of the process (:data:`PASSED_DEFINITIONS`):
        #: only for rules known by id (the registered rule objects).
        self.process_wide = True

    def analyse(self, body: Mapping[str, Any], rules: Sequence[str] = (),
                headers: Mapping[str, str] | None = None,
                texts: Sequence[str] | None = None) -> RequestHistory | None:
        """The request's messages with their facts (None when ``messages`` is not a list).
        ``headers``: the request's, for the definitions key (without them there is none).
        ``texts``: each message's exact JSON text (:mod:`simulator.bodies`), used as its key
        instead of its ``marshal`` encoding (both are exact: the same key, the same value)."""
        msgs = body.get("messages")
        if not isinstance(msgs, list):
            return None
        keys: list[Any]
        if texts is not None and len(texts) == len(msgs):
            keys = texts if isinstance(texts, list) else list(texts)
            if sum(map(len, keys)) > MAX_KEY_BYTES:
                keys = [k if len(k) <= MAX_KEY_BYTES else None for k in keys]
        else:
            keys = self._encoded(msgs)
        get = self._store.facts.get
        facts: list[MessageFacts] = [get(k) for k in keys]  # type: ignore[misc]
        if None in facts:
            facts = [f if f is not None else self._facts_for(k) for f, k in zip(facts, keys, strict=True)]
        tools = body.get("tools")
        tools_key = _key(tools) if tools is not None else None
        shared = 0
        if tuple(rules) == self._last_rules:
            last = self._last_keys
            n = min(len(keys), len(last))
            if n and keys[:n] == last[:n] and None not in last[:n]:  # the usual case, in C
                shared = n
            else:
                while shared < n and keys[shared] is not None and keys[shared] == last[shared]:
                    shared += 1
        req = RequestHistory(msgs, keys, facts, shared,
                             tools_key is not None and tools_key == self._last_tools, tools_key)
        if shared and self._last_combined is not None:
            req.prev_combined, req.prev_combined_of = self._last_combined
        if tools_key is not None:
            req.tools_facts = self._facts_for(b"tools:" + tools_key)
        if headers is not None:
            rest = _key((body.get("model"), body.get("tool_choice"), body.get("betas"),
                         headers.get("anthropic-beta")))
            if rest is not None and (tools_key is not None or tools is None):
                req.definitions_key = (tools_key or b"") + b"|" + rest
                req.same_definitions = (
                    (req.definitions_key == self._last_definitions
                     and tuple(rules) == self._last_rules)
                    or (self.process_wide
                        and (tuple(rules), req.definitions_key) in PASSED_DEFINITIONS))
        return req

    @staticmethod
    def _encoded(msgs: list[Any]) -> list[Any]:
        try:
            raw = [marshal.dumps(m, _MARSHAL_VERSION) for m in msgs]
        except ValueError:  # something not encodable: judge message by message
            return [_key(m) for m in msgs]
        if sum(map(len, raw)) <= MAX_KEY_BYTES:
            return raw
        return [k if len(k) <= MAX_KEY_BYTES else None for k in raw]

    def _facts_for(self, k: bytes | str | None) -> MessageFacts:
        if k is None:
            return MessageFacts()  # not cached: judged every time
        f = self._store.facts.get(k)
        return f if f is not None else self._store.add(k)

    def passed(self, req: RequestHistory, rules: Sequence[str],
               combined: tuple[list[dict[str, Any]], list[int]] | None = None) -> None:
        """``req`` passed every rule in ``rules``: its messages become the known-good prefix.
        ``combined``: its combined messages and raw -> combined index map, when computed (and
        every message is an object)."""
        self._last_keys = req.keys
        self._last_tools = req.tools_key
        self._last_rules = tuple(rules)
        self._last_combined = combined
        self._last_definitions = req.definitions_key
        if req.definitions_key is not None and self.process_wide and not req.same_definitions:
            PASSED_DEFINITIONS.add((tuple(rules), req.definitions_key))


def shape_of(message: Any) -> tuple[Any, list[Any]]:
    """A message's ``(role, [block types])``."""
    content = message.get("content")
    if isinstance(content, str):
        return message.get("role"), ["text"]
    if isinstance(content, list):
        return message.get("role"), [b.get("type") for b in content if isinstance(b, dict)]
    return message.get("role"), []


def shapes(req: RequestHistory) -> list[tuple[Any, list[Any]]]:
    """:func:`shape_of` of every object message, each computed once across requests."""
    return [f.shape if f.shape is not None else _shape(f, m)
            for f, m in zip(req.facts, req.messages, strict=True) if isinstance(m, dict)]


def _shape(f: MessageFacts, m: Any) -> tuple[Any, list[Any]]:
    f.shape = shape_of(m)
    return f.shape


def depth_of(value: Any, limit: int) -> int:
    """How deeply ``value`` nests (containers only; iterative, stops past ``limit``)."""
    level = [value] if isinstance(value, dict | list) else []
    d = 0
    while level:
        d += 1
        if d > limit:
            return d
        nxt: list[Any] = []
        for node in level:
            nxt += [v for v in (node.values() if isinstance(node, dict) else node)
                    if isinstance(v, dict | list)]
        level = nxt
    return d


def _measure(f: MessageFacts, m: Any, limit: int) -> int:
    f.depth = depth_of(m, limit)
    return f.depth


def body_depth(body: Any, req: RequestHistory | None, limit: int) -> int:
    """The depth of ``body`` (as :func:`depth_of`), reusing each message's known depth."""
    if req is None or not isinstance(body, dict):
        return depth_of(body, limit)
    deepest = max([f.depth if f.depth is not None else _measure(f, m, limit)
                   for f, m in zip(req.facts, req.messages, strict=True)], default=0)
    messages_depth = 1 + deepest  # the messages list itself
    rest = 0
    for k, v in body.items():
        if k == "messages" or not isinstance(v, dict | list):
            continue
        tf = req.tools_facts if k == "tools" else None
        if tf is None:
            rest = max(rest, depth_of(v, limit))
        else:
            if tf.depth is None:
                tf.depth = depth_of(v, limit)
            rest = max(rest, tf.depth)
    return 1 + max(messages_depth, rest)
