"""Checks for custom-tool workers (Managed Agents self-hosted sandboxes).

Each check starts the worker against a fresh simulation with scripted sessions that call the
conformance toolset (:mod:`conformance.workers.toolset`) and judges what the worker sent.
Sources: seed 004 (serving custom tools) and PROTOCOL.md §7 (the session flow and work API).

A failure's reproducer is the requests the worker sent: its output, which cannot be replayed into
it. It is verified by running the check again, only when it failed, with a fresh worker against a
fresh simulation (:func:`conformance.rechecks.verified_by_rerun`, what the report's rerun line
does): ``verified`` when it fails at the same place again, ``did not reproduce`` when not.
"""

from __future__ import annotations

from typing import Any

from conformance.catalog import CheckFailure, Severity, check
from conformance.rechecks import verified_by_rerun
from conformance.workers.run import WorkerRun
from conformance.workers.subject import FAMILY, TOOL_TYPE, WorkerSession
from conformance.workers.toolset import ECHO, FAIL, HANG, SLEEP, UNSERVED
from simulator.managed_agents import Scenario
from simulator.sources import SEED_MANAGED_AGENTS, protocol, seed

APPLIES = [TOOL_TYPE]
#: How long a scenario may take before the worker counts as stuck (seconds).
SETTLE = 15.0
#: After the last expected answer, how long to watch for answers that should not come.
GRACE = 0.4

_SERVE = seed(SEED_MANAGED_AGENTS, "Melayani alat kustom")
_FAILURES = seed(SEED_MANAGED_AGENTS, "Kegagalan alat muncul sebagai hasil alat error")
_FLOW = protocol("7. Managed Agents / Custom-tool flow", "S")
_WORKER = protocol("7. Worker behaviour", "S")


def _results_posted(run: WorkerRun, session_id: str) -> list[dict[str, Any]]:
    """Every ``user.custom_tool_result`` the worker tried to post to the session (accepted or
    refused), in order."""
    out = []
    for r in run.log:
        if r.method == "POST" and r.path == f"/v1/sessions/{session_id}/events" \
                and isinstance(r.body, dict):
            for ev in r.body.get("events") or []:
                if isinstance(ev, dict) and ev.get("type") == "user.custom_tool_result":
                    out.append(dict(ev, _status=r.status))
    return out


def _fail(run: WorkerRun, message: str, *, received: Any = None, documented: Any = None) -> CheckFailure:
    violations = [v.to_json() for v in run.sim.violations]
    if violations:
        message += f" (the simulator refused {len(violations)} request(s): " + "; ".join(
            f"{v['rule']}: {v['message']}" for v in violations[:3]) + ")"
    return CheckFailure(message, received=received, documented=documented,
                        reproducer=run.requests_summary())


def _answered(run: WorkerRun, session_index: int, names: set[str]) -> bool:
    s = run.session(session_index)
    ids = [e["id"] for e in s.events if e["type"] == "agent.custom_tool_use" and e["name"] in names]
    return bool(ids) and all(i in s.results for i in ids)


@check("worker.custom_tool_use.answered_once", family=FAMILY, severity=Severity.MUST,
       applies_to=APPLIES, source=_SERVE,
       statement="every agent.custom_tool_use is answered by exactly one user.custom_tool_result "
                 "whose custom_tool_use_id is the event's id")
