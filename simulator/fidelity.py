"""The rules judged against live traffic: each captured request replayed through the default
rules, with the state learned from the earlier real answers of its recording, and compared with
the API's real answer (:mod:`simulator.captures` pairs them by recording and index).

    table = judge(load_captures(root))          # list[Verdict]
    print(agreement_table(table))                # accepted/refused x real 2xx/4xx

A :class:`Verdict` says what the rules did with the request (``violations``; empty = accepted)
and what the API did (``status``, ``error``). Requests to other endpoints (count_tokens, the
Files API) are judged by the simulator's handlers for them, not by the rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from .captures import Capture, CapturedExchange, Recording, recordings
from .clock import FakeClock
from .rules import DEFAULT_RULES, Rule, Violation
from .state import SimState, answered_ids, container_param_id, lessons_of

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"


@dataclass(frozen=True)
class Verdict:
    exchange: CapturedExchange
    #: What the simulator answered: the rule violations (Messages) or the handler's answer.
    violations: tuple[Violation, ...]
    #: The simulator's status (200 when accepted).
    sim_status: int
    notes: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.exchange.id

    @property
    def accepted(self) -> bool:
        return self.sim_status < 400

    @property
    def real_status(self) -> int | None:
        return self.exchange.status

    @property
    def real_error(self) -> dict[str, Any] | None:
        return self.exchange.error

    @property
    def first(self) -> Violation | None:
        return self.violations[0] if self.violations else None

    @property
    def account_state(self) -> bool:
        """The live answer is about the account, not the request: authentication, permission,
        rate limits, overload, or a 400 about billing ("Your credit balance is too low ...");
        such an answer says nothing about whether the request was valid."""
        status = self.real_status
        if status in (401, 403, 429, 529):
            return True
        err = self.real_error or {}
        return status == 400 and bool(_ACCOUNT.search(str(err.get("message") or "")))

    @property
    def headers_unknown(self) -> bool:
        """Refused by a rule a beta header satisfies, on a request recorded without its
        headers: the capture cannot tell whether the header was sent."""
        return self.exchange.headers is None and self.first is not None \
            and self.first.rule_id in BETA_SATISFIED


@dataclass
class Replay:
    """Options of :func:`judge`."""

    rules: Sequence[Rule] = DEFAULT_RULES
    #: Capture prefix -> rule ids the recorder's dropped headers make unjudgeable.
    header_gaps: Mapping[str, Iterable[str]] = field(default_factory=dict)
    #: The day to judge a recording whose day is unknown (None: retirement is not judged for it:
    #: a retired model was served when the recording was made, on a day the capture does not say).
    as_of: date | None = None
    #: Models served beyond the table (as ``Simulator(models=...)``).
    models: frozenset[str] = frozenset()


#: Rules that a beta header (``anthropic-beta``) can satisfy: a refusal by one of them says
#: nothing when the recorder kept no request headers (the header may have been sent).
BETA_SATISFIED = frozenset({"beta.legacy_header_required", "container.param_is_string",
                            "content.file_source_needs_files_beta",
                            "thinking.budget_below_max_tokens",
                            "request.prompt_within_context_window"})

#: A 400 whose message is about the account (billing, spend limits, a disabled organization).
_ACCOUNT = re.compile(r"credit balance|billing|spend(ing)? limit|usage limit|organization has been "
                      r"disabled|organization is disabled|purchase credits", re.IGNORECASE)

#: The note a verdict carries when its recording's day is unknown.
UNDATED = "recording day unknown: model retirement not judged"


def _seed_containers(rec: Recording, state: SimState) -> None:
    """Containers a recording's requests name before any of its captured answers created them
    (the recording starts mid-conversation, or the creating answer was not kept)."""
    created: set[str] = set()
    for ex in rec.exchanges:
        body = ex.body
        cid = container_param_id(body) if isinstance(body, dict) else None
        if cid and cid not in created and state.container(cid) is None:
            state.seed_container(cid)
        m = ex.message
        c = m.get("container") if m is not None else None
        if isinstance(c, dict) and c.get("id"):
            created.add(str(c["id"]))


def _learn(state: SimState, ex: CapturedExchange) -> None:
    m = ex.message
    body = ex.body
    if m is None or not isinstance(body, dict) or (ex.status or 0) >= 400:
        return
    answered: set[str] = set()
    for msg in body.get("messages") or []:
        if isinstance(msg, dict):
            answered |= answered_ids(msg)
    state.on_request_served(body, answered=answered)
    state.on_response(m, lessons=lessons_of(m))


def judge(captures: Iterable[Capture], replay: Replay | None = None) -> list[Verdict]:
    """Every captured request with a body, judged in its recording's order."""
    opts = replay or Replay()
    out: list[Verdict] = []
    for rec in recordings(captures):
        day = rec.recorded_on or opts.as_of
        state = SimState(FakeClock(datetime.combine(day, time(12), UTC)) if day else None)
        state.extra_models = frozenset(opts.models)
        _seed_containers(rec, state)
        for ex in rec.exchanges:
            if ex.request is None:
                continue
            out.append(_judge_one(ex, state, opts, dated=day is not None))
            _learn(state, ex)
    return out


