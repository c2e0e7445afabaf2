"""Broken loop: turns off retries, so a transient 429 or 529 ends the conversation."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.errors.transient_retried", None)


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return ReferenceLoop(client.with_options(max_retries=0), params, run_tool).run()