@verified_by_rerun()
def answered_once(s: WorkerSession) -> None:
    run = s.start([Scenario.of("echo-twice-then-once",
                               [(ECHO, {"text": "alpha"}), (ECHO, {"text": "beta"})],
                               [(ECHO, {"text": "gamma"})])])
    finished = run.wait_progress(lambda: run.session().finished or bool(run.sim.violations))
    finished = run.session().finished
    run.pause(GRACE)
    session = run.session()
    uses = {e["id"]: e for e in session.events if e["type"] == "agent.custom_tool_use"}
    posted = _results_posted(run, session.id)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for ev in posted:
        by_id.setdefault(str(ev.get("custom_tool_use_id")), []).append(ev)
    stray = sorted(set(by_id) - set(uses))
    twice = sorted(i for i, evs in by_id.items() if len(evs) > 1)
    missing = sorted(set(uses) - set(by_id))
    if stray or twice or missing or not finished:
        raise _fail(run, "tool uses were not answered exactly once by id: "
                    f"unknown ids {stray}, answered twice {twice}, unanswered {missing}"
                    + ("" if finished else "; the session did not finish"),
                    received=[{k: v for k, v in ev.items() if k != "_status"} for ev in posted],
                    documented="one user.custom_tool_result per agent.custom_tool_use, with "
                               "custom_tool_use_id = the event id")
    for use_id, use in uses.items():
        text = str(by_id[use_id][0].get("content"))
        if use["input"]["text"] not in text:
            raise _fail(run, f"the result for {use_id} does not carry the tool's output "
                        f"{use['input']['text']!r}", received=by_id[use_id][0],
                        documented="the result content is what the tool returned")


@check("worker.custom_tool_result.failure_is_error", family=FAMILY, severity=Severity.MUST,
       applies_to=APPLIES, source=_FAILURES,
       statement="a tool that fails is answered with an is_error result the model can respond to")
@verified_by_rerun()
def failure_is_error(s: WorkerSession) -> None:
    run = s.start([Scenario.of("fail", [(FAIL, {"message": "disk quota exceeded (E42)"})])])
    run.wait_progress(lambda: _answered(run, 0, {FAIL}))
    posted = _results_posted(run, run.session().id)
    if not posted:
        raise _fail(run, "the failing tool was never answered; a failure must still produce "
                    "a result", documented="an is_error user.custom_tool_result")
    result = posted[0]
    if result.get("is_error") is not True:
        raise _fail(run, "the failing tool was answered without `is_error: true`",
                    received={k: v for k, v in result.items() if k != "_status"},
                    documented={"type": "user.custom_tool_result", "is_error": True})


@check("worker.custom_tool_result.error_explains_failure", family=FAMILY,
       severity=Severity.SHOULD, applies_to=APPLIES, source=_FAILURES,
       statement="an error result carries the tool's failure message, so the model can respond "
                 "to it")
@verified_by_rerun()
def error_explains_failure(s: WorkerSession) -> None:
    message = "disk quota exceeded (E42)"
    run = s.start([Scenario.of("fail", [(FAIL, {"message": message})])])
    run.wait_progress(lambda: _answered(run, 0, {FAIL}))
    posted = _results_posted(run, run.session().id)
    if not posted:
        raise _fail(run, "the failing tool was never answered")
    text = " ".join(str(b.get("text", "")) for b in posted[0].get("content") or []
                    if isinstance(b, dict))
    if message not in text:
        raise _fail(run, "the error result does not say what failed",
                    received={k: v for k, v in posted[0].items() if k != "_status"},
                    documented=f"an is_error result whose text includes {message!r}")


@check("worker.custom_tool_use.unserved_left_pending", family=FAMILY, severity=Severity.MUST,
       applies_to=APPLIES, source=_SERVE,
       statement="a worker answers only the tools registered with it; a declared tool it does not "
                 "serve is left pending and the session stays in requires_action")
@verified_by_rerun()
def unserved_left_pending(s: WorkerSession) -> None:
    run = s.start([Scenario.of("mixed", [(ECHO, {"text": "served"}), (UNSERVED, {})])])
    run.wait_progress(lambda: _answered(run, 0, {ECHO}))
    run.pause(GRACE)
    session = run.session()
    unserved = next(e["id"] for e in run.tool_uses() if e["name"] == UNSERVED)
    claimed = [ev for ev in _results_posted(run, session.id)
               if ev.get("custom_tool_use_id") == unserved]
    if claimed:
        raise _fail(run, f"the worker answered {UNSERVED}, a tool it does not serve; its owner's "
                    "real result can then no longer arrive",
                    received={k: v for k, v in claimed[0].items() if k != "_status"},
                    documented="no result: the session stays in requires_action until the tool's "
                               "owner answers")
    if session.stop_reason != {"type": "requires_action", "event_ids": [unserved]}:
        raise _fail(run, "after the served tool was answered the session should wait on the "
                    f"unserved one alone; it is {session.status} with {session.stop_reason}",
                    received=session.stop_reason,
                    documented={"type": "requires_action", "event_ids": [unserved]})


