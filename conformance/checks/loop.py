"""Checks for agent loops: one per scenario of :mod:`conformance.loops.scenarios`, and
``loop.corpus.drives_every_conversation`` over the whole fixture corpus
(:mod:`conformance.loops.corpus`).

A loop drives a recorded conversation against the replay engine, which judges every request by
the simulator's rules. A failure is reported under the violated rule's id (first in the message)
with the offending request as ``received``; requests sent after the conversation ended, a
conversation left unfinished, and an exception are failures too.

A check judges only what it observed. A request that passed every rule but that a *matcher*
refused (it does not match the recording: the simulation cannot answer it as the API would)
leaves the scenario **not judged**: SKIP, "not judged: request N does not match the recording:
<one-line difference>", never a FAIL of the behaviour the check is about. A scenario with
planned faults (a 429, a 529) says which were served before it judges the loop's answer to them:
one served to no request (the loop never sent the request it waits for) leaves it not judged.

A failure's reproducer is the requests the loop sent: the loop's output, which cannot be replayed
into it. It is verified by driving the check's conversations again on a fresh loop against a
fresh simulation (:mod:`conformance.rechecks`, only when the check failed): ``verified`` when the
loop fails the same way (the same kind of problem, under the same rule), ``did not reproduce``
when not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.loops import corpus
from conformance.loops.run import LoopOutcome, fault_name
from conformance.loops.scenarios import SCENARIOS, LoopScenario
from conformance.loops.subject import FAMILY, TOOL_TYPE, LoopSession
from conformance.rechecks import Verify, rerun_fresh_subject, verified_by_rerun
from conformance.reproducers import verdict_of
from simulator.rules import RULES


def not_judged(outcome: LoopOutcome) -> str | None:
    """Why a run says nothing about the loop, or None: a request a matcher refused (and no rule
    refused one: a rule's refusal is the loop's fault, judged first)."""
    if outcome.violations or not outcome.refusals:
        return None
    first = outcome.refusals[0]
    more = f" (+{len(outcome.refusals) - 1} more)" if len(outcome.refusals) > 1 else ""
    return f"not judged: {first.line()}{more}"


def faults_note(outcome: LoopOutcome) -> str:
    """Which of the scenario's planned faults were served (empty without planned faults)."""
    planned: list[tuple[int, str]] = [(i, f.kind) for i, faults in
                                      sorted(outcome.scenario.faults.items()) for f in faults]
    if not planned:
        return ""
    served = [f.line() for f in outcome.faults]
    left = list(planned)
    for f in outcome.faults:
        if (f.exchange, f.kind) in left:
            left.remove((f.exchange, f.kind))
    unserved = [f"{fault_name(kind)} planned at exchange {i} not served" for i, kind in left]
    return "faults: " + "; ".join(served + unserved)


def unserved_faults(outcome: LoopOutcome) -> str | None:
    """Why a fault scenario cannot judge the loop's answer to its faults, or None: none of its
    planned faults was served (they are served only to a request matching their exchange)."""
    if not outcome.scenario.faults or outcome.faults or outcome.violations:
        return None
    first = min(outcome.scenario.faults)
    kinds = ", ".join(fault_name(f.kind) for f in outcome.scenario.faults[first])
    return (f"not judged: the planned {kinds} was never served (it answers the first request "
            f"matching exchange {first}, and the loop sent none)")


def judge(outcome: LoopOutcome) -> None:
    """Raise the failure an outcome shows (rule violations first), the skip of a run that
    cannot be judged (a matcher refused a request; a fault scenario whose fault was never
    served), or return."""
    if outcome.violations:
        rule_id, message, body = outcome.violations[0]
        rule = RULES.get(rule_id)
        more = f" (+{len(outcome.violations) - 1} more)" if len(outcome.violations) > 1 else ""
        note = faults_note(outcome)
        raise CheckFailure(f"{rule_id}: {message}{more}" + (f" ({note})" if note else ""),
                           received=body,
                           documented=f"{rule.statement} [{rule.source.cite()}]" if rule else None,
                           reproducer=outcome.requests)
    why = not_judged(outcome) or unserved_faults(outcome)
    if why:
        note = faults_note(outcome)
        raise CheckSkipped(why + (f" ({note})" if note else ""))
    if outcome.exhausted:
        raise CheckFailure(_faults(outcome) + "the loop sent a request after the conversation "
                           "ended (every recorded exchange had been served)",
                           received=outcome.exhausted[0], reproducer=outcome.requests)
    if outcome.timed_out:
        raise CheckFailure(_faults(outcome) + "the loop did not finish the conversation before "
                           "the deadline", reproducer=outcome.requests)
    if outcome.raised:
        raise CheckFailure(f"{_faults(outcome)}the loop raised {outcome.raised}",
                           reproducer=outcome.requests)
    if outcome.unserved:
        raise CheckFailure(f"{_faults(outcome)}the loop stopped before the conversation ended "
                           f"(exchanges {outcome.unserved} of the recording were never "
                           "requested)", reproducer=outcome.requests)


