"""What the API remembers between requests: containers, pending calls, paused turns.

:class:`SimState` is updated by the engine from the responses it actually served (so a client
that deviates is judged against what it was told) and read by the rules:

- ``containers``: :class:`Container` by id; created when a served response carries
  ``container``; expires 30 days after creation; checkpointed after about 5 minutes idle and
  restored on the next use within 30 days; ``expires_at`` is a shorter rolling value
  (seed 000 § Penggunaan ulang container; PROTOCOL.md §2 Container object).
- ``pending_calls``: programmatic tool calls (``tool_use`` with a non-direct ``caller``) waiting for
  their ``tool_result``, by tool_use id.
- ``paused_turns``: the content of each conversation's last ``pause_turn`` response, which must be
  resent (a conversation is known by its first message; ``paused`` is the latest one).
- ``pending_server_tools``: ``server_tool_use`` blocks served without their result, and the tool
  they need in ``tools``.

Time comes from an injectable :class:`~simulator.clock.Clock`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .clock import Clock, SystemClock, isoformat_z
from .matchers import blocks_of
from .sources import SEED_CODE_EXECUTION, protocol, seed

#: Seed 000 § Penggunaan ulang container: no container is reused 30 days after creation.
MAX_AGE = timedelta(days=30)
#: Seed 000 / PTC: checkpointed after about 5 minutes idle, restorable by id.
IDLE_CHECKPOINT = timedelta(minutes=5)
#: The rolling ``expires_at`` window the API reports is undocumented [?]: one hour, configurable.
ROLLING_WINDOW = timedelta(hours=1)

SOURCES = {
    "expiry": seed(SEED_CODE_EXECUTION, "Penggunaan ulang container"),
    "rolling": protocol("2. Code execution tool: Container object", "?"),
    "pending": protocol("1. Programmatic tool calling: Continuation request"),
    "pause_turn": protocol("2. Code execution tool: pause_turn"),
}


@dataclass
class Container:
    id: str
    created_at: datetime
    last_used_at: datetime
    rolling_window: timedelta = ROLLING_WINDOW
    files: set[str] = field(default_factory=set)
    #: Python interpreter state persists (code_execution 20260120+ with PTC, not on Haiku 4.5).
    repl_state: bool = False
    checkpointed: bool = False
    restores: int = 0

    @property
    def hard_expiry(self) -> datetime:
        return self.created_at + MAX_AGE

    @property
    def expires_at(self) -> datetime:
        """The shorter rolling value a response reports (never past the 30-day limit)."""
        return min(self.last_used_at + self.rolling_window, self.hard_expiry)

    def expired(self, now: datetime) -> bool:
        return now >= self.hard_expiry

    def idle(self, now: datetime) -> bool:
        return now - self.last_used_at >= IDLE_CHECKPOINT

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "expires_at": isoformat_z(self.expires_at)}


@dataclass(frozen=True)
class PendingCall:
    tool_use_id: str
    name: str
    caller_type: str
    #: The code_execution server_tool_use id the call came from.
    tool_id: str | None
    container_id: str | None


@dataclass(frozen=True)
class PausedTurn:
    content: tuple[dict[str, Any], ...]
    message_id: str | None
    container_id: str | None

    @property
    def server_tool_use_ids(self) -> frozenset[str]:
        return frozenset(str(b.get("id")) for b in self.content
                         if b.get("type") in ("server_tool_use", "mcp_tool_use") and b.get("id"))


#: ``server_tool_use.name`` → the tool family it needs in ``tools``.
SERVER_TOOL_FAMILY: Mapping[str, str] = {
    "code_execution": "code_execution", "bash_code_execution": "code_execution",
    "text_editor_code_execution": "code_execution", "web_search": "web_search",
    "web_fetch": "web_fetch",
}


#: Blocks of a served assistant turn a resent copy keeps as served (the rule
#: ``messages.resent_turn.unchanged``): calls, and the results the server ran in the turn.
CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def turn_block_key(block: Mapping[str, Any]) -> tuple[str, ...] | None:
    """What identifies a block of an assistant turn across resends: a call by its ``id``, a
    server-side result by its type and ``tool_use_id``; None for any other block (text,
    thinking, ...: not identified)."""
    t = block.get("type")
    if t in CALL_BLOCKS:
        return ("call", str(block.get("id")))
    if isinstance(t, str) and t.endswith("_tool_result") and t != "tool_result":
        return ("result", t, str(block.get("tool_use_id")))
    return None


@dataclass(frozen=True, eq=False)
class ServedTurn:
    """The identified blocks (:func:`turn_block_key`) of an assistant turn the simulation
    served, in order, and each one's key."""

    blocks: tuple[dict[str, Any], ...]
    keys: tuple[tuple[str, ...], ...]


