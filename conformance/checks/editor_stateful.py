"""The model-based editor check: the subject agrees with the reference model, command by command."""

from __future__ import annotations

from conformance.catalog import CheckFailure, Severity, check
from conformance.session import ToolSession
from conformance.stateful import run_editor_model
from simulator.sources import SEED_TEXT_EDITOR, seed

from .editor_support import EDITOR_TYPES, FAMILY

#: Bounded so a run stays fast; the seed is fixed so CI is reproducible.
MAX_EXAMPLES = 30


@check("editor.model.agrees_with_reference_model", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=seed(SEED_TEXT_EDITOR, "Perintah tool editor teks"),
       statement="generated sequences of view, create, str_replace, insert (and undo_edit) give "
                 "the results and file bytes of the documented semantics, step by step.",
       tags=("stateful", "property"))
def agrees_with_model(s: ToolSession) -> None:
    disagreement = run_editor_model(s, max_examples=MAX_EXAMPLES)
    if disagreement is None:
        return
    notes = "".join(f"\n{n}" for n in disagreement.notes)
    raise CheckFailure(
        f"{disagreement.message}\nShrunk reproducer: replay these {len(disagreement.reproducer)} "
        f"tool inputs in order.{notes}",
        received=disagreement.received, documented=disagreement.documented,
        reproducer=disagreement.reproducer)
