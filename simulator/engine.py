"""The replay engine: a plain ``(SimRequest) -> SimResponse`` function over cassettes.

API::

    from simulator.engine import Simulator
    sim = Simulator(cassette_or_list, *, matchers=DEFAULT_MATCHERS, rules=DEFAULT_RULES,
                    clock=SystemClock(), faults=None, strict_matching=True, seed=0)
    sim = Simulator.from_path("fixtures/ptc", recorded_time=True)   # a file or a directory
    resp = sim.handle(SimRequest("POST", "/v1/messages", headers, body=b"..."))   # or sim(req)
    sim.log          # list[simulator.events.Event], in order (log_limit=N keeps the last N)
    sim.mark(); sim.events_since(mark)   # positions that survive trimming
    sim.violations   # list[RuleViolated]; sim.mismatches, sim.served, sim.unmet,
                     # sim.faults_injected, sim.notes
    sim.state        # simulator.state.SimState (containers, pending calls, paused turn)
    sim.done         # every exchange of every cassette served
    sim.remaining()  # [(cassette, exchange index)] not served yet
    Simulator(c, recorded_time=True)  # a FakeClock from ``clock_start``, moved to each ``at``
    Simulator(c, disabled_rules=["ptc.strict_unsupported"])   # rules off by id
    Simulator(c, rules=ALL_RULES)     # also the rules off by default (messages.roles.alternate)
    Simulator(c, replay="repeat")     # serve already-served exchanges again (load tests, serve)
    Simulator(c, matchers="tolerant") # a named matcher set (simulator.matchers.MATCHER_SETS)
    Simulator(c, models=["claude-opus-9"])   # serve a model the table lacks (simulator.models)
    Simulator(c, check_headers=False) # no 401/400 for a request without x-api-key or
                                      # anthropic-version (simulator.headers)

Per ``POST /v1/messages``: (1) the rules run on the request (first violation answered with HTTP
400 ``invalid_request_error``; when the next exchange of a cassette has ``expect_rule`` equal to
that rule, the exchange counts as served); (2) the request is matched to the next exchange of the
first cassette whose next exchange matches on every matcher (the cassette in progress first, then
the others in order); a mismatch is answered with a 400 naming the matcher, both values, the
cassette and the exchange index (``strict_matching=False``: served anyway, mismatch logged);
what a tolerant matcher normalised to match is logged with the served exchange
(``ExchangeServed.normalised``) and sent in the response header :data:`NORMALISED_HEADER`;
(3) faults, if planned (``FaultPlan``; a faulted request does not consume the exchange, except
``slow``);
(4) the recorded response is served: errors verbatim, JSON as JSON or synthesized SSE when the
request has ``stream: true``, recorded events verbatim (or assembled into JSON for a non-stream
request); (5) the state learns from what was served. No I/O, no sockets: time comes from ``clock``.
A request passing every rule is never served an ``expect_rule`` exchange: the exchange after it
is served when it matches (the violation skipped, logged as ``ExchangeSkipped``), a conversation
starts preferably in a cassette not ending in a violation, and only the cassette in progress (or
the one cassette served) answers with a 400 saying the request should have broken the rule,
logged as ``ExpectationUnmet`` (:mod:`simulator.finder`).

``replay="repeat"`` (``tooluse serve --repeat``), as VCR.py's ``allow_playback_repeats``: a
request that matches no next exchange but matches, on every matcher, an exchange already served
(the one repeated last is tried first, then the others in cassette order) is served that exchange
again, statelessly: no cursor moves and the state learns nothing (faults still apply). Rules run
as always. Many clients can then send the same conversation concurrently and repeatedly; the
default (``"once"``) serves each exchange once, in order.

The engine answers ``/v1/messages`` and the paths below it, and nothing else (other APIs are
routed beside it by :class:`simulator.routes.Routes`): ``POST /v1/messages/count_tokens`` gets the
token estimate (:mod:`simulator.count_tokens`), with the same header checks and request ids as a
Messages request; other paths answer 404 ``not_found_error``; other methods on /v1/messages 405;
broken JSON 400.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .bodies import BodyParser
from .cassette import (
    Cassette,
    CassetteError,
    Exchange,
    iter_corpus,
    load_cassette,
    resolve_fixture,
)
from .clock import Clock, FakeClock, SystemClock, parse_rfc3339
from .count_tokens import handle_count_tokens
from .envelope import EnvelopeProfile, profile_named
from .errors import RequestIds, api_error, error_body, invalid_request, not_found
from .events import (
    EventLog,
    ExchangeServed,
    ExpectationUnmet,
    FaultInjected,
    Note,
    Rejected,
    RequestReceived,
    RuleViolated,
)
from .faults import FaultPlan, apply_fault
from .finder import ExchangeFinder, _p
from .headers import checks_on_by_default, header_error
from .history import SEEN, VERDICTS, History, RequestHistory, body_depth, verdict_key
from .http import SimRequest, SimResponse
from .json_body import NOT_AN_OBJECT, lone_surrogate, not_valid_json
from .json_body import PREFIX as JSON_PREFIX
from .matchers import (
    DEFAULT_MATCHERS,
    Matcher,
    MatchRequest,
    normalised,
    normalize_path,
    resolve_matchers,
)
from .models import env_models, lookup
from .registry import TOOLS
from .render import render_exchange
from .rules import (
    ALL_RULES,
    DEFAULT_RULES,
    DEFINITION_RULES,
    RULES,
    SERVED_RULES,
    Rule,
    RuleContext,
    run_rules,
)
from .state import SimState, answered_ids, container_param_id, lessons_of

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
#: Messages API request size limit (PROTOCOL.md §5: 413 from Cloudflare over 32 MB).
MAX_BODY_BYTES = 32 * 1024 * 1024
#: Deeper JSON is refused before any rule walks it [I: the API's limit is not documented].
MAX_DEPTH = 128
REPLAY_MODES = ("once", "repeat")
#: Response header listing what a tolerant matcher normalised to match the request ("; "-joined).
NORMALISED_HEADER = "x-tooluse-normalised"
_NORMALISED_HEADER_LIMIT = 2000


class Simulator(ExchangeFinder, EventLog):
    """Serves cassettes, judges requests by the protocol rules; see the module docstring."""

    def __init__(self, cassettes: Cassette | Sequence[Cassette], *,
                 matchers: Sequence[Matcher] | str = DEFAULT_MATCHERS,
                 rules: Iterable[Rule] = DEFAULT_RULES, clock: Clock | None = None,
                 faults: FaultPlan | None = None, strict_matching: bool = True, seed: int = 0,
                 state: SimState | None = None, chunk: int | None = None, ping_every: int = 0,
                 recorded_time: bool = False, disabled_rules: Iterable[str] = (),
                 log_limit: int | None = None, replay: str = "once",
                 models: Iterable[str] = (), check_headers: bool | None = None,
                 envelope: str | EnvelopeProfile | None = None) -> None:
        if replay not in REPLAY_MODES:
            raise ValueError(f"replay={replay!r}: expected one of {', '.join(REPLAY_MODES)} "
                             "('repeat' serves already-served exchanges again)")
        #: ``"once"``: each exchange once, in order; ``"repeat"``: served exchanges again too.
        self.replay = replay
        self._last_repeat: tuple[int, int] | None = None
        self.cassettes: list[Cassette] = [cassettes] if isinstance(cassettes, Cassette) else list(cassettes)
        if recorded_time and clock is None:
            starts = [t for t in (parse_rfc3339(c.clock_start) for c in self.cassettes) if t is not None]
            clock = FakeClock(min(starts) if starts else None)
        #: Move a FakeClock to each exchange's recorded ``at`` before judging its request.
        self.recorded_time = recorded_time
        #: A set's name (``"exact"``, ``"tolerant"``) or the matchers themselves.
        self.matchers = resolve_matchers(matchers)
        self._explains = any(m.explain is not None for m in self.matchers)
        disabled = set(disabled_rules)
        unknown = disabled - RULES.keys()
        if unknown:
            raise KeyError(f"unknown rule id(s) {sorted(unknown)}; known: {', '.join(RULES)}")
        self.rules = tuple(r for r in rules if r.id not in disabled) if disabled else tuple(rules)
        self.clock: Clock = clock or SystemClock()
        self.faults = faults
        self.strict_matching = strict_matching
        self.state = state or SimState(self.clock)
        #: Models served beyond the table (simulator.models; $TOOLUSE_MODELS adds more).
        self.state.extra_models = self.state.extra_models | frozenset(models)
        #: Answer a request without ``x-api-key``/``anthropic-version`` as the API does
        #: (simulator.headers); default on unless $TOOLUSE_HEADER_CHECKS turns it off.
        self.check_headers = checks_on_by_default() if check_headers is None else check_headers
        self.chunk, self.ping_every = chunk, ping_every
        #: The profile streams' envelopes are drawn from (simulator.envelope.PROFILES).
        self.envelope = profile_named(envelope)
        EventLog.__init__(self, log_limit)
        self._cursors = [0] * len(self.cassettes)
        self._active = 0
        self._ids = RequestIds(seed)
        self._slow: tuple[int, int, Any] | None = None
        self._noted: set[str] = set()
        self._lock = threading.RLock()
        self._history = History()
        self._bodies = BodyParser()
        #: Verdicts are remembered by rule id: only for the registered rule objects (_memo_rules).
        self._rule_ids, self._rules_but_definitions, self._memo_rules = _rule_split(self.rules)
        #: Rules judging against what was served (rules.SERVED_RULES): run on every request,
        #: never part of a remembered verdict.
        self._served_rules = tuple(r for r in self.rules if r.id in SERVED_RULES)
        self._judged_alone = (tuple(r for r in self.rules if r.id not in SERVED_RULES),
                              tuple(r for r in self._rules_but_definitions
                                    if r.id not in SERVED_RULES)) \
            if self._served_rules else (self.rules, self._rules_but_definitions)
        self._history.process_wide = self._memo_rules
        self._seed_containers()

    # --- public surface ----------------------------------------------------------------------

    @classmethod
    def from_path(cls, path: str | Path, **options: Any) -> Simulator:
        """A simulator over one cassette file or every cassette under a directory."""
        # A directory is read as a corpus (load_cassette reports one as a CassetteError).
        cassettes = (list(iter_corpus(path)) if resolve_fixture(path).is_dir()
                     else [load_cassette(path)])
        if not cassettes:
            raise CassetteError(path, "", "no cassettes found")
        return cls(cassettes, **options)

    def __call__(self, request: SimRequest) -> SimResponse:
        return self.handle(request)

    def remaining(self) -> list[tuple[Cassette, int]]:
        return [(c, i) for c, cur in zip(self.cassettes, self._cursors, strict=True)
                for i in range(cur, len(c.exchanges))]

    @property
    def done(self) -> bool:
        return not self.remaining()

    def handle(self, request: SimRequest) -> SimResponse:
        with self._lock:  # one request at a time: cursors, state and log move together
            return self._handle(request)

    def _handle(self, request: SimRequest) -> SimResponse:
        rid = self._ids.new()
        path = normalize_path(request.path)
        if self.check_headers:
            refused = header_error(request.headers, rid)
            if refused is not None:
                return self._reject(rid, refused.status, refused.body["error"]["message"],
                                    refused)
        if path == COUNT_TOKENS_PATH:  # the token estimate (simulator.count_tokens)
            return self._with_request_id(handle_count_tokens(
                request, request_id=rid, models=self.state.extra_models), rid)
        if path != MESSAGES_PATH:
            return self._reject(rid, 404, f"no route {request.method} {path}",
                                not_found(request_id=rid))
        if request.method != "POST":
            return self._reject(rid, 405, f"method {request.method}", api_error(
                405, "invalid_request_error", f"Method `{request.method}` is not allowed on "
                f"{MESSAGES_PATH}; send the request with POST.", request_id=rid,
                headers={"allow": "POST"}))
        if len(request.body) > MAX_BODY_BYTES:
            return self._reject(rid, 413, "body too large", api_error(
                413, "request_too_large", "Request exceeds the maximum allowed number of bytes "
                f"({MAX_BODY_BYTES} for the Messages API).", request_id=rid))
        # A body seen before (same bytes, beta header and rules) under a blank state: what was
        # derived from it then (its verdict key, the matchers' keys) holds (history.SEEN).
        judged = self._judged_by()
        seen_key = (request.body, request.headers.get("anthropic-beta"), judged) \
            if self._memo_rules and self.state.blank() else None
        seen = SEEN.get(seen_key) if seen_key is not None else None
        lone = lone_surrogate(request.body)
        if lone is not None:  # valid to Python's json, not to the API's parser
            return self._reject(rid, 400, "broken JSON", invalid_request(
                f"{JSON_PREFIX}: {lone}", request_id=rid))
        try:
            parsed = self._bodies.parse(request)
        except RecursionError:
            return self._reject(rid, 400, "nested too deeply", invalid_request(
                "There was an error parsing the body of your request: JSON nested too deeply. "
                f"Keep nesting under {MAX_DEPTH} levels.", request_id=rid))
        except (ValueError, UnicodeDecodeError) as e:
            return self._reject(rid, 400, "broken JSON", invalid_request(
                not_valid_json(e), request_id=rid))
        body = parsed.body
        hist: RequestHistory | None
        vkey: tuple[Any, ...] | None
        if seen is not None and isinstance(body, dict):
            hist, (vkey, match_keys) = None, seen
        else:
            hist = self._history.analyse(body, self._rule_ids, request.headers, parsed.texts) \
                if isinstance(body, dict) else None
            vkey = verdict_key(hist, body, judged) \
                if hist is not None and self._memo_rules else None
            match_keys = None
        known = VERDICTS.get(vkey) if vkey is not None else None
        # A request judged before passed the depth limit then (verdicts are kept past it only).
        if known is None and body_depth(body, hist, MAX_DEPTH) > MAX_DEPTH:
            return self._reject(rid, 400, "nested too deeply", invalid_request(
                f"The request body is nested more than {MAX_DEPTH} levels deep; keep it under "
                f"{MAX_DEPTH}.", request_id=rid))
        if not isinstance(body, dict):
            return self._reject(rid, 400, f"body not an object ({type(body).__name__})",
                                invalid_request(NOT_AN_OBJECT, request_id=rid))
        # The log keeps the bytes (parsed again on access): see events.RequestReceived.
        self._emit(RequestReceived(rid, request.method, path, None, dict(request.headers),
                                   raw=request.body))
        return self._messages(request, body, rid, hist, path, vkey, known,
                              seen_key if seen is None else None, match_keys)

    # --- the Messages flow -------------------------------------------------------------------

    def _messages(self, request: SimRequest, body: dict[str, Any], rid: str,
                  hist: RequestHistory | None = None, path: str = MESSAGES_PATH,
                  vkey: tuple[Any, ...] | None = None,
                  known: tuple[Any, ...] | None = None,
                  remember: tuple[bytes, str | None, tuple[str, ...]] | None = None,
                  match_keys: dict[Any, Any] | None = None) -> SimResponse:
        if self.recorded_time:
            self._follow_recorded_time()
        blank = self.state.blank()
        notes: list[str]
        combined: tuple[list[dict[str, Any]], list[int]] | None = None
        if known is not None and blank:
            # Judged before, identical, and the state holds nothing a rule reads: the same
            # verdict (simulator.history.VERDICTS).
            violations, notes = list(known[0]), list(known[1])
        else:
            ctx = RuleContext(body, request.headers, self.state, history=hist)
            same = hist is not None and hist.same_definitions
            violations = run_rules(ctx, self._judged_alone[1 if same else 0])
            notes = ctx.notes
            if vkey is not None and blank:
                VERDICTS.put(vkey, (tuple(violations), tuple(notes)))
            if hist is not None and "messages" in ctx.__dict__ \
                    and len(ctx.raw_messages) == len(hist.messages):
                combined = (ctx.messages, ctx._combined_of)
        if self._served_rules and self.state.served_turns:
            served = run_rules(RuleContext(body, request.headers, self.state),
                               self._served_rules)
            if served:
                violations = sorted(violations + served,
                                    key=lambda v: _RULE_ORDER.get(v.rule_id, len(_RULE_ORDER)))
        if hist is not None and not violations and not any(n.startswith("rule ") for n in notes):
            self._history.passed(hist, self._rule_ids, combined)
        for note in notes:
            if note not in self._noted:
                self._noted.add(note)
                self._emit(Note(rid, note))
        if violations:
            return self._answer_violation(body, violations, rid)
        incoming = MatchRequest(request.method, path, body, hist)
        incoming_keys: dict[str, Any] = {} if match_keys is None else {
            m.name: match_keys[m.key] for m in self.matchers if m.key in match_keys}
        picked = self._picked(request.headers, rid)
        if isinstance(picked, SimResponse):
            return picked
        self._pick = picked
        try:
            found = self._find(incoming, rid, incoming_keys)
        finally:
            self._pick = None
        if remember is not None and vkey is not None:
            by_fn = {m.key: incoming_keys[m.name] for m in self.matchers if m.name in incoming_keys}
            SEEN.put(remember, (vkey, by_fn))
        if isinstance(found, SimResponse):
            return found
        ci, ex, how = found
        replayed, repeated = how == "retry", how == "repeat"
        cassette = self.cassettes[ci]
        if ex.expect_rule:
            self._emit(ExpectationUnmet(rid, cassette.id, _p(cassette), ex.index,
                                             ex.expect_rule, None))
            return invalid_request(
                f"tooluse simulator: exchange {ex.index} of cassette `{cassette.id}` "
                f"({_p(cassette)}) expects this request to break rule `{ex.expect_rule}`, but it "
                "passes every enabled rule.", request_id=rid)
        stream = body.get("stream") is True
        fault = self.faults.pick(ex.index) if self.faults is not None and not replayed else None
        if fault is not None:
            self._emit(FaultInjected(rid, fault.kind, cassette.id, ex.index))
            if not fault.consumes_exchange:
                return apply_fault(fault, rid, lambda: self._render(ex, stream, rid, cassette)[0],
                                   self.clock)
        resp, message, mode = self._render(ex, stream, rid, cassette)
        if fault is not None:
            resp = apply_fault(fault, rid, lambda: resp, self.clock)
        normalised_for = self._normalised(ex, incoming) if self._explains else ()
        if normalised_for:
            resp.headers[NORMALISED_HEADER] = _header_value(normalised_for)
        if not replayed and not repeated:
            self._consume(ci)
            # Answered ids only matter while calls are pending (they are popped from those).
            self.state.on_request_served(
                body, answered=_answered(hist) if self.state.pending_calls else set())
            if message is not None:
                # What a message teaches is a pure function of it, and the message served for an
                # exchange depends only on whether it was streamed: kept with the exchange.
                lessons = ex.memo.get(("lessons", stream))
                if lessons is None:
                    lessons = ex.memo[("lessons", stream)] = lessons_of(message)
                # repl_state only matters to a container the message names
                self.state.on_response(message, lessons=lessons, repl_state=(
                    lessons.container_id is not None and self._repl_state(body)))
        if fault is not None and not repeated:  # only a slow fault gets here: remember it for
            self._slow = (ci, ex.index, body)     # a timed-out retry
        self._emit(ExchangeServed(rid, cassette.id, _p(cassette), ex.index, resp.status,
                                  resp.is_stream, mode, replayed=replayed, repeated=repeated,
                                  normalised=normalised_for))
        return resp

    def _normalised(self, ex: Exchange, incoming: MatchRequest) -> tuple[str, ...]:
        """What the tolerant matchers normalised to match ``incoming`` to ``ex`` (computed for
        the served exchange only)."""
        recorded = MatchRequest.from_recorded(ex.request)
        return tuple(normalised(self.matchers, recorded,
                                MatchRequest(incoming.method, incoming.path, incoming.body)))

    def _answer_violation(self, body: dict[str, Any], violations: list[Any], rid: str) -> SimResponse:
        first = violations[0]
        expecting = next((ci for ci, c in enumerate(self.cassettes)
                          if self._cursors[ci] < len(c.exchanges)
                          and c.exchanges[self._cursors[ci]].expect_rule == first.rule_id), None)
        agreeing = self._recorded_refusal(first) if expecting is None else None
        if agreeing is not None:
            # The cassette recorded the API refusing this request as the rule does (same status,
            # type and message, e.g. a recording of a misspelled model): serve the recording.
            c = self.cassettes[agreeing]
            ex = c.exchanges[self._cursors[agreeing]]
            for n, v in enumerate(violations):
                self._emit(RuleViolated(rid, v.rule_id, v.message, body, answered=n == 0,
                                        expected=n == 0))
            resp, _, mode = render_exchange(ex, False, rid)  # an error: never streamed
            self._consume(agreeing)
            self._emit(ExchangeServed(rid, c.id, _p(c), ex.index, resp.status, False, mode))
            return resp
        for n, v in enumerate(violations):
            self._emit(RuleViolated(rid, v.rule_id, v.message, body, answered=n == 0,
                                         expected=n == 0 and expecting is not None))
        resp = api_error(first.status, first.error_type, first.message, request_id=rid)
        if expecting is not None:
            c = self.cassettes[expecting]
            ex = c.exchanges[self._cursors[expecting]]
            self._consume(expecting)
            self._emit(ExchangeServed(rid, c.id, _p(c), ex.index, resp.status, False,
                                           "rule_error", expect_rule=first.rule_id))
        else:
            for ci, c in enumerate(self.cassettes):
                cur = self._cursors[ci]
                if cur < len(c.exchanges) and c.exchanges[cur].expect_rule:
                    self._emit(ExpectationUnmet(rid, c.id, _p(c), cur,
                                                     str(c.exchanges[cur].expect_rule), first.rule_id))
        return resp

    def _recorded_refusal(self, v: Any) -> int | None:
        """The cassette whose next exchange recorded the error ``v`` (status, type, message)."""
        for ci, c in enumerate(self.cassettes):
            cur = self._cursors[ci]
            if cur >= len(c.exchanges) or c.exchanges[cur].expect_rule:
                continue
            resp = c.exchanges[cur].response
            err = resp.get("body", {}).get("error") if isinstance(resp.get("body"), dict) else None
            if resp.get("status") == v.status and isinstance(err, dict) \
                    and err.get("type") == v.error_type and err.get("message") == v.message:
                return ci
        return None

    def _render(self, ex: Exchange, stream: bool, rid: str, cassette: Cassette,
                ) -> tuple[SimResponse, dict[str, Any] | None, str]:
        # A synthesized stream's chunk lengths are seeded by the exchange: the same at every run.
        return render_exchange(ex, stream, rid, chunk=self.chunk, ping_every=self.ping_every,
                               seed=f"{cassette.id}#{ex.index}", envelope=self.envelope)

    # --- helpers -----------------------------------------------------------------------------

    def _judged_by(self) -> tuple[Any, ...]:
        """What a remembered verdict depends on beyond the request: the rules, the models served
        beyond the table and the day (a model retires on a day)."""
        return (*self._rule_ids, ("models", tuple(sorted(self.state.extra_models | env_models())),
                                  self.clock.now().date().isoformat()))

    def _follow_recorded_time(self) -> None:
        c = self.cassettes[self._active] if self.cassettes else None
        cur = self._cursors[self._active] if c is not None else 0
        if c is None or cur >= len(c.exchanges) or not isinstance(self.clock, FakeClock):
            return
        at = parse_rfc3339(c.exchanges[cur].at)
        if at is not None and at > self.clock.now():
            self.clock.advance((at - self.clock.now()).total_seconds())

    def _consume(self, ci: int) -> None:
        self._cursors[ci] += 1
        self._active = ci
        self._slow = None

    def _repl_state(self, body: dict[str, Any]) -> bool:
        model = str(body.get("model") or "")
        m = lookup(model)
        if m is not None and not m.ptc:
            return False
        tools = body.get("tools")
        for t in tools if isinstance(tools, list) else []:
            tv = TOOLS.get(str(t.get("type"))) if isinstance(t, dict) else None
            if tv is not None and tv.repl_state and TOOLS[tv.effective_type(model)].repl_state:
                return True
        return False

    def _seed_containers(self) -> None:
        """Containers a cassette's requests use before any of its responses created them."""
        for c in self.cassettes:
            for cid in _containers_used_first(c):
                self.state.seed_container(cid)

    def _reject(self, rid: str, status: int, reason: str, resp: SimResponse) -> SimResponse:
        self._emit(Rejected(rid, status, reason))
        return resp

    @staticmethod
    def _with_request_id(resp: SimResponse, rid: str) -> SimResponse:
        resp.headers = {k.lower(): v for k, v in resp.headers.items()}
        resp.headers.setdefault("request-id", rid)
        if resp.is_stream:
            resp.headers.setdefault("content-type", "text/event-stream; charset=utf-8")
        else:
            resp.headers.setdefault("content-type", "application/json")
        return resp


