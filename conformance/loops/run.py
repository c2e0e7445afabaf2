"""One run of an agent loop against one scenario, with the replay engine judging every request.

The loop is called as ``loop(client, params)`` (plus ``run_tool=`` when it accepts it), once per
conversation of the scenario (:meth:`LoopScenario.conversations`): sync loops
get an ``anthropic.Anthropic``, coroutine functions an ``anthropic.AsyncAnthropic``; both talk to
the simulator in-process. The loop runs in a thread with a deadline; the outcome lists the rule
violations (with the offending request), the requests the recording did not expect (and those sent
after it ended), the exchanges the loop never reached, and what the loop raised.

What the outcome can and cannot judge: a request refused by a protocol rule is the loop's fault
(:attr:`LoopOutcome.violations`); a request a *matcher* refused (it passed every rule but does
not match the recording: :attr:`LoopOutcome.refusals`, each with its one-line difference) leaves
the rest of the conversation unjudged, since the simulation could not answer it as the API
would. The faults a scenario plans are served only to a request that matched their exchange:
:attr:`LoopOutcome.faults` lists those served, so a check judges the loop's answer to a fault
only when it met one.

``matching`` names the engine's matcher set (:data:`simulator.matchers.MATCHER_SETS`): ``"exact"``
(default) or ``"tolerant"``, which judges the protocol and not the formatting a framework gives
its requests (tool order, schema noise, whole history or a restart); what it normalised is in
:attr:`LoopOutcome.normalised`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.subjects.host import accepts_keyword
from conformance.subjects.timing import Patience, thread_starvation
from simulator.engine import Simulator
from simulator.events import Mismatch
from simulator.headers import replay_headers
from simulator.http import SimRequest, SimResponse
from simulator.matchers import Matcher
from simulator.routes import MessageThreads

from .scenarios import LoopScenario, recorded_results

BASE_URL = "http://simulator.test"
API_KEY = "sk-tooluse-simulator"


@dataclass
class Sent:
    """One request the loop sent, as the simulation saw it (times on the simulation's monotonic
    clock, in seconds: when the request arrived and when its answer was handed back)."""

    body: Any
    arrived: float
    answered: float
    status: int
    #: The answer's ``retry-after`` header (seconds, as sent), if any.
    retry_after: str | None = None
    request_id: str | None = None
    #: The recorded exchange served to it (None: refused, faulted or unmatched).
    exchange: int | None = None
    #: The rule whose error answered it (None: no rule refused it).
    rule: str | None = None
    #: The body the engine judged (a ``thread: continue`` request expanded to its history;
    #: None: it never reached the engine).
    judged: Any = None
    #: The engine log's length when it arrived (where :meth:`Harness.finish` looks for it).
    log_mark: int = field(default=0, repr=False)


@dataclass(frozen=True)
class Refusal:
    """A request a matcher refused: it passed every protocol rule but does not match the
    recording, so the simulation could not answer it (not the loop's fault, not judged)."""

    #: Its index among the loop's requests (``LoopOutcome.sent``), from 0; -1 when unknown.
    request: int
    #: The recorded exchange it was compared with.
    exchange: int
    matcher: str
    #: The first difference, one line (``tools[get_weather].input_schema...: recorded ..., received ...``).
    difference: str
    body: Any = field(default=None, compare=False, repr=False)

    def line(self) -> str:
        """``request N does not match the recording: <difference>``."""
        return f"request {self.request} does not match the recording: {self.difference}"


@dataclass(frozen=True)
class ServedFault:
    """A planned fault the simulation served: to which request, at which exchange."""

    #: Its index among the loop's requests (``LoopOutcome.sent``), from 0; -1 when unknown.
    request: int
    exchange: int
    kind: str

    def line(self) -> str:
        return f"{fault_name(self.kind)} served to request {self.request}"


#: How a fault reads in a message (its HTTP status where it has one).
FAULT_NAMES = {"rate_limit": "429 rate_limit_error", "overloaded": "529 overloaded_error",
               "api_error": "500 api_error", "request_too_large": "413 request_too_large",
               "drop": "dropped connection", "slow": "slow response", "stall": "stalled stream",
               "stream_error": "mid-stream error event"}


def fault_name(kind: str) -> str:
    return FAULT_NAMES.get(kind, kind)


@dataclass
class LoopOutcome:
    scenario: LoopScenario
    #: (rule id, message, offending request body) for each unexpected violation.
    violations: list[tuple[str, str, Any]] = field(default_factory=list)
    #: Requests that matched no recorded exchange: (message, request body).
    mismatches: list[tuple[str, Any]] = field(default_factory=list)
    #: Requests sent after every exchange was served (the recording had ended): request bodies.
    exhausted: list[Any] = field(default_factory=list)
    #: Exchanges never served: indices.
    unserved: list[int] = field(default_factory=list)
    raised: str | None = None
    timed_out: bool = False
    requests: list[Any] = field(default_factory=list)
    #: What the tolerant matchers normalised to match a request, one line each (exchange first).
    normalised: list[str] = field(default_factory=list)
    #: Every request with its answer, in the order the simulation received them.
    sent: list[Sent] = field(default_factory=list)
    #: Requests a matcher refused (the recording has no such request), in order: see
    #: :class:`Refusal`. ``mismatches`` has the same, as (message, body).
    refusals: list[Refusal] = field(default_factory=list)
    #: The planned faults served, in order (a fault is served only to a request that matched).
    faults: list[ServedFault] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        """Whether every request the loop sent could be answered as recorded (no matcher
        refused one): otherwise what followed the refusal says nothing about the loop."""
        return not self.refusals


#: How long one conversation of a scenario may take, in seconds of wall time: a scenario's
#: deadline is this times its number of conversations (a command's start-up included). It does
#: not derive from ``--timeout`` (the bash/editor call budget): a loop's pace is its own.
CONVERSATION_DEADLINE = 30.0


def scenario_deadline(scenario: LoopScenario, conversations: int | None = None) -> float:
    """The wall-time deadline of one run of ``scenario`` (:data:`CONVERSATION_DEADLINE` per
    conversation)."""
    n = conversations if conversations is not None else 1 + len(scenario.then)
    return CONVERSATION_DEADLINE * max(1, n)


class Harness:
    """One scenario's simulation: the engine (with the setup exchanges played), the handler a
    loop's requests go to (directly or through an HTTP server), and the outcome it fills."""

    def __init__(self, scenario: LoopScenario, *, max_requests: int = 40,
                 matching: str | Sequence[Matcher] = "exact") -> None:
        self.scenario = scenario
        self.max_requests = max_requests
        self.cassette = scenario.load()
        self.engine = Simulator(self.cassette, recorded_time=True, faults=scenario.fault_plan(),
                                matchers=matching)
        self.outcome = LoopOutcome(scenario)
        for ex in self.cassette.exchanges[:scenario.setup]:  # an earlier conversation, as recorded
            self.engine(SimRequest("POST", ex.request["path"],
                                   replay_headers(ex.request.get("headers")), {},
                                   json.dumps(ex.request["body"]).encode()))
        self.first_seq = len(self.engine.log)
        # The SDK (2.10) tool runner keeps a conversation in a server-side message thread by
        # default; MessageThreads expands `thread: continue` requests back to the full history.
        self.threads = MessageThreads(self.engine)
        self.results = recorded_results(self.cassette)
        self.conversations = scenario.conversations(self.cassette)
        self._lock = threading.Lock()

    def __call__(self, request: SimRequest) -> SimResponse:
        try:
            body: Any = request.json()
        except ValueError:
            body = request.body.decode("utf-8", "replace")
        with self._lock:
            self.outcome.requests.append(body)
            count = len(self.outcome.requests)
        arrived, mark = time.monotonic(), len(self.engine.log)
        if count > self.max_requests:
            from simulator.errors import invalid_request

            return invalid_request(f"tooluse: the loop sent more than {self.max_requests} requests "
                                   f"in scenario {self.scenario.id}; it does not converge")
        response = self.threads(request)
        with self._lock:
            self.outcome.sent.append(Sent(body, arrived, time.monotonic(), response.status,
                                          response.headers.get("retry-after"), log_mark=mark))
        return response

    def run_tool(self, name: str, tool_input: dict[str, Any], tool_use_id: str | None = None) -> Any:
        return self.results.get(str(tool_use_id), "ok")

    def finish(self) -> LoopOutcome:
        """Read the engine's log into the outcome (violations, mismatches, requests past the
        end, exchanges never served)."""
        from simulator.events import ExchangeServed, FaultInjected, RequestReceived, RuleViolated

        outcome = self.outcome
        received: list[tuple[int, RequestReceived]] = []
        bodies: dict[str, Any] = {}
        served: dict[str, int] = {}
        refused: dict[str, str] = {}
        mismatched: list[Mismatch] = []
        faulted: list[FaultInjected] = []
        for seq, ev in enumerate(self.engine.log[self.first_seq:], self.first_seq):
            if isinstance(ev, RequestReceived):
                bodies[ev.request_id] = ev.body
                received.append((seq, ev))
            elif isinstance(ev, RuleViolated) and ev.answered:
                refused[ev.request_id] = ev.rule_id
                if not ev.expected:
                    outcome.violations.append((ev.rule_id, ev.message, ev.body))
            elif isinstance(ev, ExchangeServed) and ev.normalised:
                outcome.normalised += [f"exchange {ev.exchange_index}: {n}" for n in ev.normalised]
            elif isinstance(ev, Mismatch) and ev.matcher == "exhausted":
                outcome.exhausted.append(bodies.get(ev.request_id))
            elif isinstance(ev, Mismatch) and ev.refused:
                mismatched.append(ev)
            elif isinstance(ev, FaultInjected):
                faulted.append(ev)
            if isinstance(ev, ExchangeServed) and ev.status < 400:
                served[ev.request_id] = ev.exchange_index
        claimed: set[str] = set()
        for sent in outcome.sent:  # the engine's request: the first unclaimed one after it arrived
            later = [ev for seq, ev in received if seq >= sent.log_mark
                     and ev.request_id not in claimed]
            got = next((e for e in later if e.body == sent.body), later[0] if later else None)
            if got is not None:
                claimed.add(got.request_id)
                sent.request_id, sent.judged = got.request_id, got.body
                sent.exchange, sent.rule = served.get(got.request_id), refused.get(got.request_id)
        index = {sent.request_id: i for i, sent in enumerate(outcome.sent) if sent.request_id}
        for ev in mismatched:
            refusal = Refusal(index.get(ev.request_id, -1), ev.exchange_index, ev.matcher,
                              difference_of(ev), bodies.get(ev.request_id))
            outcome.refusals.append(refusal)
            outcome.mismatches.append((f"{refusal.line()} (exchange {ev.exchange_index}, "
                                       f"`{ev.matcher}`)", refusal.body))
        outcome.faults = [ServedFault(index.get(ev.request_id, -1), ev.exchange_index, ev.fault)
                          for ev in faulted]
        # A deliberate violation the loop did not commit (the engine served the corrected request
        # after it) was not driven as recorded either.
        outcome.unserved = sorted([i for _, i in self.engine.remaining()]
                                  + [e.exchange_index for e in self.engine.skipped])
        return outcome


def run_loop(loop: Callable[..., Any], scenario: LoopScenario, *, deadline: float | None = None,
             max_requests: int = 40, matching: str | Sequence[Matcher] = "exact") -> LoopOutcome:
    """Drive ``loop`` through ``scenario`` in-process (``deadline``: :func:`scenario_deadline`
    unless given)."""
    import anthropic
    import httpx2

    from simulator.transports.httpx2_transport import AsyncSimulatorTransport, SimulatorTransport

    harness = Harness(scenario, max_requests=max_requests, matching=matching)
    outcome = harness.outcome
    handler = harness
    conversations = harness.conversations
    kwargs = {"run_tool": harness.run_tool} if accepts_keyword(loop, "run_tool") else {}
    is_async = inspect.iscoroutinefunction(loop)

    def target() -> None:
        try:
            if is_async:
                async def main() -> None:
                    async with anthropic.AsyncAnthropic(
                            api_key=API_KEY, base_url=BASE_URL,
                            http_client=httpx2.AsyncClient(transport=AsyncSimulatorTransport(handler),
                                                           base_url=BASE_URL)) as client:
                        for params in conversations:
                            await loop(client, params, **kwargs)
                asyncio.run(main())
            else:
                with anthropic.Anthropic(api_key=API_KEY, base_url=BASE_URL,
                                         http_client=httpx2.Client(transport=SimulatorTransport(handler),
                                                                   base_url=BASE_URL)) as client:
                    for params in conversations:
                        loop(client, params, **kwargs)
        except Exception as e:  # the subject's fault, reported by the check
            outcome.raised = f"{type(e).__name__}: {e}"

    thread = threading.Thread(target=target, name="tooluse-loop", daemon=True)
    thread.start()
    # The deadline grows by the load measured while waiting; a miss is re-judged (timing.py).
    patience = Patience(deadline if deadline is not None
                        else scenario_deadline(scenario, len(conversations)), "loop",
                        thread_starvation(thread.native_id))
    patience.wait(lambda t: True if _joined(thread, t) else None)
    outcome.timed_out = thread.is_alive()
    return harness.finish()


def _joined(thread: threading.Thread, seconds: float) -> bool:
    thread.join(seconds)
    return not thread.is_alive()


def difference_of(mismatch: Mismatch) -> str:
    """A matcher refusal's first difference, one line (the simulator's
    :attr:`~simulator.events.Mismatch.line`: the first differing path and both values)."""
    return mismatch.line
