"""How the engine finds the recorded exchange a request gets (a mixin of
:class:`simulator.engine.Simulator`; see its docstring for the order and the replay modes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .cassette import Cassette, Exchange
from .errors import invalid_request
from .events import Event, ExchangeSkipped, Mismatch
from .history import History
from .http import SimResponse
from .matchers import Matcher, MatchFailure, MatchRequest, difference

#: The matchers an exchange expecting a rule violation is matched on.
_EXPECT_RULE_MATCHERS = frozenset({"method", "path", "model"})


def _p(c: Cassette) -> str | None:
    return str(c.path) if c.path is not None else None


def _names(c: Cassette) -> set[str]:
    """What a client may call a cassette: its id, the id's last part (its scenario), its file's
    name, the name without ``.json``."""
    file = (_p(c) or "").replace("\\", "/").rsplit("/", 1)[-1]
    return {c.id, c.id.rsplit("/", 1)[-1], file, file.removesuffix(".json")} - {""}


#: A client names the conversation it wants: the cassette's id, file name or file stem.
CASSETTE_HEADER = "x-tooluse-cassette"
#: What to do when a conversation is wanted again (every "served already" answer says it).
AGAIN_HINT = ("serve with --repeat, replay='repeat', to answer served exchanges again; or "
              "POST /_tooluse/reset to `tooluse serve` to start every conversation over")


class ExchangeFinder:
    """``_find``: the next exchange matching a request (or a repeat, or the error to answer)."""

    cassettes: list[Cassette]
    matchers: tuple[Matcher, ...]
    strict_matching: bool
    replay: str
    _cursors: list[int]
    _active: int
    _slow: tuple[int, int, Any] | None
    #: The cassettes the request named (CASSETTE_HEADER), or None: every one.
    _pick: tuple[int, ...] | None = None
    _last_repeat: tuple[int, int] | None
    _history: History
    _emit: Callable[[Event], None]

    def _find(self, incoming: MatchRequest, rid: str, incoming_keys: dict[str, Any] | None = None
              ) -> tuple[int, Exchange, str] | SimResponse:
        """``(cassette index, exchange, how)``, how being ``next``, ``retry`` (after a slow
        fault) or ``repeat``; or the error response. ``incoming_keys``: the request's matcher
        keys by matcher name, known ahead or filled here (what the caller can keep).

        The request passed every rule, so an exchange recorded as a deliberate violation
        (``expect_rule``) is not its answer: a cassette whose next exchange is one serves the
        corrected request recorded after it (the violation is skipped, logged as
        :class:`ExchangeSkipped`). The cassette in progress is tried first; among the others, the
        first in order that matches, preferring one a correct client can finish (one that does
        not end in a deliberate violation, a dead end for it) while one is left. The request gets the "expects this request to break rule" answer only
        from the cassette in progress, or when one cassette is served."""
        if self._slow is not None and self._slow[2] == dict(incoming.body):
            # The same request right after a slow response: a client that timed out retries.
            ci, idx, _ = self._slow
            self._slow = None
            return ci, self.cassettes[ci].exchanges[idx], "retry"
        order = [self._active] + [i for i in range(len(self.cassettes)) if i != self._active]
        if self._pick is not None:  # the client named its conversation (CASSETTE_HEADER)
            order = [i for i in order if i in self._pick]
        started_again = False
        failures: list[tuple[int, MatchFailure]] = []
        unmet: list[int] = []  # cassettes whose next exchange expects a violation (endpoint and model match)
        fallback: tuple[int, int] | None = None  # a match in a cassette ending in a violation
        if incoming_keys is None:
            incoming_keys = {}
        for ci in order:
            c = self.cassettes[ci]
            cur = self._cursors[ci]
            if cur >= len(c.exchanges):
                continue
            ex = c.exchanges[cur]
            at = cur
            in_progress = ci == self._active and cur > 0
            if not in_progress and self.replay == "repeat" and not started_again:
                # Stateless replay is deterministic: a request that starts a conversation served
                # before gets that conversation again, not the next cassette that also starts
                # with it (a client run twice sees the same conversation; another is picked by
                # name, CASSETTE_HEADER).
                started_again = True
                again = self._find_repeat(incoming, incoming_keys, starts_only=order)
                if again is not None:
                    return again[0], again[1], "repeat"
            if ex.expect_rule:
                at = next((i for i in range(cur, len(c.exchanges))
                           if not c.exchanges[i].expect_rule), len(c.exchanges))
                if at == len(c.exchanges) or self._first_failure(
                        ci, c.exchanges[at], self.matchers, incoming, incoming_keys) is not None:
                    # An exchange expecting a violation is matched on the rule it expects (and
                    # the endpoint and model), not on the fields the broken request may lack.
                    expect = [m for m in self.matchers if m.name in _EXPECT_RULE_MATCHERS]
                    if self._first_failure(ci, ex, expect, incoming, incoming_keys) is None:
                        if in_progress:  # the conversation under way expected a violation
                            return ci, ex, "next"
                        unmet.append(ci)
                    continue
            else:
                failure = self._first_failure(ci, ex, self.matchers, incoming, incoming_keys)
                if failure is not None:
                    failures.append((ci, failure))
                    continue
            if in_progress or not c.exchanges[-1].expect_rule:
                return self._take(ci, at, rid)
            if fallback is None:
                fallback = (ci, at)
        if fallback is not None:
            return self._take(*fallback, rid)
        if self.replay == "repeat":
            again = self._find_repeat(incoming, incoming_keys)
            if again is not None:
                return again[0], again[1], "repeat"
        if unmet and len(self.cassettes) == 1:
            return 0, self.cassettes[0].exchanges[self._cursors[0]], "next"
        if not failures:
            return self._exhausted(rid, unmet)
        ci, failure = failures[0]
        c = self.cassettes[ci]
        cur = self._cursors[ci]
        matcher = next(m for m in self.matchers if m.name == failure.matcher)
        where = difference(matcher, MatchRequest.from_recorded(c.exchanges[cur].request), incoming)
        self._emit(Mismatch(rid, c.id, _p(c), cur, failure.matcher, failure.expected,
                            failure.received, refused=self.strict_matching, difference=where))
        if not self.strict_matching and not c.exchanges[cur].expect_rule:
            self._active = ci
            return ci, c.exchanges[cur], "next"
        return invalid_request(
            f"tooluse simulator: the request does not match exchange {cur} of cassette `{c.id}` "
            f"({_p(c)}): matcher `{failure.matcher}`: {where.line}."
            f"{self._served_already(incoming, incoming_keys)}",
            request_id=rid)

    def _picked(self, headers: Mapping[str, str], rid: str) -> tuple[int, ...] | SimResponse | None:
        """The cassettes a request names in CASSETTE_HEADER (by id, file name or stem), None when
        it names none, or the error answered when it names no cassette served here."""
        name = next((v for k, v in headers.items() if k.lower() == CASSETTE_HEADER), None)
        if name is None:
            return None
        name = name.strip()
        found = tuple(i for i, c in enumerate(self.cassettes) if name in _names(c))
        if found:
            return found
        known = ", ".join(f"`{c.id}`" for c in self.cassettes[:10])
        more = f" and {len(self.cassettes) - 10} more" if len(self.cassettes) > 10 else ""
        return invalid_request(f"tooluse simulator: {CASSETTE_HEADER}: {name!r} names no cassette "
                               f"served here; served: {known}{more}", request_id=rid)

    def _served_already(self, incoming: MatchRequest, incoming_keys: dict[str, Any]) -> str:
        """A hint when the request matches an exchange served already (a conversation run again
        without ``replay="repeat"``)."""
        if self.replay == "repeat":
            return ""
        last = self._last_repeat
        again = self._find_repeat(incoming, incoming_keys)
        self._last_repeat = last
        if again is None:
            return ""
        c = self.cassettes[again[0]]
        return (f" It matches exchange {again[1].index} of cassette `{c.id}`, served already: "
                f"each exchange is served once ({AGAIN_HINT}).")

    def _take(self, ci: int, at: int, rid: str) -> tuple[int, Exchange, str]:
        """Serve exchange ``at`` of cassette ``ci`` next, skipping the deliberate violations
        before it (the request passed every rule: it is the corrected request)."""
        c = self.cassettes[ci]
        for i in range(self._cursors[ci], at):
            self._emit(ExchangeSkipped(rid, c.id, _p(c), i, str(c.exchanges[i].expect_rule)))
        self._cursors[ci] = at
        self._active = ci
        return ci, c.exchanges[at], "next"

    def _exhausted(self, rid: str, unmet: list[int]) -> SimResponse:
        names = ", ".join(f"`{c.id}`" for c in self.cassettes)
        self._emit(Mismatch(rid, "", None, -1, "exhausted", None, None))
        if not unmet:
            return invalid_request(
                f"tooluse simulator: every exchange of cassette(s) {names} has been served; this "
                f"request has no recorded answer ({AGAIN_HINT}).", request_id=rid)
        left = ", ".join(f"`{self.cassettes[ci].id}` (exchange {self._cursors[ci]}: rule "
                         f"`{self.cassettes[ci].exchanges[self._cursors[ci]].expect_rule}`)"
                         for ci in unmet[:5])
        more = f" and {len(unmet) - 5} more" if len(unmet) > 5 else ""
        return invalid_request(
            "tooluse simulator: this request has no recorded answer left: it passes every rule, "
            f"and the exchanges not served yet are requests recorded breaking a rule on purpose "
            f"({left}{more}). Every other conversation has been served ({AGAIN_HINT}).",
            request_id=rid)

    def _find_repeat(self, incoming: MatchRequest, incoming_keys: dict[str, Any],
                     starts_only: Sequence[int] | None = None) -> tuple[int, Exchange] | None:
        """An already-served exchange matching ``incoming`` on every matcher (``replay="repeat"``):
        the last one repeated first, then every served one in cassette order. ``starts_only``:
        only the first exchange (a conversation's start) of these cassettes, in cassette order."""
        def candidates() -> Iterator[tuple[int, int]]:
            if starts_only is not None:
                yield from ((ci, 0) for ci in sorted(starts_only) if self._cursors[ci] > 0)
                return
            if self._last_repeat is not None:
                yield self._last_repeat
            for ci, cur in enumerate(self._cursors):
                yield from ((ci, i) for i in range(cur))

        for ci, i in candidates():
            ex = self.cassettes[ci].exchanges[i]
            if ex.expect_rule:
                continue
            if self._first_failure(ci, ex, self.matchers, incoming, incoming_keys) is None:
                self._last_repeat = (ci, i)
                return ci, ex
        return None

    def _first_failure(self, ci: int, ex: Exchange, matchers: Sequence[Matcher],
                       incoming: MatchRequest, incoming_keys: dict[str, Any]) -> MatchFailure | None:
        """:func:`first_failure`, with recorded keys computed once per exchange (for good) and
        incoming ones once per request."""
        recorded: MatchRequest | None = None
        # Keys of the recorded request are pure: kept on the exchange, by key function, for every
        # simulator replaying it (:attr:`simulator.cassette.Exchange.memo`).
        memo = ex.memo.get("match")
        if memo is None:
            memo = ex.memo["match"] = {}
        for m in matchers:
            rk = m.key
            if rk in memo:
                want = memo[rk]
            else:
                if recorded is None:
                    recorded = MatchRequest.from_recorded(ex.request)
                    if isinstance(recorded.body, dict):
                        recorded = MatchRequest(recorded.method, recorded.path, recorded.body,
                                                self._history.analyse(recorded.body))
                want = memo[rk] = m.key(recorded)
            got = incoming_keys[m.name] if m.name in incoming_keys else \
                incoming_keys.setdefault(m.name, m.key(incoming))
            if want != got and (m.same is None or not m.same(want, got)):  # m.agrees, inlined
                return MatchFailure(m.name, want, got)
        return None

