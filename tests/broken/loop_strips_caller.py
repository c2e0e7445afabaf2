"""Broken loop: resends tool_use blocks without their `caller`, so a programmatic call comes back
looking like a direct one (seen in pydantic-ai and LiteLLM). Until issue 37 no rule refused it and
only the SHOULD warning `loop.ptc.caller_resent` reported it; the rule on resent turns
(`messages.resent_turn.unchanged`: a served turn comes back with its callers unchanged) refuses
it now, so the programmatic-call checks fail and the warning SKIPs, naming them."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.ptc.pause_resume", "messages.resent_turn.unchanged")


class StripsCaller(ReferenceLoop):
    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        super().add_assistant([{k: v for k, v in b.items() if k != "caller"} for b in content])


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return StripsCaller(client, params, run_tool).run()
