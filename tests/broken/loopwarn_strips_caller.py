"""Broken loop (warning): resends tool_use blocks without their `caller`, so a programmatic call
comes back looking like a direct one (seen in pydantic-ai and LiteLLM). No rule refuses it;
only the SHOULD warning reports it."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

WARNS = "loop.ptc.caller_resent"


class StripsCaller(ReferenceLoop):
    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        super().add_assistant([{k: v for k, v in b.items() if k != "caller"} for b in content])


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return StripsCaller(client, params, run_tool).run()