def _judge_one(ex: CapturedExchange, state: SimState, opts: Replay, *, dated: bool = True,
               ) -> Verdict:
    body = ex.body
    if ex.path == COUNT_TOKENS:
        from .count_tokens import count_tokens_response
        resp = count_tokens_response(body, models=state.extra_models)
        err = resp.body.get("error") if isinstance(resp.body, dict) else None
        refused = (Violation("count_tokens", str(err.get("message")), resp.status,
                             str(err.get("type"))),) if isinstance(err, dict) else ()
        return Verdict(ex, refused, resp.status)
    if ex.path != MESSAGES or not isinstance(body, dict):
        return Verdict(ex, (), 200, ("not a Messages request: not judged by the rules",))
    gaps = set(opts.header_gaps.get(ex.id.split("__")[0], ())) if ex.headers is None else set()
    if not dated:
        gaps.add("model.not_retired")
    rules = [r for r in opts.rules if r.id not in gaps]
    from .rules import RuleContext, run_rules
    ctx = RuleContext(body, ex.headers or {}, state)
    vs = run_rules(ctx, rules)
    notes = [*ctx.notes, *(() if dated else (UNDATED,))]
    return Verdict(ex, tuple(vs), vs[0].status if vs else 200, tuple(notes))


def bucket(status: int | None) -> str:
    if status is None:
        return "no answer"
    if status < 300:
        return "2xx"
    if status in (400, 404):
        return "400/404"
    return str(status)


def agreement_table(verdicts: Iterable[Verdict]) -> str:
    """Rows: what the simulator did (accepted / refused); columns: the real answer (2xx, 400/404,
    and other statuses — 401/429 say nothing about the request's validity)."""
    counts: dict[tuple[str, str], int] = {}
    cols: list[str] = []
    for v in verdicts:
        col = bucket(v.real_status)
        if col not in cols:
            cols.append(col)
        key = ("accepted" if v.accepted else "refused", col)
        counts[key] = counts.get(key, 0) + 1
    order = ["2xx", "400/404", "401", "429", "no answer"]
    cols = sorted(cols, key=lambda c: order.index(c) if c in order else len(order))
    lines = ["| simulator \\ real | " + " | ".join(cols) + " |",
             "|---|" + "---|" * len(cols)]
    for row in ("accepted", "refused"):
        lines.append(f"| {row} | " + " | ".join(str(counts.get((row, c), 0)) for c in cols) + " |")
    return "\n".join(lines)


__all__ = ["BETA_SATISFIED", "COUNT_TOKENS", "MESSAGES", "UNDATED", "Replay", "Verdict", "agreement_table", "bucket", "judge"]
