"""Model mode: the simulator answering like a model (``tooluse serve --model-mode``).

A client that drives a conversation itself (``tooluse probe``) sends its own model id, runs the
tools itself and answers them with its own output. In model mode the engine still judges every
request by the protocol rules, and answers it with the next recorded turn of the conversation it
continues, whatever the requested model and whatever the tool results say:

- :data:`MODEL_MODE_MATCHERS` find that turn: method, path, tools (as in the default matchers),
  ``opening`` (the system prompt and the first message: which conversation) and ``turns`` (per
  later message, its role and the ids of the tool calls it holds or answers: how far the
  conversation has come). Tool result contents and the model are never compared.
  :data:`MODEL_MODE_TOLERANT_MATCHERS` (``--model-mode --matching tolerant``) compare the tools as
  the ``tolerant`` set does and the opening's content as blocks: a string and one text block
  with the same text are the same, ``cache_control`` is ignored.
- :func:`model_mode_cassettes` leaves out the exchanges a client driving the conversation never
  sends (``expect_rule``: requests broken on purpose); the rest are served in order, recorded
  errors included (a 529 first is answered first, and the client's retry gets the next exchange).

Many cassettes share an opening (the same question answered several ways). A client names the
conversation it drives with the :data:`SCENARIO_HEADER` request header (``tooluse probe`` sends
the cassette id): :class:`ModelModeHandler` then answers from that cassette alone, with an engine
of its own (its own state), and starts it over when the conversation's opening comes again (a
resumed probe). Without the header, one engine over every cassette answers, and cassettes with
the same opening are told apart only once their tool call ids differ.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .cassette import Cassette
from .differences import Difference, first_difference
from .errors import invalid_request
from .http import SimRequest, SimResponse
from .matchers import (
    METHOD,
    PATH,
    TOLERANT_TOOLS,
    TOOLS,
    Matcher,
    MatchRequest,
    blocks_of,
    matcher_set,
)

#: The request header naming the cassette (scenario id) a client's conversation follows.
SCENARIO_HEADER = "x-tooluse-scenario"

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


def _as_blocks(content: Any) -> Any:
    """Content as a list of blocks without ``cache_control`` (a string is one text block)."""
    if not isinstance(content, str | list):
        return content
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks_of(content)]


def _tolerant_opening_key(r: MatchRequest) -> Any:
    system, first = _opening_key(r)
    if isinstance(first, dict):
        first = {**first, "content": _as_blocks(first.get("content"))}
    return [_as_blocks(system), first]


def _explain_opening(recorded: MatchRequest, incoming: MatchRequest) -> list[str]:
    if _opening_key(recorded) == _opening_key(incoming):
        return []
    return ["opening: system prompt and first message compared as content blocks (a string as "
            "one text block, cache_control ignored)"]


def _diff_opening(key: Any) -> Any:
    """Where two openings first differ, named ``system`` or ``messages[0]``."""
    def diff(recorded: MatchRequest, incoming: MatchRequest) -> Difference | None:
        (rs, rf), (s, f) = key(recorded), key(incoming)
        return first_difference(rs, s, "system") or first_difference(rf, f, "messages[0]")
    return diff


def _diff_turns(recorded: MatchRequest, incoming: MatchRequest) -> Difference | None:
    """Where the later turns first differ: ``messages[N]`` (its role and call ids)."""
    rec, inc = _turns_key(recorded), _turns_key(incoming)
    for n, (a, b) in enumerate(zip(rec, inc, strict=False), 1):
        if a != b:
            return Difference(f"messages[{n}]", {"role": a[0], "ids": a[1]},
                              {"role": b[0], "ids": b[1]})
    k = min(len(rec), len(inc))
    if len(rec) > k:
        return Difference(f"messages[{k + 1}]", {"role": rec[k][0], "ids": rec[k][1]}, None,
                          "received")
    if len(inc) > k:
        return Difference(f"messages[{k + 1}]", None, {"role": inc[k][0], "ids": inc[k][1]},
                          "recorded")
    return None


OPENING = Matcher("opening", _opening_key, "system prompt and first message (model mode)",
                  diff=_diff_opening(_opening_key))
OPENING_TOLERANT = Matcher(
    "opening.tolerant", _tolerant_opening_key,
    "system prompt and first message as content blocks: a string as one text block, "
    "cache_control ignored (model mode)", explain=_explain_opening,
    diff=_diff_opening(_tolerant_opening_key))
TURNS = Matcher("turns", _turns_key,
                "role and tool call ids of every later message (model mode)", diff=_diff_turns)

MODEL_MODE_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, TOOLS, OPENING, TURNS)
MODEL_MODE_TOLERANT_MATCHERS: tuple[Matcher, ...] = (METHOD, PATH, TOLERANT_TOOLS,
                                                     OPENING_TOLERANT, TURNS)
#: Model mode's matchers for each named matcher set (:data:`simulator.matchers.MATCHER_SETS`).
MODEL_MODE_SETS = {"exact": MODEL_MODE_MATCHERS, "tolerant": MODEL_MODE_TOLERANT_MATCHERS}


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


def engine_options(matching: str = "exact") -> dict[str, Any]:
    """The engine keyword arguments of model mode, for the matcher set named ``matching``."""
    matcher_set(matching)  # an unknown name: KeyError listing the known ones
    return {"matchers": MODEL_MODE_SETS[matching]}


class ModelModeHandler:
    """The Messages handler of ``tooluse serve --model-mode`` (see the module docstring)."""

    def __init__(self, cassettes: Iterable[Cassette], **engine_opts: Any) -> None:
        from .engine import Simulator

        self.cassettes = model_mode_cassettes(cassettes)
        self.by_id = {c.id: c for c in self.cassettes}
        # ``matchers`` may name a set ("tolerant"): model mode's version of that set.
        matching = engine_opts.pop("matchers", "exact")
        if not isinstance(matching, str):
            raise TypeError("model mode takes a matcher set's name (matchers='exact' or "
                            "'tolerant'), not matchers: it compares its own keys")
        self.opts = {**engine_opts, **engine_options(matching)}
        self.shared = Simulator(self.cassettes, **self.opts)
        self._each: dict[str, Any] = {}

    def __call__(self, request: SimRequest) -> SimResponse:
        sid = next((v for k, v in request.headers.items() if k.lower() == SCENARIO_HEADER), None)
        if sid is None:
            return self.shared(request)
        cassette = self.by_id.get(sid)
        if cassette is None:
            return invalid_request(f"tooluse serve --model-mode: no cassette {sid!r} is served "
                                   f"(header {SCENARIO_HEADER}); serve it, or leave the header out")
        sim = self._each.get(sid)
        if sim is None or self._starts_over(sim, request):
            from .engine import Simulator

            sim = self._each[sid] = Simulator([cassette], **self.opts)
        return sim(request)

    @staticmethod
    def _starts_over(sim: Any, request: SimRequest) -> bool:
        """An opening request (no later turns) that the engine's next exchange is not: a later
        turn, another conversation of the cassette, or nothing left."""
        try:
            body = request.json()
        except (ValueError, UnicodeDecodeError):
            return False
        incoming = MatchRequest("POST", "/", body) if isinstance(body, dict) else None
        if incoming is None or _turns_key(incoming):
            return False
        remaining = sim.remaining()
        if not remaining:
            return True
        cassette, index = remaining[0]
        recorded = MatchRequest.from_recorded(cassette.exchanges[index].request)
        opening = next(m for m in sim.matchers if m.name.startswith("opening"))
        return bool(_turns_key(recorded)) or \
            not opening.agrees(opening.key(recorded), opening.key(incoming))


def build(cassettes: Iterable[Cassette], **engine_opts: Any) -> Any:
    """The simulated API (:func:`simulator.routes.build`) with :class:`ModelModeHandler` on
    ``/v1/messages``."""
    from .files_api import FilesAPI
    from .routes import Routes, managed_agents_mounts

    kept = list(cassettes)
    handler = ModelModeHandler(kept, **engine_opts)
    return Routes(handler, files=FilesAPI.from_cassettes(kept),
                  mounts=managed_agents_mounts(log_limit=engine_opts.get("log_limit")))


__all__ = ["MODEL_MODE_MATCHERS", "MODEL_MODE_SETS", "MODEL_MODE_TOLERANT_MATCHERS", "OPENING",
           "OPENING_TOLERANT", "SCENARIO_HEADER", "TURNS", "ModelModeHandler", "build",
           "engine_options", "model_mode_cassettes"]
