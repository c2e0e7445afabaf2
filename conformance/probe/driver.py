"""One scenario driven live: the opening request, then the protocol's client loop to the end.

The loop (as :mod:`conformance.reference.loop`): send; remember the ``container`` a response
names and send it back; ``pause_turn``: send the assistant content back as-is (appended to the
paused assistant message) with the same tools; ``tool_use``: answer every client ``tool_use``
(programmatic calls included) in one user message of ``tool_result`` blocks, never a
``server_tool_use``; any other stop reason ends the conversation; a 400 saying the container
expired: the same request again without ``container``. 429 and 5xx answers (529 included) and
dropped connections are retried with exponential backoff, honouring ``retry-after-ms`` /
``retry-after``; other API errors end the scenario and are kept.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.reference.loop import _expired_container

from .drift import Finding, judge_response
from .scenarios import ProbeScenario, input_of
from .tools import ToolDesk

#: Statuses of a scenario that a resumed run does not drive again.
FINAL = frozenset({"completed", "max_turns", "max_output_tokens", "api_error"})
#: The cap on one backoff wait, seconds.
MAX_BACKOFF = 60.0


@dataclass
class Limits:
    max_turns: int = 20
    #: Output tokens one scenario may use in total (each request's ``max_tokens`` is capped to
    #: what is left); None: the recorded ``max_tokens`` only.
    max_output_tokens: int | None = None
    retries: int = 4
    backoff: float = 1.0


class Budget:
    """Total tokens (input, output and cache) a run may spend; shared by its threads."""

    def __init__(self, total: int | None) -> None:
        self.total, self.used = total, 0
        self.usage = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}
        self._lock = threading.Lock()

    def spend(self, usage: dict[str, int]) -> None:
        with self._lock:
            for k in self.usage:
                self.usage[k] += int(usage.get(k) or 0)
            self.used = sum(self.usage.values())

    @property
    def exhausted(self) -> bool:
        return self.total is not None and self.used >= self.total


@dataclass
class Outcome:
    """What one scenario did (the per-scenario file of a probe output)."""
    scenario: str
    model: str
    status: str = "running"
    turns: int = 0
    requests: int = 0
    stop_reasons: list[str] = field(default_factory=list)
    #: One entry per tool call: tool, block type, editor command / bash program, input keys.
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {
        "input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0})
    #: Errors answered and retried (status, error type), in order.
    retried: list[dict[str, Any]] = field(default_factory=list)
    #: The error that ended the scenario, if any.
    error: dict[str, Any] | None = None
    refusals: int = 0
    drift: list[Finding] = field(default_factory=list)
    wall_seconds: float = 0.0

    def add_usage(self, usage: dict[str, Any]) -> None:
        for k in self.usage:
            value = usage.get(k)
            self.usage[k] += int(value) if isinstance(value, int) else 0

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "model": self.model, "status": self.status,
                "turns": self.turns, "requests": self.requests, "stop_reasons": self.stop_reasons,
                "tool_calls": self.tool_calls, "usage": self.usage,
                "tokens": sum(self.usage.values()), "retried": self.retried, "error": self.error,
                "refusals": self.refusals, "drift": [f.to_json() for f in self.drift],
                "wall_seconds": round(self.wall_seconds, 3)}


def call_summary(block: dict[str, Any], tool_type: str | None) -> dict[str, Any]:
    """A tool call as the diff compares it (what tool, what command, which input fields)."""
    tool_input = input_of(block)
    command = tool_input.get("command")
    if isinstance(command, str) and tool_type is not None and tool_type.startswith("bash"):
        command = command.strip().split(" ", 1)[0] if command.strip() else ""
    return {"tool": block.get("name"), "block": block.get("type"), "type": tool_type,
            "command": command if isinstance(command, str) else None,
            "input_keys": sorted(tool_input)}


def _retry_wait(error: Any, attempt: int, backoff: float) -> float:
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return min(max(float(value) * scale, 0.0), MAX_BACKOFF)
            except ValueError:
                pass
    return min(backoff * (2 ** attempt) * (0.5 + random.random() / 2), MAX_BACKOFF)


def _error_of(error: Any) -> dict[str, Any]:
    body = getattr(error, "body", None)
    err = body.get("error") if isinstance(body, dict) else None
    return {"status": getattr(error, "status_code", None),
            "type": err.get("type") if isinstance(err, dict) else type(error).__name__,
            "message": str(err.get("message") if isinstance(err, dict) else error)[:500]}


def _retryable(error: Any) -> bool:
    import anthropic

    if isinstance(error, anthropic.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, anthropic.APIConnectionError)


class Driver:
    """Drives one scenario with ``client`` (an ``anthropic.Anthropic`` with ``max_retries=0``
    over a :class:`~conformance.probe.transport.RecordingTransport`)."""

    def __init__(self, scenario: ProbeScenario, client: Any, model: str, limits: Limits,
                 budget: Budget, recorded: list[dict[str, Any]],
                 stop: threading.Event | None = None,
                 sleep: Callable[[float], Any] | None = None) -> None:
        self.s, self.client, self.limits, self.budget = scenario, client, limits, budget
        self.recorded, self.stop = recorded, stop or threading.Event()
        #: Waits between retries (an interrupt ends the wait).
        self.sleep = sleep or self.stop.wait
        self.outcome = Outcome(scenario.id, model)
        self.base: dict[str, Any] = {**scenario.params, "model": model}
        self.messages: list[dict[str, Any]] = [dict(m) if isinstance(m, dict) else m
                                               for m in scenario.messages]
        self.container = scenario.container
        self._judged = 0

    def run(self, desk: ToolDesk) -> Outcome:
        start = time.monotonic()
        try:
            self._loop(desk)
        finally:
            self._judge_new()
            self.outcome.wall_seconds = time.monotonic() - start
        return self.outcome

    def _loop(self, desk: ToolDesk) -> None:
        o = self.outcome
        while True:
            if o.turns >= self.limits.max_turns:
                o.status = "max_turns"
                return
            request = self._request()
            if request is None:
                o.status = "max_output_tokens"
                return
            message = self._send(request)
            if message is None:
                return
            o.turns += 1
            usage = message.usage.model_dump(mode="json") if message.usage is not None else {}
            o.add_usage(usage)
            self.budget.spend(usage)
            reason = str(message.stop_reason)
            o.stop_reasons.append(reason)
            if reason == "refusal":
                o.refusals += 1
            container = getattr(message, "container", None)
            if container is not None:
                self.container = container.id
            content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
            for b in content:
                if b.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
                    o.tool_calls.append(call_summary(b, self.s.tool_kind(str(b.get("name")))[1]
                                                     if b.get("type") == "tool_use"
                                                     else b.get("type")))
            if reason == "pause_turn":
                self._add_assistant(content)
                continue
            if reason == "tool_use":
                self._add_assistant(content)
                uses = [b for b in content if b.get("type") == "tool_use"]
                self.messages.append({"role": "user", "content": [desk.answer(u) for u in uses]})
                continue
            o.status = "completed"
            return

    def _request(self) -> dict[str, Any] | None:
        request = {**self.base, "messages": list(self.messages)}
        cap = self.limits.max_output_tokens
        if cap is not None:
            left = cap - self.outcome.usage["output_tokens"]
            if left <= 0:
                return None
            request["max_tokens"] = min(int(request.get("max_tokens") or left), left)
        if self.container is not None:
            request["container"] = self.container
        if self.s.headers:
            request["extra_headers"] = dict(self.s.headers)
        return request

    def _send(self, request: dict[str, Any]) -> Any:
        """The reply, or None when the scenario stops here (status and error set)."""
        import anthropic

        o = self.outcome
        attempt = 0
        while True:
            if self.stop.is_set():
                o.status = "interrupted"
                return None
            if self.budget.exhausted:
                o.status = "budget"
                return None
            o.requests += 1
            try:
                if self.s.stream:
                    with self.client.messages.stream(**request) as s:
                        message = s.get_final_message()
                else:
                    message = self.client.messages.create(**request)
                self._judge_new()
                return message
            except (anthropic.APIStatusError, anthropic.APIConnectionError) as e:
                self._judge_new()
                if isinstance(e, anthropic.BadRequestError) and "container" in request \
                        and _expired_container(e):
                    # documented: send the same request again without `container`
                    o.retried.append({**_error_of(e), "type": "container_expired"})
                    self.container = None
                    request = {k: v for k, v in request.items() if k != "container"}
                    continue
                if _retryable(e) and attempt < self.limits.retries:
                    o.retried.append(_error_of(e))
                    self.sleep(_retry_wait(e, attempt, self.limits.backoff))
                    attempt += 1
                    continue
                o.error = _error_of(e)
                o.status = "api_error" if isinstance(e, anthropic.APIStatusError) and \
                    not _retryable(e) else "failed"
                return None

    def _judge_new(self) -> None:
        while self._judged < len(self.recorded):
            ex = self.recorded[self._judged]
            self.outcome.drift += judge_response(self.s.id, self._judged, ex["response"])
            self._judged += 1

    def _add_assistant(self, content: list[dict[str, Any]]) -> None:
        last = self.messages[-1] if self.messages else None
        if isinstance(last, dict) and last.get("role") == "assistant":
            previous = last["content"]
            previous = [{"type": "text", "text": previous}] if isinstance(previous, str) \
                else list(previous)
            self.messages[-1] = {"role": "assistant", "content": [*previous, *content]}
        else:
            self.messages.append({"role": "assistant", "content": content})
