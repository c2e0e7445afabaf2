"""Property-based checks: run hypothesis inside a check, report the shrunk reproducer.

::

    @check("bash.output.roundtrip", ..., tags=["property"])
    def _(s: ToolSession) -> None:
        def body(text: str) -> None:
            r = s.call({"command": ...})
            if r.text != text: raise CheckFailure("...", received=r.text, documented=text)
        run_property(s, st.text(), body)

The body raises :class:`~conformance.catalog.CheckFailure` when the subject breaks the property.
Hypothesis shrinks the failing example and replays it last; the inputs that replay sent through
the session become the failure's ``reproducer`` (a replayable list of tool inputs). Checks that
use hypothesis carry the tag ``"property"`` (the runner starts them early: they take longest).
Properties take turns (one hypothesis run at a time; see
:data:`HYPOTHESIS_TURNS`) while other cases run alongside.

The profile is bounded and deterministic (``derandomize``, no example database written to the
user's directory): a CI gate must give the same answer twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance.catalog import CheckFailure
from conformance.session import ToolSession

T = TypeVar("T")

#: Hypothesis runs take turns, whatever its version: hypothesis builds source-level descriptions
#: of strategies with ``ast``, and CPython 3.11 is not safe compiling ASTs from several threads at
#: once (seen in a run: ``SystemError: AST constructor recursion depth mismatch``). The other
#: cases still run concurrently with the one property in progress.
HYPOTHESIS_TURNS = threading.Lock()

#: Examples per property (``TOOLUSE_MAX_EXAMPLES`` overrides).
DEFAULT_MAX_EXAMPLES = 25


def max_examples() -> int:
    import os

    try:
        return max(1, int(os.environ.get("TOOLUSE_MAX_EXAMPLES", DEFAULT_MAX_EXAMPLES)))
    except ValueError:
        return DEFAULT_MAX_EXAMPLES


def run_property(s: ToolSession, strategy: st.SearchStrategy[T], body: Callable[[T], None], *,
                 examples: int | None = None) -> None:
    """Check ``body`` over values drawn from ``strategy``; raise the shrunk failure."""
    last: dict[str, Any] = {}

    @settings(max_examples=examples or max_examples(), deadline=None, database=None,
              derandomize=True, suppress_health_check=list(HealthCheck),
              phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False)
    @given(strategy)
    def prop(value: T) -> None:
        start = len(s.history)
        try:
            body(value)
        except CheckFailure:
            last["inputs"] = list(s.history[start:])
            last["value"] = value
            raise

    try:
        with HYPOTHESIS_TURNS:
            prop()
    except CheckFailure as e:
        e.reproducer = list(last.get("inputs", e.reproducer))
        e.message = f"{e.message} (shrunk example: {last.get('value')!r})"
        e.args = (e.message,)
        raise
