"""Model mode: the simulator answering like a model (``tooluse serve --model-mode``).

A client that drives a conversation itself (``tooluse probe``) sends its own model id, runs the
tools itself and answers them with its own output. In model mode the engine still judges every
request by the protocol rules, and answers it with the next recorded turn of the conversation it
continues, whatever the requested model and whatever the tool results say:

- :data:`MODEL_MODE_MATCHERS` find that turn: method, path, tools (as in the default matchers),
  ``opening`` (the system prompt and the first message: which conversation) and ``turns`` (per
  later message, its role and the ids of the tool calls it holds or answers: how far the
  conversation has come). Tool result contents and the model are never compared.
- :func:`model_mode_cassettes` leaves out the exchanges a client driving the conversation never
  sends (``expect_rule``: requests broken on purpose); the rest are served in order, recorded
  errors included (a 529 first is answered first, and the client's retry gets the next exchange).

Two cassettes with the same opening are told apart only once their tool call ids differ: served
concurrently, their first answers may be swapped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .cassette import Cassette
from .matchers import METHOD, PATH, TOOLS, Matcher, MatchRequest, blocks_of

_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def _opening_key(r: MatchRequest) -> Any:
    messages = r.body.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    return [r.body.get("system"), first]


def _turns_key(r: MatchRequest) -> Any:
    messages = r.body.get("messages")
    out = []
    for m in messages[1:] if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            continue
        ids = [str(b.get("id") if b.get("type") in _CALL_BLOCKS else b.get("tool_use_id"))
               for b in blocks_of(m.get("content"))
               if b.get("type") in _CALL_BLOCKS or b.get("type") == "tool_result"]
        out.append((m.get("role"), ids))
    return out


OPENING = Matcher("opening", _opening_key, "system prompt and first message (model mode)")
TURNS = Matcher("turns", _turns_key,
                "role and tool call ids of every later message (model mode)")

MODEL_MODE_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, TOOLS, OPENING, TURNS)


def model_mode_cassettes(cassettes: Iterable[Cassette]) -> list[Cassette]:
    """The cassettes as a model-mode engine serves them: ``expect_rule`` exchanges left out."""
    out = []
    for c in cassettes:
        kept = [ex for ex in c.exchanges if not ex.expect_rule]
        if not kept:
            continue
        if len(kept) == len(c.exchanges):
            out.append(c)
        else:
            out.append(replace(c, exchanges=[replace(ex, index=i) for i, ex in enumerate(kept)]))
    return out


def engine_options() -> dict[str, Any]:
    """The engine keyword arguments of model mode."""
    return {"matchers": MODEL_MODE_MATCHERS}


__all__ = ["MODEL_MODE_MATCHERS", "OPENING", "TURNS", "engine_options", "model_mode_cassettes"]
