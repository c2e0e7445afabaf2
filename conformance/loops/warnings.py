"""What a loop's requests show that no simulator rule refuses: read from one scenario run.

The warning checks (:mod:`conformance.checks.loop_warnings`) drive a scenario and read its
:attr:`~conformance.loops.run.LoopOutcome.sent` with these functions:

- :func:`container_drops`: a continuation (a request resending the history of the previous
  successful one, longer) that does not send the ``container`` id the previous response named.
  A request the API refuses for it (``ptc.container.required``) is not counted: that rule reports it.
- :func:`lost_callers`: a resent ``tool_use`` block whose served block had a code execution
  ``caller`` and that comes back without it (or with another). A ``direct`` caller is not
  counted: ``caller`` is optional and ``direct`` is what a missing one means (PROTOCOL.md §1).
- :func:`early_retries`: a request sent after an answer with ``retry-after`` sooner than it said,
  measured at the simulation (from the moment the answer was handed back to the next request's
  arrival; a slow machine can only lengthen that interval, never shorten it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from simulator.cassette import Cassette
from simulator.state import container_param_id

from .run import LoopOutcome, Sent

#: What a warning found: the index of the request (in ``LoopOutcome.sent``) and what it shows.
Finding = tuple[int, str]

#: The rule that refuses a continuation without the container while programmatic calls wait.
CONTAINER_RULE = "ptc.container.required"
#: Timer slack allowed before a retry counts as early (seconds).
RETRY_SLACK = 0.05


def _recorded_events(response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for e in response.get("events") or []:
        data = e.get("data") if isinstance(e, dict) else None
        if isinstance(data, dict):
            yield data


def recorded_container(response: Mapping[str, Any]) -> str | None:
    """The container id a recorded response names (JSON body, or ``message_start`` /
    ``message_delta`` of a stream)."""
    found: Any = None
    body = response.get("body")
    if isinstance(body, dict):
        found = body.get("container")
    for data in _recorded_events(response):
        if data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            found = data["message"].get("container") or found
        elif data.get("type") == "message_delta" and isinstance(data.get("delta"), dict):
            found = data["delta"].get("container") or found
    if isinstance(found, dict) and isinstance(found.get("id"), str):
        return str(found["id"])
    return found if isinstance(found, str) else None


def recorded_blocks(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of a recorded response (a stream's ``content_block_start`` blocks)."""
    body = response.get("body")
    if isinstance(body, dict) and isinstance(body.get("content"), list):
        return [b for b in body["content"] if isinstance(b, dict)]
    return [d["content_block"] for d in _recorded_events(response)
            if d.get("type") == "content_block_start" and isinstance(d.get("content_block"), dict)]


def _messages(body: Any) -> list[Any]:
    msgs = body.get("messages") if isinstance(body, dict) else None
    return msgs if isinstance(msgs, list) else []


def _body(sent: Sent) -> Any:
    """What the engine judged (a thread continuation expanded), else what was sent."""
    return sent.judged if sent.judged is not None else sent.body


def _continues(body: Any, previous: Any) -> bool:
    """``body`` resends ``previous``'s conversation and adds to it (same first message, longer)."""
    now, before = _messages(body), _messages(previous)
    return bool(before) and len(now) > len(before) and now[0] == before[0]


def container_drops(outcome: LoopOutcome, cassette: Cassette) -> tuple[int, list[Finding]]:
    """How many continuations followed a response naming a container, and those that left it
    out (one line each)."""
    checked = 0
    drops: list[Finding] = []
    previous: tuple[Any, str] | None = None  # (request body, container id of its answer)
    for i, sent in enumerate(outcome.sent):
        body = _body(sent)
        if previous is not None and _continues(body, previous[0]):
            checked += 1
            sent_id = container_param_id(body) if isinstance(body, dict) else None
            if sent_id != previous[1] and sent.rule != CONTAINER_RULE:
                what = f"container {sent_id!r}" if sent_id else "no container"
                drops.append((i, f"request {i} continues the conversation with {what}; the previous "
                             f"response named container {previous[1]!r}"))
        if sent.exchange is not None and 200 <= sent.status < 300:
            container = recorded_container(cassette.exchanges[sent.exchange].response)
            previous = (body, container) if container else None
    return checked, drops


def refused_for_container(outcome: LoopOutcome) -> bool:
    """The API refused a request of this run for a missing container (``ptc.container.required``)."""
    return any(s.rule == CONTAINER_RULE for s in outcome.sent)


def lost_callers(outcome: LoopOutcome, cassette: Cassette) -> tuple[int, list[Finding]]:
    """How many served programmatic ``tool_use`` blocks were resent, and those that lost (or
    changed) the code execution ``caller`` they were served with (one line each, each once)."""
    served: dict[str, Any] = {}
    for ex in cassette.exchanges:
        for b in recorded_blocks(ex.response):
            caller = b.get("caller")
            if (b.get("type") == "tool_use" and isinstance(caller, dict)
                    and caller.get("type") not in (None, "direct")):
                served[str(b.get("id"))] = caller
    lost: dict[str, Finding] = {}
    resent: set[str] = set()
    for i, sent in enumerate(outcome.sent):
        for m in _messages(_body(sent)):
            if not isinstance(m, dict) or m.get("role") != "assistant":
                continue
            content = m.get("content")
            for b in content if isinstance(content, list) else []:
                if not isinstance(b, dict) or b.get("type") != "tool_use":
                    continue
                block_id = str(b.get("id"))
                want = served.get(block_id)
                if want is None:
                    continue
                resent.add(block_id)
                if block_id in lost or b.get("caller") == want:
                    continue
                got = b.get("caller")
                lost[block_id] = (i, f"request {i} resends tool_use {block_id} "
                                  + (f"with caller {got}" if got is not None else "without caller")
                                  + f"; it was served with caller {want}")
    return len(resent), list(lost.values())


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def retries_after_wait(outcome: LoopOutcome) -> list[tuple[int, float, float]]:
    """Each request sent after an answer carrying ``retry-after``: (its index, seconds it said,
    seconds measured from that answer to this request)."""
    out = []
    for i, (answer, retry) in enumerate(zip(outcome.sent, outcome.sent[1:], strict=False)):
        wait = _seconds(answer.retry_after)
        if wait is not None and answer.status >= 400:
            out.append((i + 1, wait, retry.arrived - answer.answered))
    return out


def early_retries(outcome: LoopOutcome, slack: float = RETRY_SLACK) -> list[Finding]:
    """Retries sent before the ``retry-after`` of the answer they follow had elapsed."""
    return [(i, f"request {i} was sent {waited:.3f} s after an answer with retry-after {wait:g}")
            for i, wait, waited in retries_after_wait(outcome) if waited < wait - slack]
