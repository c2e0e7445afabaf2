"""The whole fixture corpus as agent-loop runs: every recorded Messages conversation a loop can drive.

:func:`plan` turns each cassette of :func:`simulator.cassette.iter_corpus` into a
:class:`~conformance.loops.scenarios.LoopScenario` run through the same harness as the hand-picked
scenarios (:func:`conformance.loops.run.run_loop`), or excludes it with a reason read from its
exchanges (never from a list of ids):

- **dropped**: an exchange with ``expect_rule`` is a request that breaks a rule on purpose (or, for
  ``container.unknown_or_expired``, one the server refuses for its state); a correct loop never
  sends it, so it is left out of the engine's expectation and the loop must send the exchanges
  around it (the corrected request that follows).
- **conversations**: a kept exchange whose first message differs from the previous one's, or whose
  history is shorter, starts a new conversation (a container reused by a later question); the loop
  is called once per conversation, in order, against the same engine.
- **excluded**, in this order: a cassette with a request other than ``POST /v1/messages`` (a
  Managed Agents session, not a Messages conversation); one whose every request is dropped (a
  request refused on purpose and nothing else); one with an API error the SDK does not retry, or
  ending in an error, or with a stream ending in an ``error`` event (the loop can only raise it).

Retried errors (429, 5xx, ``x-should-retry: true``) followed by the recorded success stay: the
client retries them. A clock (``clock_start`` / ``at``) is followed by the engine
(``recorded_time=True``), so nothing is excluded for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.cassette import Cassette, default_fixtures_root, iter_corpus
from simulator.rules import RULES
from simulator.sources import Source, protocol

from .run import LoopOutcome, run_loop
from .scenarios import LoopScenario

MESSAGES_PATH = "/v1/messages"
#: Statuses the SDK retries by itself (its ``_should_retry``), unless ``x-should-retry`` says no.
RETRIED_STATUSES = frozenset({408, 409, 429})

#: What the corpus check cites: the tool_use / tool_result rules a loop owes every conversation.
SOURCE = protocol("1. Programmatic tool calling: Error texts and conditions")


@dataclass(frozen=True)
class Excluded:
    cassette: str
    reason: str


def _retried(response: dict[str, Any]) -> bool:
    status = int(response.get("status") or 0)
    headers = response.get("headers") or {}
    should = str(headers.get("x-should-retry", "")).lower() if isinstance(headers, dict) else ""
    if should in ("true", "false"):
        return should == "true"
    return status in RETRIED_STATUSES or status >= 500


def _stream_error(response: dict[str, Any]) -> bool:
    return any(isinstance(e, dict) and e.get("event") == "error"
               for e in response.get("events") or [])


def exclusion(cassette: Cassette) -> str | None:
    """Why a loop cannot drive this cassette, or None when it can."""
    other = next((ex for ex in cassette.exchanges
                  if ex.request.get("method") != "POST" or ex.request.get("path") != MESSAGES_PATH),
                 None)
    if other is not None:
        return (f"not a Messages conversation: exchange {other.index} is "
                f"{other.request.get('method')} {other.request.get('path')}")
    kept = [ex for ex in cassette.exchanges if not ex.expect_rule]
    if not kept:
        rules = sorted({str(ex.expect_rule) for ex in cassette.exchanges})
        return f"every request breaks a rule on purpose ({', '.join(rules)}): a correct loop sends none"
    for n, ex in enumerate(kept):
        status = int(ex.response.get("status") or 0)
        if _stream_error(ex.response):
            return f"exchange {ex.index} is a stream ending in an `error` event: the loop can only raise it"
        if status >= 400 and (n == len(kept) - 1 or not _retried(ex.response)):
            return (f"exchange {ex.index} is an HTTP {status} the client does not retry: the loop "
                    "can only raise it")
    return None


def stop_reason(response: dict[str, Any]) -> str | None:
    """The stop reason of a recorded 2xx message (JSON or SSE), else None."""
    if int(response.get("status") or 0) >= 400:
        return None
    body = response.get("body")
    if isinstance(body, dict) and body.get("type") == "message":
        return str(body.get("stop_reason")) if body.get("stop_reason") else None
    for event in reversed(response.get("events") or []):
        data = event.get("data") if isinstance(event, dict) else None
        if isinstance(data, dict) and data.get("type") == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            return str(reason) if reason else None
    return None


#: A response with these stop reasons is continued by the loop itself; any other ends the turn.
CONTINUED = frozenset({"tool_use", "pause_turn"})


@dataclass(frozen=True)
class CorpusRun:
    scenario: LoopScenario
    #: The file's exchange index of each exchange the engine expects, in order.
    kept: tuple[int, ...]
    #: The recording ends with a dropped request where the loop must go on (after ``tool_use`` or
    #: ``pause_turn``): the loop's next request is judged by the rules, then has no answer.
    open_end: bool
    #: What the conversation asks of a loop (:func:`kinds`): a loop may declare kinds unsupported.
    kinds: frozenset[str] = frozenset()


def corpus_run(cassette: Cassette, source: Source = SOURCE, root: Path | None = None) -> CorpusRun:
    """The run of a drivable cassette: its ``expect_rule`` exchanges dropped, a loop call per
    user turn (after a response that ended the turn, the next exchange is a new call)."""
    dropped = tuple(ex.index for ex in cassette.exchanges if ex.expect_rule)
    kept = [ex for ex in cassette.exchanges if not ex.expect_rule]
    then = tuple(i for i in range(1, len(kept))
                 if (reason := stop_reason(kept[i - 1].response)) and reason not in CONTINUED)
    base = root or default_fixtures_root()
    path = Path(cassette.path) if cassette.path else base / f"{cassette.id}.json"
    try:
        relative = str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        relative = str(path)
    scenario = LoopScenario(cassette.id, relative, cassette.title, source, dropped=dropped,
                            then=then)
    open_end = bool(cassette.exchanges[-1].expect_rule) and \
        stop_reason(kept[-1].response) in CONTINUED
    return CorpusRun(scenario, tuple(ex.index for ex in kept), open_end,
                     kinds(cassette, kept, then, open_end))


#: The kinds of conversation, read from a cassette: its family (``bash``, ``text_editor``,
#: ``code_execution``, ``ptc``, ``mixed``, ``web``, ``messages``, ``api_errors``) and these.
KINDS = {
    "streamed": "the requests ask for `stream: true`",
    "pause_turn": "a response stops with `pause_turn`",
    "beta_header": "the requests carry an `anthropic-beta` header (params `extra_headers`)",
    "retried_error": "a 429/5xx answer the client retries comes first",
    "several_turns": "the loop is called again for a later user turn",
    "open_end": "the recording ends at a request refused on purpose",
}


def kinds(cassette: Cassette, kept: list[Any], then: tuple[int, ...], open_end: bool) -> frozenset[str]:
    found = {cassette.family}
    bodies = [ex.request.get("body") or {} for ex in kept]
    if any(isinstance(b, dict) and b.get("stream") is True for b in bodies):
        found.add("streamed")
    if any(stop_reason(ex.response) == "pause_turn" for ex in kept):
        found.add("pause_turn")
    if any((ex.request.get("headers") or {}).get("anthropic-beta") for ex in kept):
        found.add("beta_header")
    if any(int(ex.response.get("status") or 0) >= 400 for ex in kept):
        found.add("retried_error")
    if then:
        found.add("several_turns")
    if open_end:
        found.add("open_end")
    return frozenset(found)


@dataclass(frozen=True)
class CorpusPlan:
    runs: tuple[CorpusRun, ...]
    excluded: tuple[Excluded, ...]


def plan(cassettes: Iterable[Cassette] | None = None, source: Source = SOURCE) -> CorpusPlan:
    """Every cassette of the corpus: a run, or the reason it is excluded."""
    runs: list[CorpusRun] = []
    excluded: list[Excluded] = []
    for cassette in cassettes if cassettes is not None else iter_corpus():
        reason = exclusion(cassette)
        if reason:
            excluded.append(Excluded(cassette.id, reason))
        else:
            runs.append(corpus_run(cassette, source))
    return CorpusPlan(tuple(runs), tuple(excluded))


def run_corpus(loop: Callable[..., Any] | None, runs: Iterable[CorpusRun], *, jobs: int = 4,
               deadline: float | None = None, max_timeouts: int = 3, matching: str = "exact",
               drive: Callable[[LoopScenario], LoopOutcome] | None = None) -> list[LoopOutcome | None]:
    """Run the loop over each cassette, ``jobs`` at a time (each run has its own engine, client
    and thread); outcomes in the runs' order. After ``max_timeouts`` runs timed out, the runs not
    started yet are not run (None): a hanging loop costs a few deadlines, not one per cassette.
    ``drive`` (a subject's :meth:`~conformance.loops.subject.LoopSubject.drive`) replaces
    ``loop`` for subjects that are not a Python callable (``--loop-cmd``); ``deadline`` defaults
    to :func:`~conformance.loops.run.scenario_deadline` per cassette."""
    items = list(runs)
    lock = threading.Lock()
    timeouts = 0

    def one(run: CorpusRun) -> LoopOutcome | None:
        nonlocal timeouts
        with lock:
            if timeouts >= max_timeouts:
                return None
        if drive is not None:
            outcome = drive(run.scenario)
        else:
            assert loop is not None, "run_corpus needs a loop or a drive function"
            outcome = run_loop(loop, run.scenario, deadline=deadline, matching=matching)
        if outcome.timed_out:
            with lock:
                timeouts += 1
        return outcome

    if jobs <= 1:
        return [one(r) for r in items]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="tooluse-corpus") as pool:
        return list(pool.map(one, items))


def not_judged(outcome: LoopOutcome) -> str | None:
    """Why a run says nothing about the loop (a matcher refused a request and no rule refused
    one: the simulation could not answer it as the API would), or None."""
    if outcome.violations or not outcome.refusals:
        return None
    return outcome.refusals[0].line()


def problems(run: CorpusRun, outcome: LoopOutcome) -> list[str]:
    """What went wrong in one run, one line each, rule ids first (exchange indices as in the
    file); empty when the loop drove the conversation as recorded, or when the run cannot be
    judged (:func:`not_judged`)."""
    def original(i: int) -> int:
        return run.kept[i] if 0 <= i < len(run.kept) else i

    if not_judged(outcome):
        return []
    lines = [f"{rule_id}: {message}" for rule_id, message, _ in outcome.violations]
    past_end = outcome.exhausted[1:] if run.open_end else outcome.exhausted
    if past_end:
        lines.append(f"{len(past_end)} request(s) after the conversation ended")
    if outcome.timed_out:
        lines.append("timed out before the conversation ended")
    if lines:  # what the loop raised and left unserved follows from the refused request
        return lines
    # An open end: the loop's request past the recording passed every rule, then got a 400 that
    # the loop may well raise.
    if outcome.raised and not (run.open_end and outcome.exhausted):
        lines.append(f"the loop raised {outcome.raised}")
    if outcome.unserved:
        lines.append(f"unserved: exchanges {[original(i) for i in outcome.unserved]} of the "
                     "recording were never requested")
    elif run.open_end and not outcome.exhausted and not lines:
        lines.append(f"stopped early: after exchange {run.kept[-1]} the loop must answer (the "
                     "recording answers wrongly on purpose there) and it sent nothing")
    return lines


def rule_ids(outcome: LoopOutcome) -> list[str]:
    """The rule ids a run violated, in order, once each."""
    return list(dict.fromkeys(rule_id for rule_id, _, _ in outcome.violations))


def reproducer(outcome: LoopOutcome) -> Any:
    """The offending request: the first violating or unmatched one, else the last one sent."""
    if outcome.violations:
        return outcome.violations[0][2]
    if outcome.mismatches:
        return outcome.mismatches[0][1]
    return outcome.requests[-1] if outcome.requests else None


@dataclass(frozen=True)
class CorpusVerdict:
    """What a loop did over the corpus: the failing cassettes (id, problems, offending request,
    the requests it sent), in corpus order, and the runs not made."""
    driven: int
    excluded: int
    failures: tuple[tuple[str, tuple[str, ...], Any, list[Any]], ...]
    not_run: tuple[str, ...]
    rules: tuple[str, ...]
    #: Conversations not judged: (cassette id, the first matcher refusal, one line).
    unjudged: tuple[tuple[str, str], ...] = ()

    def unjudged_note(self) -> str:
        """The conversations not judged, counted, with the first one's difference."""
        if not self.unjudged:
            return ""
        cassette_id, line = self.unjudged[0]
        return (f"{len(self.unjudged)} corpus conversation(s) not judged: a matcher refused a "
                f"request (first: {cassette_id}: {line})")

    def message(self, shown: int = 5, width: int = 240) -> str:
        """One summary line (the first violated rule id first), the first ``shown`` failing
        cassettes in full, then a count of the others."""
        failing = len(self.failures)
        lead = f"{self.rules[0]}: " if self.rules else ""
        rules = ", ".join(self.rules) or "none (mismatches, unserved exchanges or errors)"
        lines = [f"{lead}the loop failed {failing} of {self.driven} corpus conversations "
                 f"({self.excluded} cassettes not drivable); rules violated: {rules}"]
        for cassette_id, problems_, _, _ in self.failures[:shown]:
            lines.append(f"- {cassette_id}: " + " | ".join(
                p if len(p) <= width else p[:width] + "…" for p in problems_[:3]))
        if failing > shown:
            rest = [cid for cid, _, _, _ in self.failures[shown:]]
            more = ", ".join(rest[:10]) + (", …" if len(rest) > 10 else "")
            lines.append(f"(+{failing - shown} more failing cassettes: {more})")
        if self.not_run:
            lines.append(f"{len(self.not_run)} cassettes not run: the loop timed out too often")
        if self.unjudged:
            lines.append(f"({self.unjudged_note()})")
        return "\n".join(lines)

    def reproducer(self, shown: int = 5) -> list[dict[str, Any]]:
        """``{cassette, request}``: the offending request of each of the first ``shown`` failing
        cassettes (replay it with the cassette to see the failure)."""
        return [{"cassette": cassette_id, "request": request}
                for cassette_id, _, request, _ in self.failures[:shown]]


def verdict(plan_: CorpusPlan, outcomes: list[LoopOutcome | None]) -> CorpusVerdict:
    failures = []
    not_run = []
    unjudged = []
    for run, outcome in zip(plan_.runs, outcomes, strict=True):
        if outcome is None:
            not_run.append(run.scenario.id)
            continue
        why = not_judged(outcome)
        if why:
            unjudged.append((run.scenario.id, why))
            continue
        found = problems(run, outcome)
        if found:
            failures.append((run.scenario.id, tuple(found), reproducer(outcome),
                             list(outcome.requests)))
    rules = dict.fromkeys(line.split(":", 1)[0] for _, found, _, _ in failures for line in found
                          if line.split(":", 1)[0] in RULES)
    return CorpusVerdict(len(plan_.runs), len(plan_.excluded), tuple(failures), tuple(not_run),
                         tuple(rules), tuple(unjudged))


def replayed_cassettes() -> list[Cassette]:
    """The cassettes ``loop.corpus.drives_every_conversation`` replays, as the engine sees them
    (``expect_rule`` exchanges dropped): for coverage reports."""
    return [run.scenario.load() for run in plan().runs]


def main() -> int:
    """``python -m conformance.loops.corpus``: which cassettes a loop drives, and why not the others."""
    p = plan()
    for run in p.runs:
        extra = [f"dropped {list(run.scenario.dropped)}"] if run.scenario.dropped else []
        extra += [f"conversations at {[0, *run.scenario.then]}"] if run.scenario.then else []
        extra += ["open end"] if run.open_end else []
        print(f"drive    {run.scenario.id}" + (f"  ({'; '.join(extra)})" if extra else ""))
    for ex in p.excluded:
        print(f"exclude  {ex.cassette}: {ex.reason}")
    print(f"{len(p.runs)} drivable, {len(p.excluded)} excluded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
