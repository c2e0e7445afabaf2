"""The model-based editor check: the subject agrees with the reference model, command by command.

The run is deterministic (a fixed number of examples, never a time budget; see
:mod:`conformance.properties.editor`), every distinct disagreement is reported with its own shrunk and
verified reproducer (the check's ``reproducer`` and ``setup`` are the smallest one's; the others
are in the message), and a run that hits the hard time cap is ``incomplete``, never a pass or a
failure. Only a disagreement that repeats on a fresh subject is a FAIL: one that did not
reproduce is listed, and when none repeated the check passes with a ``rejudged`` record
(:func:`conformance.checks.properties.rejudged_by_replay`), never silently. A pass reports the
conventions the subject was seen to follow where the docs leave a choice, and how much was
covered.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.catalog import CATALOG, CheckFailure, CheckSkipped, Rejudged, Severity, check
from conformance.checks.properties import (
    model_check_incomplete,
    not_repeated_note,
    rejudged_by_replay,
    repeated,
)
from conformance.properties.editor import MAX_EXAMPLES, ModelDisagreement, explore_editor_model
from conformance.reproducers import describe_reproduced, describe_setup
from conformance.session import ToolSession
from conformance.wording import plural

from .editor_support import EDITOR_TYPES, FAMILY, SRC_COMMANDS

#: Disagreements spelled out in the message (the rest are counted).
SHOWN = 5


@check("editor.model.agrees_with_reference_model", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_COMMANDS,
       statement="generated sequences of view, create, str_replace, insert (and undo_edit) give "
                 "the results and file bytes of the documented semantics, step by step.",
       tags=("stateful", "property"))
def agrees_with_model(s: ToolSession) -> str | Rejudged:
    report = explore_editor_model(s, max_examples=MAX_EXAMPLES, fails=fixed_check_fails)
    owners = sorted({owner for _, owner in report.set_aside})
    if report.incomplete:
        raise model_check_incomplete(MAX_EXAMPLES, report.budget.note(),
                                     [f.message for f in report.findings],
                                     start_failed=report.start_failed)
    # Only a disagreement that repeats on a fresh subject is a FAIL (issue 21's rule).
    found, dropped = repeated(report.findings)
    dropped_note = not_repeated_note(dropped)
    if not found:
        if report.set_aside:
            raise CheckSkipped(
                f"the only disagreements found ({len(report.set_aside)}) are defects "
                f"{', '.join(owners)} reports, not counted again (not a pass: those examples "
                "were not searched further)" + (f"; {dropped_note}" if dropped else ""))
        if dropped:
            return rejudged_by_replay(report.observed, dropped, report.seconds,
                                      report.replay_seconds)
        return report.observed
    first, others = found[0], found[1:]
    count = f" ({len(found)} distinct disagreements)" if others else ""
    # Its setup, inputs and whether they were verified are the failure's own reproducer, which
    # every report prints after the message: said there once, not here again.
    lines = [f"{first.message}{count}",
             f"Shrunk reproducer (below): {plural(len(first.reproducer), 'tool input')} in order"
             f"{_setup_count(first)}."]
    for i, other in enumerate(others[:SHOWN - 1], 2):
        lines.append(_described(i, other))
    if len(others) >= SHOWN:
        lines.append(f"... and {len(others) - SHOWN + 1} more")
    if report.set_aside:
        lines.append(f"({len(report.set_aside)} more are defects {', '.join(owners)} "
                     "reports: not counted again)")
    if dropped_note:
        lines.append(f"({dropped_note})")
    raise CheckFailure("\n".join(lines), received=first.received, documented=first.documented,
                       reproducer=first.reproducer, setup=first.setup,
                       reproduced=first.reproduced)


def fixed_check_fails(check_id: str, s: ToolSession) -> bool:
    """Does the fixed check ``check_id`` fail on the (fresh) session ``s``? (A finding of the
    kind it reports is then its, not the model check's: one defect, one check.)"""
    check = CATALOG.get(check_id)
    if check is None or not check.applies(s.tool_type):
        return False
    try:
        check.func(s)
    except CheckFailure:
        return True
    except Exception:  # skipped (or broken otherwise): not that check's failure
        return False
    return False


def _setup_count(d: ModelDisagreement) -> str:
    n = len(d.setup)
    return f", {plural(n, 'file')} planted before them" if n else ""


def _described(i: int, d: ModelDisagreement) -> str:
    setup = "".join(f"\n  {describe_setup(x)}" for x in d.setup)
    return (f"Disagreement {i}: {d.message}\n  Received: {d.received}\n"
            f"  Documented: {d.documented:.300}{setup}\n  Reproducer "
            f"({plural(len(d.reproducer), 'tool input')}; {describe_reproduced(d.reproduced)}): "
            f"{_inputs(d.reproducer)}")


def _inputs(inputs: list[dict[str, Any]]) -> str:
    text = json.dumps(inputs, ensure_ascii=False)
    return text if len(text) <= 4000 else text[:4000] + f"... ({len(text)} characters)"