def _faults(outcome: LoopOutcome) -> str:
    """A failure's lead in a fault scenario: which faults were served before what follows."""
    note = faults_note(outcome)
    return f"{note}. Then " if note else ""


def failure_head(e: CheckFailure) -> str:
    """What a loop check's failure is about, beyond where it was raised: the rule it names
    first (``rule.id: ...``), or the words before the first colon."""
    return e.message.split(":", 1)[0]


#: A loop check's failures are verified by driving its conversations again on a fresh loop.
verified = verified_by_rerun(failure_head)


def normalised_note(outcome: LoopOutcome, limit: int = 5) -> str:
    """What tolerant matching normalised in a run, as the result's ``observed`` (empty: nothing)."""
    notes = list(dict.fromkeys(n.split(": ", 1)[1] for n in outcome.normalised))
    if not notes:
        return ""
    more = f" (+{len(notes) - limit} more)" if len(notes) > limit else ""
    return "requests matched after normalising their formatting (tolerant matching): " + \
        "; ".join(notes[:limit]) + more


def _register(scenario: LoopScenario) -> Callable[[LoopSession], str]:
    def run_scenario(s: LoopSession) -> str:
        reason = s.unsupported(scenario.id)
        if reason:
            raise CheckSkipped(f"the loop declares this scenario unsupported: {reason}")
        outcome = s.run(scenario.id)
        judge(outcome)
        return normalised_note(outcome)

    run_scenario.__name__ = scenario.id.replace(".", "_")
    run_scenario.__doc__ = f"{scenario.statement} (cassette {scenario.cassette})"
    return check(scenario.id, family=FAMILY, severity=Severity(scenario.severity),
                 applies_to=[TOOL_TYPE],
                 source=scenario.source, statement=scenario.statement)(verified(run_scenario))


for _scenario in SCENARIOS:
    _register(_scenario)


CORPUS_CHECK = "loop.corpus.drives_every_conversation"
#: Cassettes run at once (each has its own engine, client and thread).
CORPUS_JOBS = 4


@check(CORPUS_CHECK, family=FAMILY, severity=Severity.MUST, applies_to=[TOOL_TYPE],
       source=corpus.SOURCE,
       statement="the loop drives every recorded Messages conversation of the corpus without "
                 "breaking a rule")
def corpus_drives_every_conversation(s: LoopSession) -> None:
    """Every drivable cassette of the corpus (see conformance.loops.corpus), several at a time.

    A loop may declare kinds of conversation unsupported, ``tooluse_unsupported =
    {"loop.corpus.drives_every_conversation:streamed": "why"}`` (kinds: a corpus family or one of
    ``corpus.KINDS``): those cassettes are not run, and a run that otherwise passes is reported
    as skipped, naming them."""
    reason = s.unsupported(CORPUS_CHECK)
    if reason:
        raise CheckSkipped(f"the loop declares this check unsupported: {reason}")
    plan = corpus.plan()
    declared = {kind: why for kind in sorted({k for r in plan.runs for k in r.kinds})
                if (why := s.unsupported(f"{CORPUS_CHECK}:{kind}"))}
    skipped = [r for r in plan.runs if r.kinds & declared.keys()]
    runs = [r for r in plan.runs if not r.kinds & declared.keys()]
    driven = corpus.CorpusPlan(tuple(runs), plan.excluded)
    outcomes = corpus.run_corpus(None, runs, jobs=CORPUS_JOBS,
                                 drive=lambda scenario: s.subject.drive(
                                     scenario, s.workdir, start_timeout=s.start_timeout,
                                     confinement=s.confinement))
    verdict = corpus.verdict(driven, outcomes)
    skips = "; ".join(f"{kind} ({sum(kind in r.kinds for r in skipped)} cassettes): {why}"
                      for kind, why in declared.items())
    verdict, attributed = _attribute(s, verdict)
    if not verdict.failures and not verdict.not_run:
        unjudged = f"; {verdict.unjudged_note()}" if verdict.unjudged else ""
        if attributed:
            # One defect, one failing check: the same defect fails the scenario checks named.
            raise CheckSkipped(attributed + (f"; {len(skipped)} not run, declared unsupported"
                                             if skipped else "") + unjudged)
        if skipped:
            raise CheckSkipped(f"{len(runs)} corpus conversations driven without a fault; "
                               f"{len(skipped)} not run, declared unsupported by the loop: {skips}"
                               + unjudged)
        if verdict.unjudged:
            # Only what was judged can pass: the rest is named, not counted as a pass.
            raise CheckSkipped(f"{len(runs) - len(verdict.unjudged)} corpus conversations driven "
                               f"without a fault{unjudged}")
        return
    first = verdict.failures[0] if verdict.failures else None
    if first is not None:
        s.history = list(first[3])
    rule = RULES.get(verdict.rules[0]) if verdict.rules else None
    note = f"\n({len(skipped)} not run, declared unsupported: {skips})" if skipped else ""
    note += f"\n({attributed})" if attributed else ""
    raise CheckFailure(verdict.message() + note, received=first[2] if first else None,
                       documented=f"{rule.statement} [{rule.source.cite()}]" if rule else None,
                       reproducer=verdict.reproducer(REPRODUCER_SHOWN),
                       verify=_corpus_verifier(s, runs, verdict.failures[:REPRODUCER_SHOWN]))


