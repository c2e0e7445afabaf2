"""The rule on resent turns: a continuation sends back an assistant turn the simulation served
as it was served.

Every request resends the conversation, and the API reads an assistant turn the client sends
back as what Claude did: a ``tool_use`` whose ``input`` became ``{}`` (what a streamed framework
does when a block arrived whole in ``content_block_start``), a ``server_tool_use`` still waiting
for its result dropped from the copy, a call moved after another, a code execution result
rewritten, each tells the model something that did not happen, and the later turns of the
recording no longer follow. The rule compares the copy with the turn as served, block by block:

- **kept as served**: the turn's *identified* blocks (:func:`simulator.state.turn_block_key`):
  every call (``tool_use``, ``server_tool_use``, ``mcp_tool_use``) by its ``id``, with its
  ``type``, ``name``, ``input``, ``caller`` (and ``server_name``), and every result the server
  ran in the turn (``code_execution_tool_result``, ``bash_code_execution_tool_result``,
  ``web_search_tool_result``, ...) by its ``tool_use_id``, with its ``content``; all of them, in
  the order served;
- **free** (:data:`LATITUDE`, each with the sentence that allows it): what the docs or live
  captures show may differ.

A turn none of whose identified blocks comes back is not judged (a history restarted, or cut
before it). A violation is answered as the API's validation errors are: 400
``invalid_request_error``, ``messages.N.content.M`` naming the block (combined messages, as the
API counts them) and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..differences import shown
from ..sources import protocol
from ..state import ServedTurn, turn_block_key
from .base import RuleContext, rule


@dataclass(frozen=True)
class Latitude:
    """A difference a resent copy may have from the turn served, and what allows it."""

    what: str
    sentence: str
    source: str


#: What a copy of a served turn may change (the rule does not judge it), each with its sentence.
LATITUDE: tuple[Latitude, ...] = (
    Latitude("text blocks: their text, split or joined, dropped, citations kept or not",
             "The API does not check an assistant turn's text against what it answered (a "
             "prefill is a client-written assistant turn); no identified block depends on it.",
             "[I]; messages.shape.tolerant counts a run of text blocks as one"),
    Latitude("thinking and redacted_thinking blocks of earlier turns (dropped)",
             '"previous thinking blocks are automatically stripped from the context window '
             'calculation"', "Anthropic docs, context windows (as simulator.count_tokens cites)"),
    Latitude("a turn that stopped with pause_turn (its copy may be modified)",
             '"Anda dapat memberikan respons tersebut kembali apa adanya dalam permintaan '
             'berikutnya agar Claude melanjutkan gilirannya, atau memodifikasi kontennya jika '
             'Anda ingin menginterupsi percakapan." (resend it as-is, or modify its content to '
             "interrupt the conversation); its pending server_tool_use is judged by "
             "pause_turn.resend_assistant_content",
             "code execution docs, The pause_turn stop reason; docs/protocol-notes.md §2 pause_turn"),
    Latitude('caller {"type": "direct"} added or left out',
             '"`allowed_callers` accepts `"direct"` (the default)"; "`caller` is optional on '
             '`tool_use`, `server_tool_use`, `web_search_tool_result` and '
             '`web_fetch_tool_result`"',
             "docs/protocol-notes.md §1; real_traffic llmanth/pydai resends drop it (82 blocks), answered 200"),
    Latitude("null for a field the served block did not have (in result content)",
             "pydantic-ai resends web_fetch/mcp results with \"citations\": null where none was "
             "served, answered 200", "real_traffic pydai test_anthropic_web_fetch_tool, "
             "test_anthropic_mcp_servers"),
    Latitude("cache_control on any block; key order; numbers equal in value (1 and 1.0); a "
             "streamed input reassembled from its input_json_delta parts",
             "JSON objects are unordered (RFC 8259 §4); prompt caching changes usage, not the "
             "conversation", "RFC 8259; docs/protocol-notes.md §2 (optional cache_control)"),
    Latitude("a finished server tool call dropped with its result (both left out of the copy); "
             "a client tool_use left out (what answers it is judged by the tool_result rules)",
             "pydantic-ai resends a tool-search turn without its server_tool_use and "
             "tool_search_tool_result blocks, answered 200",
             "real_traffic pydai__492 (test_defer_loading_tools_discovered)"),
    Latitude("blocks the copy adds; fields of a block other than the compared ones",
             "Not a change to what was served (new blocks are judged by the pairing rules)",
             "[I]"),
)

#: A call's fields compared (``caller`` with ``{"type": "direct"}`` and absence alike).
CALL_FIELDS = ("type", "name", "server_name", "input", "caller")
#: A server result's fields compared (``content`` without null fields).
RESULT_FIELDS = ("type", "content", "caller")

ADVICE = "send an assistant turn back as it was served: its blocks in order, their inputs unchanged"
DROPPED = ("messages.{index}: this copy of an assistant turn lacks its `{type}` block with {ref} "
           "({why}; block {n} of the turn's {count} tool blocks as served); " + ADVICE + ".")
CHANGED = ("messages.{index}.content.{block}.{field}: `{type}` block with {ref}: served {recorded}, "
           "sent back {received}; " + ADVICE + ".")
MOVED = ("messages.{index}.content.{block}: the `{type}` block with {ref} comes back before the "
         "`{before_type}` block with {before_ref}, which was served before it; " + ADVICE + ".")

_ABSENT = object()


def _ref(block: Mapping[str, Any]) -> str:
    if "tool_use_id" in block and block.get("type") not in ("tool_use", "server_tool_use",
                                                             "mcp_tool_use"):
        return f"tool_use_id `{block.get('tool_use_id')}`"
    return f"id `{block.get('id')}`"


def _caller(block: Mapping[str, Any]) -> Any:
    c = block.get("caller")
    return {"type": "direct"} if c is None or c == {"type": "direct"} else c


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None and k != "cache_control"}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def _field(block: Mapping[str, Any], name: str) -> Any:
    if name == "caller":
        return _caller(block)
    if name == "content":
        return _no_nulls(block.get("content", _ABSENT)) if "content" in block else _ABSENT
    return block.get(name, _ABSENT)


Found = dict[tuple[str, ...], tuple[int, int, dict[str, Any]]]


def _dropped(key: tuple[str, ...], served: Mapping[str, Any],
             served_keys: Iterable[tuple[str, ...]], present: Found) -> str | None:
    """Why leaving out ``served`` (not in the copy) changes the conversation, or None when the
    copy may leave it out: a finished call and its result dropped together (LATITUDE), or a
    client ``tool_use`` (the ``tool_result`` pairing rules judge what answers it). A server call
    is finished by a result served in its turn or a later one (a deferred result)."""
    if key[0] == "call":
        if served.get("type") == "tool_use":
            return None
        results = [k for k in served_keys if k[0] == "result" and k[2] == key[1]]
        if not results:
            return "served waiting for its result"
        kept = next((k for k in results if k in present), None)
        return f"its `{kept[1]}` block is sent back" if kept is not None else None
    if ("call", key[2]) in present:
        call = present[("call", key[2])][2]
        return f"its `{call.get('type')}` block with id `{key[2]}` is sent back"
    return None


def _judge(turn: ServedTurn, present: Found,
           served_keys: Iterable[tuple[str, ...]]) -> str | None:
    found = {k: present[k] for k in turn.keys if k in present}
    first_index = min(i for i, _, _ in found.values())
    for n, (key, served) in enumerate(zip(turn.keys, turn.blocks, strict=True)):
        copy = found.get(key)
        if copy is None:
            why = _dropped(key, served, served_keys, present)
            if why is None:
                continue
            return DROPPED.format(index=first_index, type=served.get("type"), ref=_ref(served),
                                  n=n, count=len(turn.keys), why=why)
        i, j, block = copy
        fields = CALL_FIELDS if key[0] == "call" else RESULT_FIELDS
        for name in fields:
            want, got = _field(served, name), _field(block, name)
            if want is _ABSENT and got is _ABSENT or want == got:
                continue
            rec, rcv = shown(None if want is _ABSENT else want, None if got is _ABSENT else got,
                             "recorded" if want is _ABSENT else "received" if got is _ABSENT else "")
            return CHANGED.format(index=i, block=j, field=name, type=served.get("type"),
                                  ref=_ref(served), recorded=rec, received=rcv)
    keys = [k for k in turn.keys if k in found]
    places = [found[k][:2] for k in keys]
    for n in range(1, len(places)):
        if places[n] < places[n - 1]:
            i, j, block = found[keys[n]]
            before = found[keys[n - 1]][2]
            return MOVED.format(index=i, block=j, type=block.get("type"), ref=_ref(block),
                                before_type=before.get("type"), before_ref=_ref(before))
    return None


@rule("messages.resent_turn.unchanged",
      source=protocol("2. Code execution tool: Client tool alongside code execution", "I"),
      statement="An assistant turn the API served is sent back with its tool blocks (calls and "
                "server results) in order, their inputs, callers and results unchanged (a paused "
                "turn, text and earlier thinking may differ: LATITUDE).",
      message=CHANGED)
def resent_turn_unchanged(ctx: RuleContext) -> str | None:
    served = ctx.state.served_turns
    if not served:
        return None
    present: Found = {}
    turns: dict[int, ServedTurn] = {}  # the served turns the request sends back, in order
    for i, m in enumerate(ctx.messages):
        if m.get("role") != "assistant":
            continue
        for j, b in enumerate(m["content"]):
            key = turn_block_key(b)
            if key is None or key in present:
                continue
            present[key] = (i, j, b)
            turn = served.get(key)
            if turn is not None:
                turns.setdefault(id(turn), turn)
    for turn in turns.values():
        said = _judge(turn, present, served)
        if said is not None:
            return said
    return None
