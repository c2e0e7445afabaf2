"""Broken loop: never sends the container id back (a PTC follow-up then lacks it)."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.ptc.pause_resume", "ptc.container.required")


class ForgetsContainer(ReferenceLoop):
    def remember_container(self, container_id: str) -> None:
        pass


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return ForgetsContainer(client, params, run_tool).run()