#: Failing corpus conversations shown in the reproducer (each with its offending request).
REPRODUCER_SHOWN = 5


def _corpus_verifier(s: LoopSession, runs: list[corpus.CorpusRun],
                     shown: tuple[tuple[str, tuple[str, ...], object, list[object]], ...],
                     ) -> Verify:
    """``verify`` for the corpus check: each cassette the reproducer names is driven again on a
    fresh loop (one after the other, stopping at the first that does not fail again); it
    reproduced when every one fails with the same kinds of problem (:func:`_problem_keys`)."""
    by_id = {r.scenario.id: r for r in runs}

    def again(fresh: LoopSession) -> bool:
        for cassette_id, problems, _, _ in shown:
            run = by_id[cassette_id]
            outcome = fresh.subject.drive(run.scenario, fresh.workdir,
                                          start_timeout=fresh.start_timeout,
                                          confinement=fresh.confinement)
            if _problem_keys(corpus.problems(run, outcome)) != _problem_keys(problems):
                return False
        return bool(shown)

    def verify(inputs: list[dict[str, object]], setup: list[dict[str, object]]) -> str:
        return verdict_of(rerun_fresh_subject(s, again))

    return verify


_PROBLEM_KINDS = (("mismatch:", "mismatch"), ("unserved:", "unserved"),
                  ("stopped early:", "unserved"), ("timed out", "timed_out"),
                  ("the loop raised", "raised"))


def _problem_keys(problems: Iterable[str]) -> frozenset[str]:
    """What kind of defect a failing conversation shows: the rules it broke, else the kinds of
    problem (a mismatch, unserved exchanges, an exception, a timeout, requests past the end)."""
    rules = {p.split(":", 1)[0] for p in problems if p.split(":", 1)[0] in RULES}
    if rules:
        return frozenset(rules)
    kinds = {next((kind for prefix, kind in _PROBLEM_KINDS if p.startswith(prefix)), "other")
             for p in problems}
    return frozenset(kinds)


def _attribute(s: LoopSession, verdict: corpus.CorpusVerdict) -> tuple[corpus.CorpusVerdict, str]:
    """Set aside the failing conversations whose defect a scenario check already reports.

    The scenario checks are driven again here (a dozen short conversations); the kinds of
    defect the failing ones show (the rules broken, else the kind of problem) are theirs. Corpus
    conversations failing with nothing but those show the same defect again: they are named in
    a note, not counted, so that one defect fails one check. What is left is the corpus check's
    own finding.
    """
    if not verdict.failures:
        return verdict, ""
    owned: dict[str, set[str]] = {}
    for scenario in SCENARIOS:
        if s.unsupported(scenario.id):
            continue
        outcome = s.run(scenario.id)
        try:
            judge(outcome)
        except CheckSkipped:  # not judged: it owns no defect
            continue
        except CheckFailure:
            lines = [f"{rule_id}: {m}" for rule_id, m, _ in outcome.violations]
            lines += [f"mismatch: {m}" for m, _ in outcome.mismatches]
            lines += ["timed out"] * outcome.timed_out
            lines += [f"the loop raised {outcome.raised}"] if outcome.raised else []
            lines += [f"unserved: {outcome.unserved}"] if outcome.unserved else []
            for key in _problem_keys(lines or ["other"]):
                owned.setdefault(key, set()).add(scenario.id)
    kept, set_aside, checks = [], 0, set()
    for failure in verdict.failures:
        keys = _problem_keys(failure[1])
        if owned and keys <= owned.keys():
            set_aside += 1
            checks |= {c for k in keys for c in owned[k]}
        else:
            kept.append(failure)
    if not set_aside:
        return verdict, ""
    rules = tuple(r for r in verdict.rules if any(r in _problem_keys(f[1]) for f in kept))
    note = (f"{set_aside} failing corpus conversation(s) show the defect that "
            f"{', '.join(sorted(checks))} already report(s); they are not counted again here")
    return replace(verdict, failures=tuple(kept), rules=rules), note
