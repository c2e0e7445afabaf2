"""A tiny in-process :class:`~conformance.session.ToolSession` for the editor tests.

It calls a subject handler directly (no deadline enforcement, no subprocess) and normalises what it
returns the way DESIGN.md "Subjects" describes: a ``str``, a list of content blocks, or
``{"content", "is_error"}``; an exception is an error result.
"""

from __future__ import annotations

import asyncio
import inspect
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.catalog import CATALOG, CheckFailure, CheckSkipped
from conformance.session import ToolResult


@dataclass
class InProcessSession:
    workdir: Path
    tool_type: str
    handler: Any
    timeout: float = 10.0
    max_characters: int | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    loop: asyncio.AbstractEventLoop | None = None
    #: Subject faults, as the subject host reports them (here: a handler that exited).
    faults: list[str] = field(default_factory=list)

    def _await(self, value: Any) -> Any:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(_awaited(value))

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> ToolResult:
        self.history.append(tool_input)
        t0 = time.monotonic()
        if self.faults:  # the subject is gone, as a host process that exited would be
            return ToolResult(content="the subject is not running", is_error=True)
        try:
            out = self.handler(tool_input)
            if inspect.isawaitable(out):
                out = self._await(out)
        except SystemExit as e:  # the host process would exit: a fault, like a crash
            self.faults.append(f"the subject exited (status {e.code}) during the call")
            return ToolResult(content="", is_error=True, elapsed=time.monotonic() - t0)
        except Exception as e:  # an exception is an error result (DESIGN.md "Subjects")
            return ToolResult(content=f"{type(e).__name__}: {e}", is_error=True, raised=repr(e),
                              elapsed=time.monotonic() - t0)
        elapsed = time.monotonic() - t0
        if isinstance(out, dict) and "content" in out:
            return ToolResult(content=out["content"], is_error=bool(out.get("is_error")),
                              elapsed=elapsed)
        if isinstance(out, str | list):
            return ToolResult(content=out, is_error=False, elapsed=elapsed)
        return ToolResult(content=repr(out), is_error=True, raised="bad return type",
                          elapsed=elapsed)

    def close(self) -> None:
        for name in ("close", "aclose"):
            fn = getattr(self.handler, name, None)
            if fn is not None:
                out = fn()
                if inspect.isawaitable(out):
                    self._await(out)
                break
        if self.loop is not None:
            self.loop.close()


async def _awaited(x: Any) -> Any:
    return await x


Factory = Callable[..., Any]


def make_session(factory: Factory, tool_type: str, workdir: Path,
                 max_characters: int | None = None) -> InProcessSession:
    kwargs: dict[str, Any] = {}
    params = inspect.signature(factory).parameters
    if "timeout" in params:
        kwargs["timeout"] = 10.0
    if max_characters is not None and "max_characters" in params:
        kwargs["max_characters"] = max_characters
    else:
        max_characters = None
    return InProcessSession(workdir, tool_type, factory(workdir, **kwargs),
                            max_characters=max_characters)


@dataclass
class Outcome:
    check_id: str
    status: str  # pass | fail | skip
    failure: CheckFailure | None = None
    #: What the check returned: the convention it saw the subject follow (or "").
    observed: str = ""


def run_checks(factory: Factory, tool_type: str, *, ids: Iterable[str] | None = None,
               exclude: Iterable[str] = (), max_characters: int | None = 2000
               ) -> dict[str, Outcome]:
    """Run the applicable editor checks, each with a fresh subject and working directory."""
    wanted = set(ids) if ids is not None else None
    skip = set(exclude)
    results: dict[str, Outcome] = {}
    for c in sorted(CATALOG.values(), key=lambda c: c.id):
        if c.family != "editor" or not c.applies(tool_type) or c.id in skip:
            continue
        if wanted is not None and c.id not in wanted:
            continue
        with tempfile.TemporaryDirectory(prefix="editor-check-") as d:
            s = make_session(factory, tool_type, Path(d), max_characters)
            try:
                observed = c.func(s)
                if s.faults:  # as the runner does: a faulted session cannot pass
                    raise CheckFailure(f"the subject faulted: {'; '.join(s.faults)}")
                results[c.id] = Outcome(c.id, "pass", observed=observed or "")
            except CheckFailure as f:
                results[c.id] = Outcome(c.id, "fail", f)
            except CheckSkipped:
                results[c.id] = Outcome(c.id, "skip")
            finally:
                s.close()
    return results


def failing(results: dict[str, Outcome]) -> set[str]:
    return {k for k, v in results.items() if v.status == "fail"}
