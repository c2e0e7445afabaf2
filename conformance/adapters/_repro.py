"""How a standalone reproducer calls an implementation through its own API (``tooluse findings``).

Each adapter module that can be reproduced outside the suite has ``repro_calls(factory, timeout)``
beside its factories: it says, as Python source that imports only the upstream package and the
standard library, how the implementation's own agent loop would make the tool, send it one tool
input, and read its answer. :mod:`conformance.findings.repro` puts those pieces around a failing
cell's steps (docs/matrix.md "Findings a maintainer can run").

The pieces run inside the reproducer's ``main()``, where ``W`` is the working directory (an
absolute path, made by the reproducer) and ``here(text)`` puts ``W`` where a step says
``$TOOLUSE_WORKDIR``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["UpstreamCalls", "kwargs", "lit"]

#: The placeholder a reproducer's steps use for the working directory.
WORKDIR = "$TOOLUSE_WORKDIR"


def lit(value: Any) -> str:
    """``value`` (a JSON value) as a Python literal; a string naming the working directory
    becomes ``here('...')`` (the reproducer puts its directory in at run time)."""
    if isinstance(value, str):
        return f"here({value!r})" if WORKDIR in value else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {lit(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    return repr(value)  # None, True, False, numbers


def kwargs(value: dict[str, Any]) -> str:
    """A tool input as keyword arguments (``command='view', path=here('...')``); a key that is not
    a Python name is passed with ``**{...}``."""
    named = [f"{k}={lit(v)}" for k, v in value.items() if k.isidentifier()]
    other = {k: v for k, v in value.items() if not k.isidentifier()}
    return ", ".join(named + ([f"**{lit(other)}"] if other else []))


@dataclass(frozen=True)
class UpstreamCalls:
    """One implementation's calls, as reproducer source (see the module docstring)."""

    #: ``import`` lines (module level): the upstream package and the standard library only.
    imports: str
    #: Statements making the tool (in ``main()``, ``W`` exists); may set ``W`` first.
    make: str
    #: One tool input as an expression whose value is the tool's own answer.
    call: Callable[[dict[str, Any]], str]
    #: Source of ``def answer(raw)``: the tool's answer as ``{"content": ..., "is_error": ...}``
    #: (what its agent loop shows the model), and ``def refused(exc)``: an exception the agent
    #: loop turns into an error result (its answer), or None when the exception escapes.
    answer: str
    #: Statements closing the tool (may be empty).
    close: str = ""
    #: What the reproducer's environment needs (``pip install ...``), before the version.
    install: str = ""
    #: ``W`` is chosen by the tool (set in ``make``), not made by the reproducer.
    tool_makes_workdir: bool = False
    #: Environment variables the tool's process needs (set before ``make``).
    env: tuple[tuple[str, str], ...] = ()
