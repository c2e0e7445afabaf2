"""Warnings for agent loops: what frameworks were seen doing that no simulator rule refuses.

Each check drives scenarios of :mod:`conformance.loops.scenarios` and reads the requests with
:mod:`conformance.loops.warnings`. They are SHOULD, not MUST: no live capture shows the API
refusing the request (``../shared/real_traffic``), so nothing but the documented recommendation
backs them; each says below what evidence would make it a MUST. One defect, one failing check:
what a MUST check reports already (a drop the API refuses, a loop that never retries, a loop that
stops before the continuation) makes these SKIP, naming it, never FAIL.

A finding is verified as every loop check's (:mod:`conformance.checks.loop`): the check is run
again on a fresh loop, against fresh simulations, and must find the same thing again.
"""

from __future__ import annotations

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.checks.loop import not_judged, unserved_faults, verified
from conformance.loops.run import LoopOutcome
from conformance.loops.scenarios import RETRY_AFTER
from conformance.loops.subject import FAMILY, TOOL_TYPE, LoopSession
from conformance.loops.warnings import (
    Finding,
    container_drops,
    early_retries,
    lost_callers,
    refused_for_container,
    retries_after_wait,
)
from simulator.sources import SEED_CODE_EXECUTION, protocol, seed

CONTAINER_CHECK = "loop.container.kept_on_continuation"
CALLER_CHECK = "loop.ptc.caller_resent"
RETRY_CHECK = RETRY_AFTER.id

#: Scenarios whose continuation the API accepts without ``container`` (no programmatic call
#: waits): a pause_turn resend and a client tool answered next to code execution.
CONTAINER_SCENARIOS = ("loop.pause_turn.resend", "loop.mixed.client_and_server_tools")
#: The scenario where the API refuses the same drop (``ptc.container.required``).
CONTAINER_REFUSED = "loop.ptc.pause_resume"
CALLER_SCENARIO = "loop.ptc.pause_resume"
#: The rule refusing a served turn resent with a tool_use's caller lost or changed.
RESENT_RULE = "messages.resent_turn.unchanged"


def _fail(findings: list[Finding], outcome: LoopOutcome, prefix: str = "") -> CheckFailure:
    """The first finding (its request as ``received``), counting the others."""
    index, line = findings[0]
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return CheckFailure(prefix + line + more, reproducer=outcome.requests,
                        received=outcome.sent[index].body)


@check(CONTAINER_CHECK, family=FAMILY, severity=Severity.SHOULD, applies_to=[TOOL_TYPE],
       source=seed(SEED_CODE_EXECUTION, "Penggunaan ulang container"),
       statement="a request continuing a conversation sends the container id the previous "
                 "response named")
@verified
def container_kept_on_continuation(s: LoopSession) -> None:
    """Drives a pause_turn resend and a client tool answered next to code execution (those the
    loop can run) and reads every continuation after a response naming a container.

    SHOULD: seed 000 says each request runs in a new container unless the id of the previous
    response's container is passed back, so a continuation without it runs the rest of the
    turn without the files (and, from 20260120, the interpreter state) the turn made; the seed
    recommends reuse, it does not say the API refuses the request. Live traffic: all 11
    continuations after code execution in ../shared/real_traffic (pydantic-ai's cassettes,
    pysdk__119) send the container; none drops it, so no live answer says what the API does
    outside pending programmatic calls, where it refuses (``ptc.container.required``, a MUST).
    A live 400 for a dropped container on a pause_turn resend would make this a MUST.

    A drop the API refuses is that rule's; a loop that also leaves the container out of a
    programmatic call's answer (refused there) shows the same defect: SKIP naming it.
    """
    checked, gaps, unjudged = 0, [], []
    drops: list[Finding] = []
    last: LoopOutcome | None = None
    failing = ""
    for scenario_id in CONTAINER_SCENARIOS:
        why = s.unsupported(scenario_id)
        if why:
            gaps.append(f"{scenario_id}: {why}")
            continue
        scenario = s.scenario(scenario_id)
        outcome = s.run(scenario_id)
        n, found = container_drops(outcome, scenario.load())
        checked += n
        why_not = not_judged(outcome)
        if why_not:
            unjudged.append(f"{scenario_id}: {why_not}")
        if found and not drops:
            drops, last, failing = found, outcome, f"{scenario_id}: "
    if len(gaps) == len(CONTAINER_SCENARIOS):
        raise CheckSkipped("no scenario with a continuation applies to this loop: "
                           + "; ".join(gaps))
    if not checked and unjudged:
        raise CheckSkipped("; ".join(unjudged))
    if not checked:
        raise CheckSkipped("the loop sent no continuation after a response naming a container "
                           f"(it stopped first: {', '.join(CONTAINER_SCENARIOS)} report that)")
    if drops and last is not None:
        if not s.unsupported(CONTAINER_REFUSED) and refused_for_container(s.run(CONTAINER_REFUSED)):
            raise CheckSkipped(f"the loop leaves the container out of continuations ({failing}{drops[0][1]}); "
                               f"the API refuses the same drop when programmatic calls wait, so "
                               f"{CONTAINER_REFUSED} reports it (ptc.container.required)")
        raise _fail(drops, last, failing)
    return None