@check("worker.custom_tool_use.timeout_becomes_error", family=FAMILY, tags=["slow"], severity=Severity.SHOULD,
       applies_to=APPLIES, source=seed(SEED_MANAGED_AGENTS, "Kegagalan alat muncul sebagai hasil alat error (timeout)"),
       statement="a tool call that never returns is turned into an is_error result within the "
                 "worker's timeout, not a hung session")
@verified_by_rerun()
def timeout_becomes_error(s: WorkerSession) -> None:
    limit = s.timeout * 2 + 3
    run = s.start([Scenario.of("hang", [(HANG, {})])])
    # The worker's clock starts when it takes the session (a command may take a while to start).
    run.wait(lambda: any(w.acknowledged_at for w in run.sim.work_items()), SETTLE)
    run.wait(lambda: _answered(run, 0, {HANG}), limit)
    posted = _results_posted(run, run.session().id)
    if not posted:
        raise _fail(run, f"a tool that never returns was still unanswered after {limit:g}s "
                    f"(worker timeout {s.timeout:g}s): the session hangs in requires_action",
                    documented="an is_error result once the worker's timeout expires")
    if posted[0].get("is_error") is not True:
        raise _fail(run, "the timed-out tool was answered without `is_error: true`",
                    received={k: v for k, v in posted[0].items() if k != "_status"},
                    documented={"is_error": True})


@check("worker.lease.heartbeat_keeps_lease", family=FAMILY, tags=["slow"], severity=Severity.MUST,
       applies_to=APPLIES, source=_WORKER,
       statement="while serving a session the worker heartbeats the work item within its lease "
                 "TTL, echoing expected_last_heartbeat, so the lease never lapses")
@verified_by_rerun()
def heartbeat_keeps_lease(s: WorkerSession) -> None:
    ttl = 3
    run = s.start([Scenario.of("slow", [(SLEEP, {"seconds": ttl * 1.6})])],
                  lease_ttl_seconds=ttl, tool_timeout=max(s.timeout, ttl * 4))
    run.wait(lambda: _answered(run, 0, {SLEEP}), SETTLE)
    run.expire_leases()
    items = run.sim.work_items()
    beats = [r for r in run.log if r.path.endswith("/heartbeat")]
    refused = [r for r in beats if r.status != 200]
    lost = sum(w.leases_lost for w in items)
    if not _answered(run, 0, {SLEEP}):
        raise _fail(run, f"the slow tool was not answered within {SETTLE:g}s")
    if not beats or lost or refused:
        raise _fail(run, f"the lease was not kept over a {ttl * 1.6:g}s tool call with a {ttl}s "
                    f"TTL: {len(beats)} heartbeat(s), {len(refused)} refused, lease lost {lost} "
                    "time(s)", received=[{"query": r.query, "status": r.status} for r in beats],
                    documented="a heartbeat at least every TTL/2 seconds, "
                               "expected_last_heartbeat = the previous last_heartbeat "
                               "(NO_HEARTBEAT first)")


@check("worker.lease.lost_lease_stops_work", family=FAMILY, tags=["slow"], severity=Severity.MUST,
       applies_to=APPLIES, source=_WORKER,
       statement="after a heartbeat is refused with 412 heartbeat_precondition_failed the worker "
                 "stops serving that work item: no more heartbeats, results or stop for it")
