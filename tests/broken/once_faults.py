"""A bash subject that breaks the answer protocol (its handler returns ``None`` for `echo`:
a fault, "the handler returned NoneType") — in every instance (``always``) or only in the first
instance started for a case (``factory``: it leaves a mark file in its working directory, and an
instance that finds the mark there or in a directory above, as a replay inside the case's
directory does, answers properly). tests/test_rechecks.py uses them for the runner's own
failures: "the subject faulted" after a check that passed, and a bare ``assert``. Not a
``bash_*`` subject: no catalog check targets it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import factory as reference_bash

#: The mark the first instance leaves.
MARK = ".once-faulted"


def _started_before(workdir: Path) -> bool:
    return any((d / MARK).exists() for d in (workdir, *workdir.parents))


def _breaking(workdir: Path, timeout: float) -> Any:
    inner = reference_bash(workdir, timeout=timeout)

    def handle(tool_input: dict[str, Any]) -> Any:
        if str(tool_input.get("command", "")).startswith("echo"):
            return None  # not a tool result: the harness records a fault
        return inner(tool_input)

    handle.close = inner.close  # type: ignore[attr-defined]
    return handle


def always(workdir: Path, timeout: float = 30.0) -> Any:
    return _breaking(workdir, timeout)


def factory(workdir: Path, timeout: float = 30.0) -> Any:
    if _started_before(workdir):
        return reference_bash(workdir, timeout=timeout)
    (workdir / MARK).write_text("1\n")
    return _breaking(workdir, timeout)