_Split = tuple[tuple[str, ...], tuple[Rule, ...], bool]
_SPLITS: dict[tuple[int, ...], tuple[tuple[Rule, ...], _Split]] = {}


#: Each rule's place in the check order (a request breaking several is answered with the first).
_RULE_ORDER = {r.id: n for n, r in enumerate(ALL_RULES)}


def _rule_split(rules: tuple[Rule, ...]) -> _Split:
    """The ids of ``rules``, those of them that are not definition rules, and whether each is
    the registered rule of its id (kept per set of rule objects: the registered ones live as long
    as the process)."""
    key = tuple(map(id, rules))
    hit = _SPLITS.get(key)
    if hit is not None and hit[0] == rules:  # identical objects: compared by identity
        return hit[1]
    split = (tuple(r.id for r in rules), tuple(r for r in rules if r.id not in DEFINITION_RULES),
             all(RULES.get(r.id) is r for r in rules))
    if len(_SPLITS) < 256:
        _SPLITS[key] = (rules, split)
    return split


def _containers_used_first(c: Cassette) -> tuple[str, ...]:
    """The containers ``c``'s requests name before its responses created them (kept in
    ``c.memo``: a cassette is a value)."""
    seeded = c.memo.get("containers_used_first")
    if seeded is None:
        created: set[str] = set()
        out: list[str] = []
        for ex in c.exchanges:
            body = ex.request.get("body")
            cid = container_param_id(body) if isinstance(body, dict) else None
            if cid and cid not in created and ex.expect_rule != "container.unknown_or_expired":
                out.append(cid)
            rb = ex.response.get("body")
            if isinstance(rb, dict) and isinstance(rb.get("container"), dict):
                created.add(str(rb["container"].get("id")))
        seeded = c.memo["containers_used_first"] = tuple(out)
    return seeded


def _answered(hist: RequestHistory | None) -> set[str] | None:
    """The tool_use ids the request's messages answer, from each message's cached facts."""
    if hist is None:
        return None
    out: set[str] = set()
    for f, m in zip(hist.facts, hist.messages, strict=True):
        if f.answered is None:
            f.answered = frozenset(answered_ids(m)) if isinstance(m, dict) else frozenset()
        out |= f.answered
    return out


def _header_value(notes: Sequence[str]) -> str:
    """``notes`` as one ASCII header value (control and non-ASCII characters escaped), cut at a
    length proxies keep."""
    text = "; ".join(notes).encode("unicode_escape").decode("ascii")
    return text if len(text) <= _NORMALISED_HEADER_LIMIT else \
        text[:_NORMALISED_HEADER_LIMIT] + "..."


__all__ = ["MAX_BODY_BYTES", "MESSAGES_PATH", "NORMALISED_HEADER", "Simulator", "error_body"]