@verified_by_rerun()
def lost_lease_stops_work(s: WorkerSession) -> None:
    ttl = 2
    run = s.start([Scenario.of("owned-elsewhere", [(UNSERVED, {})], [(ECHO, {"text": "late"})])],
                  lease_ttl_seconds=ttl)
    item_of = lambda: next(iter(run.sim.work_items()), None)  # noqa: E731

    def beat_ok() -> bool:
        return any(r.path.endswith("/heartbeat") and r.status == 200 for r in run.log)

    if not run.wait(beat_ok, SETTLE):
        raise _fail(run, f"the worker never heartbeat its work item within {SETTLE:g}s")
    item = item_of()
    assert item is not None
    run.sim.take_lease(item.id)

    def refused() -> int | None:
        return next((r.seq for r in run.log if r.path.endswith("/heartbeat") and r.status == 412),
                    None)

    if not run.wait(lambda: refused() is not None, ttl * 3 + 2):
        raise _fail(run, "after the lease was taken over, the worker sent no heartbeat for "
                    f"{ttl * 3 + 2}s, so it never learned it lost the lease")
    lost_at = refused()
    assert lost_at is not None
    # Let the worker let go (it polls for new work, or just stops), then answer the unserved tool
    # as its other owner would: the agent's next tool use must not be served by the old holder.
    run.wait(lambda: any(r.seq > lost_at and r.path.endswith("/work/poll") for r in run.log), ttl)
    with run.sim.store.lock:
        from simulator.managed_agents import sessions as S

        session = run.session()
        pending = list(session.pending)
        for use_id in pending:
            S.receive(run.sim.store, session, {"type": "user.custom_tool_result",
                                               "custom_tool_use_id": use_id,
                                               "content": [{"type": "text", "text": "owner"}]})
    run.pause(ttl / 2 + GRACE)
    after = [r for r in run.log if r.seq > lost_at and (
        (item.id in r.path and not r.path.endswith("/work/poll"))
        or (r.method == "POST" and r.path == f"/v1/sessions/{session.id}/events"))]
    if after:
        raise _fail(run, f"after the 412 the worker kept working on {item.id}: "
                    + ", ".join(f"{r.method} {r.path.rsplit('/', 1)[-1]}" for r in after[:5]),
                    received=[{"method": r.method, "path": r.path, "query": r.query,
                               "body": r.body, "status": r.status} for r in after[:5]],
                    documented="a 412 means another holder has the item: stop serving it and "
                               "leave it alone (no heartbeat, result or stop)")


@check("worker.sessions.served_in_turn", family=FAMILY, tags=["slow"], severity=Severity.MUST,
       applies_to=APPLIES, source=_WORKER,
       statement="a worker serves every queued session (in turn or at once): each work item "
                 "is acknowledged, its session's tools answered, and the item stopped when it "
                 "ends")
@verified_by_rerun()
def served_in_turn(s: WorkerSession) -> None:
    n = 3
    run = s.start([Scenario.of(f"s{i}", [(ECHO, {"text": f"session-{i}"})]) for i in range(n)])
    run.wait_progress(run.archive_finished, total=SETTLE * 2)
    problems = []
    for i in range(n):
        sess = run.session(i)
        if not sess.finished:
            problems.append(f"session {i + 1} of {n} was not served")
    for item in run.sim.work_items():
        if item.acknowledged_at is None and item.state != "stopped":
            problems.append(f"{item.id} was never acknowledged")
        elif item.state != "stopped":
            problems.append(f"{item.id} was left {item.state}, not stopped")
    acks = {r.path.split("/")[-2] for r in run.log if r.path.endswith("/ack") and r.status == 200}
    for item in run.sim.work_items():
        posts = [r for r in run.log if r.path == f"/v1/sessions/{item.session_id}/events"
                 and r.method == "POST"]
        if posts and item.id not in acks:
            problems.append(f"results for {item.session_id} were posted without acknowledging "
                            f"{item.id}")
    if problems:
        raise _fail(run, "; ".join(problems), received=[
            {"work": w.id, "state": w.state, "session": w.session_id} for w in run.sim.work_items()],
            documented="poll → ack → serve (heartbeating) → stop, for every queued session")