def result_tool_use_ids(content: Iterable[Mapping[str, Any]]) -> set[str]:
    """ids answered by result blocks (``*_tool_result`` with a ``tool_use_id``)."""
    return {str(b["tool_use_id"]) for b in content
            if str(b.get("type", "")).endswith("_tool_result") and "tool_use_id" in b}


def answered_ids(message: Mapping[str, Any]) -> set[str]:
    """The tool_use ids a message answers: its ``tool_result`` and ``*_tool_result`` blocks."""
    blocks = blocks_of(message.get("content"))
    return {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"} | \
        result_tool_use_ids(blocks)


def conversation_key(body: Mapping[str, Any]) -> str:
    """A conversation is known by its first message (every request resends the history), read
    as the API reads it (simulator.matchers.EQUIVALENCES): its content as blocks, a run of text
    blocks as one text, without ``cache_control`` (a framework that marks the last message for
    caching marks the first one only while it is the last)."""
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return ""
    first = msgs[0]
    if not isinstance(first, dict):
        return json.dumps(first, sort_keys=True, separators=(",", ":"), default=str)
    blocks: list[Any] = []
    for b in blocks_of(first.get("content")):
        b = {k: v for k, v in b.items() if k != "cache_control"}
        if b.get("type") == "text" and blocks and blocks[-1].get("type") == "text" \
                and set(b) == {"type", "text"} and set(blocks[-1]) == {"type", "text"}:
            blocks[-1] = {"type": "text", "text": f"{blocks[-1]['text']}{b.get('text')}"}
        else:
            blocks.append(b)
    return json.dumps([first.get("role"), blocks], sort_keys=True, separators=(",", ":"),
                      default=str)


def container_param_id(body: Mapping[str, Any]) -> str | None:
    """The request's ``container`` param: a string id or ``{"id": ...}``."""
    c = body.get("container")
    if isinstance(c, str):
        return c
    if isinstance(c, dict) and isinstance(c.get("id"), str):
        return str(c["id"])
    return None


class SimState:
    """The simulator's memory; see the module docstring."""

    def __init__(self, clock: Clock | None = None, *, rolling_window: timedelta = ROLLING_WINDOW) -> None:
        self.clock: Clock = clock or SystemClock()
        self.rolling_window = rolling_window
        self.containers: dict[str, Container] = {}
        self.pending_calls: dict[str, PendingCall] = {}
        self.paused_turns: dict[str, PausedTurn] = {}
        self._conversation = ""
        self._conversation_of: Mapping[str, Any] | None = None
        self.pending_server_tools: dict[str, str] = {}
        #: Every identified block of a turn served (not paused), by its key: the turn.
        self.served_turns: dict[tuple[str, ...], ServedTurn] = {}
        self._uploads: set[str] = set()
        #: Models served beyond the table (``Simulator(models=...)``; simulator.models).
        self.extra_models: frozenset[str] = frozenset()

    def blank(self) -> bool:
        """Nothing a rule reads from the state: no container, no pending programmatic call, no
        paused turn (what may be remembered of a request's judgement holds: simulator.history)."""
        return not (self.containers or self.pending_calls or self.paused_turns)

    # --- containers -------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    def container(self, container_id: str) -> Container | None:
        return self.containers.get(container_id)

    def seed_container(self, container_id: str, *, created_at: datetime | None = None) -> Container:
        """Register a container created before this run (e.g. one a cassette starts with)."""
        now = self.now()
        c = self.containers.get(container_id)
        if c is None:
            c = Container(container_id, created_at or now, now, self.rolling_window)
            self.containers[container_id] = c
        return c

    def touch_container(self, container_id: str, *, repl_state: bool | None = None) -> Container:
        """Use a container now: create it, or restore it from an idle checkpoint."""
        now = self.now()
        c = self.containers.get(container_id)
        if c is None:
            c = Container(container_id, now, now, self.rolling_window)
            self.containers[container_id] = c
        elif c.idle(now):
            c.checkpointed = False
            c.restores += 1
        c.last_used_at = now
        if repl_state is not None:
            c.repl_state = c.repl_state or repl_state
        return c

    def refresh_checkpoints(self) -> None:
        now = self.now()
        for c in self.containers.values():
            if c.idle(now):
                c.checkpointed = True

    # --- updates from requests and responses ------------------------------------------------

    def on_request_served(self, body: Mapping[str, Any], *,
                          answered: set[str] | None = None) -> None:
        """A request passed the rules and was answered: clear what it resolved. ``answered``:
        the ids its messages answer (:func:`answered_ids` of each), when already known."""
        raw = body.get("messages")
        msgs = raw if isinstance(raw, list) else []
        if answered is None:
            answered = set()
            for m in msgs:
                if isinstance(m, dict):
                    answered |= answered_ids(m)
        for tid in answered:
            self.pending_calls.pop(tid, None)
        self._conversation_of = body  # its key is computed when needed (a pause_turn)
        if self.paused_turns:
            self.paused_turns.pop(self._conversation_key(), None)
        self.pending_server_tools.clear()
        last = None
        for m in reversed(msgs):
            if isinstance(m, dict):
                last = m
                break
        content = last.get("content") if last is not None and last.get("role") == "user" else None
        self._uploads = {str(b["file_id"]) for b in content if isinstance(b, dict) and
                         b.get("type") == "container_upload" and "file_id" in b} \
            if type(content) is list else set()
        cid = container_param_id(body)
        if cid:
            self.refresh_checkpoints()
            self.touch_container(cid)

    def on_response(self, message: Mapping[str, Any], *, repl_state: bool = False,
                    lessons: Lessons | None = None) -> None:
        """Learn from a served message (JSON body, or assembled from a stream). ``lessons``:
        :func:`lessons_of` the message, when already known."""
        ls = lessons if lessons is not None else lessons_of(message)
        if not ls.is_message:
            return
        cid = ls.container_id
        if cid is not None:
            c = self.touch_container(cid, repl_state=repl_state)
            c.files |= ls.file_ids | self._uploads
            self._uploads = set()
        for tid, name, ctype, tool_id in ls.calls:
            self.pending_calls[tid] = PendingCall(tid, name, ctype, tool_id, cid)
        for tid, name in ls.server_tool_uses:
            self.pending_server_tools[tid] = name
        if ls.paused is not None:
            self.paused_turns[self._conversation_key()] = PausedTurn(ls.paused, ls.message_id, cid)
        elif ls.turn is not None:
            for k in ls.turn.keys:
                self.served_turns[k] = ls.turn

    def _conversation_key(self) -> str:
        if self._conversation_of is not None:
            self._conversation = conversation_key(self._conversation_of)
            self._conversation_of = None
        return self._conversation

    @property
    def paused(self) -> PausedTurn | None:
        """The most recent paused turn still waiting to be resent."""
        return next(reversed(self.paused_turns.values()), None)

    def paused_for(self, body: Mapping[str, Any]) -> PausedTurn | None:
        """The paused turn of the conversation ``body`` continues, if any."""
        if not self.paused_turns:
            return None
        return self.paused_turns.get(conversation_key(body))


@dataclass(frozen=True)
class Lessons:
    """What the state learns from a served message (:func:`lessons_of`): a pure function of the
    message, so the engine computes it once per recorded exchange."""

    is_message: bool
    container_id: str | None = None
    file_ids: frozenset[str] = frozenset()
    #: Programmatic calls: (tool_use id, name, caller type, caller tool_id).
    calls: tuple[tuple[str, str, str, Any], ...] = ()
    #: server_tool_use blocks served without their result: (id, name).
    server_tool_uses: tuple[tuple[str, str], ...] = ()
    #: The content of a ``pause_turn`` message (None: not paused).
    paused: tuple[dict[str, Any], ...] | None = None
    message_id: Any = None
    #: The identified blocks of the message (None: it has none).
    turn: ServedTurn | None = None


def lessons_of(message: Mapping[str, Any]) -> Lessons:
    """What :meth:`SimState.on_response` learns from ``message``."""
    if message.get("type") != "message":
        return Lessons(False)
    container = message.get("container")
    cid = str(container["id"]) if isinstance(container, dict) and \
        isinstance(container.get("id"), str) else None
    content = blocks_of(message.get("content"))
    results = result_tool_use_ids(content)
    calls: list[tuple[str, str, str, Any]] = []
    server: list[tuple[str, str]] = []
    kept: list[dict[str, Any]] = []
    keys: list[tuple[str, ...]] = []
    for b in content:
        k = turn_block_key(b)
        if k is not None and k not in keys:
            kept.append(b)
            keys.append(k)
        t = b.get("type")
        if t == "tool_use":
            caller = b.get("caller")
            ctype = caller.get("type") if isinstance(caller, dict) else None
            if ctype and ctype != "direct":
                calls.append((str(b.get("id")), str(b.get("name")), str(ctype),
                              caller.get("tool_id") if isinstance(caller, dict) else None))
        elif t == "server_tool_use" and str(b.get("id")) not in results:
            server.append((str(b.get("id")), str(b.get("name"))))
    return Lessons(
        True, cid, frozenset(_file_ids(message.get("content"))) if cid is not None else frozenset(),
        tuple(calls), tuple(server),
        tuple(content) if message.get("stop_reason") == "pause_turn" else None, message.get("id"),
        ServedTurn(tuple(kept), tuple(keys)) if kept else None)


def _file_ids(obj: Any) -> Iterable[str]:
    if isinstance(obj, dict):
        if isinstance(obj.get("file_id"), str):
            yield obj["file_id"]
        for v in obj.values():
            yield from _file_ids(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _file_ids(v)
