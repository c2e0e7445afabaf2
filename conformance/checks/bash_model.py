"""The model-based bash check: generated command sequences leave the session holding what seed 003
says it holds (:mod:`conformance.properties.bash_machine`, :mod:`conformance.properties.bash_model`).

A fixed number of derandomized examples, each on a fresh subject; every distinct disagreement is
reported with its own shrunk reproducer (the check's ``reproducer`` and ``setup`` are the smallest
one's; the others are in the message), replayed exactly as printed on a fresh subject and marked
``verified`` or ``did not reproduce`` (``reproduced``), as the editor's model check does. Only a
disagreement that repeats on a fresh subject is a FAIL (issue 21's rule for failures that rest on
timing): those that did not reproduce are listed in the message, and when none repeated the check
passes with a ``rejudged`` record (:func:`conformance.checks.properties.rejudged_by_replay`),
never silently. Findings a fixed bash check reports are left to that check (one defect, one
check); a run cut short by the hard time cap is ``incomplete``, never a pass or a failure.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.catalog import CATALOG, CheckFailure, CheckSkipped, Rejudged
from conformance.checks.bash import MUST, PERSISTENT, bash_check
from conformance.checks.properties import (
    model_check_incomplete,
    not_repeated_note,
    rejudged_by_replay,
    repeated,
)
from conformance.properties.bash_machine import explore_bash_model
from conformance.properties.bash_step import Disagreement
from conformance.reproducers import describe_reproduced
from conformance.session import ToolSession
from conformance.wording import plural

#: Disagreements spelled out in the message (the rest are counted).
SHOWN = 5


@bash_check("bash.model.agrees_with_session_model", MUST, PERSISTENT,
            "Generated sequences of state-changing commands (directory, variables, functions, "
            "aliases, umask, shell options, files), failing commands, syntax errors, outputs of "
            "every size, background jobs, a timeout and restarts leave the session holding what "
            "the docs say: state kept between commands, directory, environment and processes "
            "gone after a restart.", tags=("stateful", "property"))
def agrees_with_session_model(s: ToolSession) -> str | Rejudged:
    report = explore_bash_model(s, fails=fixed_check_fails)
    workdir = str(s.workdir)
    aside = sum(len(v) for v in report.set_aside.values())
    aside_note = (f"{plural(aside, 'finding')} set aside, reported by "
                  f"{', '.join(sorted(report.set_aside))}" if aside else "")
    if report.incomplete:
        raise model_check_incomplete(report.examples_planned, report.note(),
                                     [f.message for f in report.findings],
                                     start_failed=report.start_failed)
    # Only a disagreement that repeats on a fresh subject is a FAIL (issue 21's rule).
    found, dropped = repeated([d.moved(workdir) for d in report.findings])
    dropped_note = not_repeated_note(dropped)
    if not found:
        if aside:
            raise CheckSkipped(f"every disagreement found is a defect another check reports "
                               f"({aside_note}): not counted again (not a pass)"
                               + (f"; {dropped_note}" if dropped else ""))
        if dropped:
            return rejudged_by_replay(f"session model: {report.note()}", dropped,
                                      report.seconds, report.replay_seconds)
        return f"session model: {report.note()}"
    first, others = found[0], found[1:]
    count = f" ({len(found)} distinct disagreements)" if others else ""
    setup = first.setup(workdir)
    # Its setup, inputs and whether they were verified are the failure's own reproducer, which
    # every report prints after the message: said there once, not here again.
    lines = [f"{first.message}{count}",
             f"Shrunk reproducer (below): {plural(len(first.inputs), 'tool input')} in order on a "
             f"fresh session{_setup_count(setup)}."]
    for i, other in enumerate(others[:SHOWN - 1], 2):
        lines.append(_described(i, other, workdir))
    if len(others) >= SHOWN:
        lines.append(f"... and {len(others) - SHOWN + 1} more")
    if aside_note:
        lines.append(f"({aside_note}: not counted again)")
    if dropped_note:
        lines.append(f"({dropped_note})")
    raise CheckFailure("\n".join(lines), received=first.received, documented=first.documented,
                       reproducer=first.reproducer(workdir), setup=setup,
                       reproduced=first.reproduced)


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


def _setup_count(setup: list[dict[str, Any]]) -> str:
    n = len(setup)
    return f", {plural(n, 'directory', 'directories')} made before them" if n else ""


def _described(i: int, d: Disagreement, workdir: str) -> str:
    return (f"Disagreement {i}: {d.message}\n  Received: {_json(d.received, 600)}\n"
            f"  Documented: {_json(d.documented, 300)}\n"
            f"  Reproducer ({plural(len(d.inputs), 'tool input')} after making "
            f"{', '.join(x['path'] for x in d.setup(workdir)) or 'nothing'}; "
            f"{describe_reproduced(d.reproduced)}): {_json(d.reproducer(workdir), 4000)}")


def _json(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