@check(CALLER_CHECK, family=FAMILY, severity=Severity.SHOULD, applies_to=[TOOL_TYPE],
       source=protocol("1. Programmatic tool calling: Continuation request"),
       statement="a programmatic tool_use resent in the history keeps the code execution caller "
                 "it was served with")
@verified
def caller_resent(s: LoopSession) -> None:
    """Drives a programmatic call's pause and resume and reads the assistant turn the loop sends
    back: each ``tool_use`` served with a code execution ``caller`` must come back with it.

    SHOULD: PROTOCOL.md §1 (programmatic-tool-calling docs) says to send the full history; a
    ``tool_use`` without its ``caller`` reads as a direct call of a tool the code called. The
    docs do not say the API refuses it. Live traffic: the one live resend of a programmatic
    ``tool_use`` (pysdk__119, answered 200) keeps ``caller``; direct callers are left out by most
    clients (pydantic-ai, the TypeScript SDK, llm-anthropic: 700+ live requests, all accepted),
    which is why a ``direct`` caller is not counted. A live 400 for a lost code execution caller
    would make this a MUST.

    Since issue 37 the rule on resent turns (``messages.resent_turn.unchanged``: "the live API
    expects an assistant turn to be sent back as it was served") refuses a served turn whose
    code execution caller was lost or changed: the programmatic-call checks then fail under that
    rule, and this warning SKIPs naming it (one defect, one check). It still reports a lost
    caller the rule leaves free (a turn that stopped with ``pause_turn`` may be modified).
    """
    why = s.unsupported(CALLER_SCENARIO)
    if why:
        raise CheckSkipped(f"{CALLER_SCENARIO} does not apply to this loop: {why}")
    scenario = s.scenario(CALLER_SCENARIO)
    outcome = s.run(CALLER_SCENARIO)
    resent, lost = lost_callers(outcome, scenario.load())
    if lost and any(sent.rule == RESENT_RULE for sent in outcome.sent):
        raise CheckSkipped(f"the loop loses the caller ({lost[0][1]}); the API refuses the "
                           f"same resend ({RESENT_RULE}), so {CALLER_SCENARIO} reports it")
    why_not = not_judged(outcome)
    if not resent and why_not:
        raise CheckSkipped(f"{CALLER_SCENARIO}: {why_not}")
    if not resent:
        raise CheckSkipped(f"the loop resent no programmatic tool_use ({CALLER_SCENARIO} "
                           "reports a loop that stops first)")
    if lost:
        raise _fail(lost, outcome)
    return None


@check(RETRY_CHECK, family=FAMILY, severity=Severity(RETRY_AFTER.severity),
       applies_to=[TOOL_TYPE], source=RETRY_AFTER.source, statement=RETRY_AFTER.statement)
@verified
def retry_after_respected(s: LoopSession) -> None:
    """Answers the first request 429 with ``retry-after: 1`` and measures, at the simulation,
    from the moment that answer was handed back to the retry's arrival.

    SHOULD: PROTOCOL.md §5 documents ``retry-after`` in seconds (rate-limits docs) and that the
    SDK honours it; neither says the API refuses an early retry (it would answer 429 again), and
    no live capture shows an early retry's answer. Documented or live evidence that an early
    retry is penalised beyond another 429 would make this a MUST.
    Time here only ever convicts of being early: a slow machine lengthens the measured wait, it
    cannot shorten it (a timer's slack of 50 ms is allowed). A loop that does not retry at all
    is ``loop.errors.transient_retried``'s finding (SKIP here). The 429 is served only to a
    request matching the recording's first exchange: when none did (a matcher refused it), no
    429 was served and nothing is judged (SKIP, naming the difference).
    """
    resolved = s.resolve(RETRY_AFTER)
    if isinstance(resolved, str):
        raise CheckSkipped(f"not applicable to this loop: {resolved}")
    outcome = s.drive(resolved)
    if not outcome.faults:  # the 429 answers the first request matching exchange 0
        why = not_judged(outcome) or unserved_faults(outcome)
        raise CheckSkipped(f"{why}; no 429 was served" if why and "never served" not in why
                           else why or "not judged: the planned 429 was never served")
    early = early_retries(outcome)
    if early:
        raise _fail(early, outcome)
    if not retries_after_wait(outcome):
        served = outcome.faults[0]
        raise CheckSkipped(f"the loop sent nothing after the {served.line()} "
                           "(loop.errors.transient_retried reports a loop that does not retry)")
    return None
