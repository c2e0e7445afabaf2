"""Build-time consistency: every Messages exchange of a cassette goes through the simulator's own
rules (``simulator.rules.check_request``) with a state that learns from the recorded responses.

A request that should pass must pass; an ``expect_rule`` request must break exactly that rule
first, and its recorded error gets the rule's own message, status and type, so the corpus and the
rules never drift.
When ``simulator.rules`` is not importable the check is skipped (the linter's replay step covers
the same ground once the engine exists).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from simulator.lint_sdk import reassemble

try:
    from simulator.clock import FakeClock
    from simulator.rules import check_request
    from simulator.state import SimState
except ImportError:  # pragma: no cover - the rules are built in parallel
    check_request = None  # type: ignore[assignment]


class RuleMismatch(ValueError):
    pass


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def apply_rules(cassette: dict[str, Any]) -> bool:
    """Check (and fill in rule messages of) one cassette's Messages exchanges; False if skipped."""
    if check_request is None:
        return False
    clock = FakeClock(_parse(cassette["clock_start"]))
    state = SimState(clock)
    for i, ex in enumerate(cassette["exchanges"]):
        req, resp = ex["request"], ex["response"]
        if req["path"] != "/v1/messages":
            continue
        at = _parse(ex["at"])
        clock.advance((at - clock.now()).total_seconds())
        violations = check_request(req["body"], req["headers"], state)
        where = f"{cassette['id']} exchange {i}"
        rule = ex.get("expect_rule")
        if rule:
            if not violations or violations[0].rule_id != rule:
                got = [v.rule_id for v in violations] or "no violation"
                raise RuleMismatch(f"{where}: expected rule {rule} to fire first, got {got}")
            # The rule's own answer: its message, status and error type (model.known is 404).
            resp["body"]["error"]["message"] = violations[0].message
            resp["body"]["error"]["type"] = violations[0].error_type
            resp["status"] = violations[0].status
            continue
        if violations and resp["status"] == 200:
            raise RuleMismatch(f"{where}: a request meant to pass breaks "
                               f"{[(v.rule_id, v.message) for v in violations]}")
        if resp["status"] != 200:
            continue
        state.on_request_served(req["body"])
        msg = resp.get("body") if "events" not in resp else reassemble(resp["events"])[0]
        if msg:
            state.on_response(msg, repl_state=True)
    return True
