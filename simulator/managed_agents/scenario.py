"""What a simulated session's agent does: a script of turns (a *scenario*).

A real session's agent is a model; the simulator replaces it with a script. Each :class:`Turn`
is one agent turn: optional text (``agent.message``) and the ``agent.custom_tool_use`` events it
emits. A turn with tool uses ends in ``session.status_idle`` with ``stop_reason``
``requires_action`` naming their event ids; once every one is resolved by a
``user.custom_tool_result`` the session runs the next turn. After the last turn the agent sends
``final_text`` and goes idle with ``end_turn``.

Scenarios are built in code or read from Managed Agents cassettes (:func:`scenario_from_cassette`):
the recorded ``agent.custom_tool_use`` events, grouped by the ``requires_action`` idles that follow
them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CustomToolUse:
    """One tool use the agent emits: a tool name and its input. A custom tool gives an
    ``agent.custom_tool_use``; a tool of the built-in toolset (``bash``, ``read``, ...) an
    ``agent.tool_use``, which a self-hosted worker answers with ``user.tool_result``."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    tool_uses: tuple[CustomToolUse, ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class Scenario:
    """A scripted agent: turns in order, then ``final_text`` and ``end_turn``."""

    name: str
    turns: tuple[Turn, ...] = ()
    final_text: str = "Done."

    @classmethod
    def of(cls, name: str, *turns: Iterable[tuple[str, Mapping[str, Any]]],
           final_text: str = "Done.") -> Scenario:
        """Shorthand: ``Scenario.of("x", [("get_order_status", {"order_id": "1"})], [...])``."""
        return cls(name, tuple(Turn(tuple(CustomToolUse(n, dict(i)) for n, i in t)) for t in turns),
                   final_text)

    @property
    def tool_names(self) -> set[str]:
        return {u.name for t in self.turns for u in t.tool_uses}


#: A session with no script ends its turn at once.
EMPTY = Scenario("empty")


def scenario_from_events(name: str, events: Iterable[Mapping[str, Any]]) -> Scenario:
    """A scenario from a recorded session event log (dicts with ``type``).

    ``agent.custom_tool_use`` events accumulate into a turn; a ``session.status_idle`` with
    ``requires_action`` closes it. ``agent.message`` text before the tool uses becomes the turn's
    text; the last ``agent.message`` after the final turn becomes ``final_text``.
    """
    turns: list[Turn] = []
    uses: list[CustomToolUse] = []
    text: str | None = None
    final = "Done."
    for ev in events:
        kind = ev.get("type")
        if kind in ("agent.custom_tool_use", "agent.tool_use"):
            uses.append(CustomToolUse(str(ev.get("name", "")), dict(ev.get("input") or {})))
        elif kind == "agent.message":
            blocks = ev.get("content") or []
            said = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping))
            if uses:
                final = said
            else:
                text = said
                final = said
        elif kind == "session.status_idle":
            reason = (ev.get("stop_reason") or {}).get("type")
            if reason == "requires_action" and uses:
                turns.append(Turn(tuple(uses), text))
                uses, text = [], None
    if uses:
        turns.append(Turn(tuple(uses), text))
    return Scenario(name, tuple(turns), final)


def scenario_from_cassette(cassette: Any) -> Scenario:
    """The scenario recorded in a Managed Agents cassette (a :class:`simulator.cassette.Cassette`).

    Reads every session event the cassette holds: SSE events of ``/events/stream`` responses and
    the ``data`` of ``/events`` list responses, in exchange order.
    """
    events: list[Mapping[str, Any]] = []
    for ex in cassette.exchanges:
        path = str(ex.request.get("path", ""))
        if "/v1/sessions/" not in path:
            continue
        resp = ex.response
        for sse in resp.get("events") or []:
            data = sse.get("data") if isinstance(sse, Mapping) else None
            if isinstance(data, Mapping) and "type" in data:
                events.append(data)
        body = resp.get("body")
        if ex.request.get("method", "GET").upper() == "GET" and isinstance(body, Mapping):
            events.extend(e for e in body.get("data") or [] if isinstance(e, Mapping))
    return scenario_from_events(cassette.id, events)


def corpus_scenarios(root: Any = None) -> dict[str, Scenario]:
    """Every Managed Agents cassette of the corpus as a scenario, by cassette id
    (``managed_agents/custom/one_tool_use``)."""
    from simulator.cassette import CassetteError, iter_corpus

    out: dict[str, Scenario] = {}
    try:
        for cassette in iter_corpus(root):
            if cassette.family == "managed_agents":
                out[cassette.id] = scenario_from_cassette(cassette)
    except CassetteError:
        return out
    return out
