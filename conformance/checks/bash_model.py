"""The model-based bash check: generated command sequences leave the session holding what seed 003
says it holds (:mod:`conformance.properties.bash_machine`, :mod:`conformance.properties.bash_model`).

A fixed number of derandomized examples, each on a fresh subject; every distinct disagreement is
reported with its own minimized reproducer, marked verified when replaying it on a fresh subject
showed it again. Findings a fixed bash check reports are left to that check (one defect, one
check); a run cut short by the time cap is incomplete (a SKIP saying so), never a pass.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.catalog import CATALOG, CheckFailure, CheckSkipped
from conformance.checks.bash import MUST, PERSISTENT, bash_check
from conformance.properties.bash_machine import Disagreement, explore_bash_model
from conformance.session import ToolSession

#: Disagreements spelled out in the message (the rest are counted).
SHOWN = 5


@bash_check("bash.model.agrees_with_session_model", MUST, PERSISTENT,
            "Generated sequences of state-changing commands (directory, variables, functions, "
            "aliases, umask, shell options, files), failing commands, syntax errors, outputs of "
            "every size, background jobs, a timeout and restarts leave the session holding what "
            "the docs say: state kept between commands, directory, environment and processes "
            "gone after a restart.", tags=("stateful", "property"))
def agrees_with_session_model(s: ToolSession) -> str:
    report = explore_bash_model(s, fails=fixed_check_fails)
    workdir = str(s.workdir)
    aside = sum(len(v) for v in report.set_aside.values())
    aside_note = (f"{aside} finding(s) set aside, reported by "
                  f"{', '.join(sorted(report.set_aside))}" if aside else "")
    if not report.findings:
        if aside:
            raise CheckSkipped(f"every disagreement found is a defect another check reports "
                               f"({aside_note}): not counted again (not a pass)")
        if report.incomplete:
            raise CheckSkipped(f"incomplete: the time cap ended the run ({report.note()}); "
                               "nothing found so far, but not every example ran")
        return f"session model: {report.note()}"
    first, others = report.findings[0], report.findings[1:]
    count = f" ({len(report.findings)} distinct disagreements)" if others else ""
    lines = [f"{first.message}{count}",
             f"Reproducer: replay these {len(first.inputs)} tool inputs in order on a fresh "
             f"session ({_verified(first)})."]
    for i, other in enumerate(others[:SHOWN - 1], 2):
        lines.append(_described(i, other, workdir))
    if len(others) >= SHOWN:
        lines.append(f"... and {len(others) - SHOWN + 1} more")
    if aside_note:
        lines.append(f"({aside_note}: not counted again)")
    if report.incomplete:
        lines.append(f"(incomplete: the time cap ended the run; {report.note()})")
    raise CheckFailure("\n".join(lines), received=first.received, documented=first.documented,
                       reproducer=first.reproducer(workdir))


def fixed_check_fails(check_id: str, s: ToolSession) -> bool:
    """Does the fixed check ``check_id`` fail on the (fresh) session ``s``?"""
    check = CATALOG.get(check_id)
    if check is None:
        return False
    try:
        check.func(s)
    except CheckFailure:
        return True
    except Exception:  # skipped (or broken otherwise): not that check's failure
        return False
    return False


def _verified(d: Disagreement) -> str:
    return {True: "verified: replaying it on a fresh subject showed it again",
            False: "did not reproduce when replayed on a fresh subject: intermittent",
            None: "not replayed: the time cap"}[d.verified]


def _described(i: int, d: Disagreement, workdir: str) -> str:
    return (f"Disagreement {i}: {d.message}\n  Received: {_json(d.received, 600)}\n"
            f"  Documented: {_json(d.documented, 300)}\n"
            f"  Reproducer ({len(d.inputs)} tool inputs, {_verified(d)}): "
            f"{_json(d.reproducer(workdir), 4000)}")


def _json(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
