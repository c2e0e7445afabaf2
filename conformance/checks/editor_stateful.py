"""The model-based editor check: the subject agrees with the reference model, command by command.

The run is bounded (a budget of wall time and calls from the subject's timeout; see
:mod:`conformance.checks.properties`), every example gets a fresh subject, and every distinct
disagreement is reported with its own minimized reproducer (the check's ``reproducer`` is the
smallest one; the others are in the message). A pass reports the conventions the subject was
seen to follow where the docs leave a choice, and how much was covered.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.properties.editor import ModelDisagreement, explore_editor_model
from conformance.session import ToolSession

from .editor_support import EDITOR_TYPES, FAMILY, SRC_COMMANDS

#: Bounded so a run stays fast; runs are derandomized so CI is reproducible.
MAX_EXAMPLES = 30
#: Disagreements spelled out in the message (the rest are counted).
SHOWN = 5


@check("editor.model.agrees_with_reference_model", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_COMMANDS,
       statement="generated sequences of view, create, str_replace, insert (and undo_edit) give "
                 "the results and file bytes of the documented semantics, step by step.",
       tags=("stateful", "property"))
def agrees_with_model(s: ToolSession) -> str:
    report = explore_editor_model(s, max_examples=MAX_EXAMPLES)
    aside = len(report.newline_translation)
    if not report.findings:
        if aside:
            raise CheckSkipped(
                f"the only disagreements found ({aside}) need a CR in their steps and go away "
                "without it, and the subject turns CRLF into LF: the newline translation "
                "editor.bytes.crlf_preserved reports, not counted again (not a pass: those "
                "examples were not searched further)")
        return report.observed
    first, others = report.findings[0], report.findings[1:]
    count = f" ({len(report.findings)} distinct disagreements)" if others else ""
    lines = [f"{first.message}{count}",
             f"Shrunk reproducer: replay these {len(first.reproducer)} tool inputs in order.",
             *first.notes]
    for i, other in enumerate(others[:SHOWN - 1], 2):
        lines.append(_described(i, other))
    if len(others) >= SHOWN:
        lines.append(f"... and {len(others) - SHOWN + 1} more")
    if aside:
        lines.append(f"({aside} more need a CR and are the newline translation "
                     "editor.bytes.crlf_preserved reports: not counted again)")
    if report.budget.ran_out:
        lines.append(f"(the budget ended the search: {report.budget.note()})")
    raise CheckFailure("\n".join(lines), received=first.received, documented=first.documented,
                       reproducer=first.reproducer)


def _described(i: int, d: ModelDisagreement) -> str:
    notes = "".join(f"\n  {n}" for n in d.notes)
    return (f"Disagreement {i}: {d.message}\n  Received: {d.received}\n"
            f"  Documented: {d.documented:.300}\n  Reproducer ({len(d.reproducer)} tool inputs): "
            f"{_inputs(d.reproducer)}{notes}")


def _inputs(inputs: list[dict[str, Any]]) -> str:
    text = json.dumps(inputs, ensure_ascii=False)
    return text if len(text) <= 4000 else text[:4000] + f"... ({len(text)} characters)"
