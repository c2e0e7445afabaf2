"""Broken loop: retries a request refused for an expired container with the same container."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.container.expired", "container.unknown_or_expired")


class KeepsExpiredContainer(ReferenceLoop):
    retries = 2

    def on_expired_container(self) -> None:
        self.retries -= 1
        if self.retries < 0:
            raise RuntimeError("giving up on the container")


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return KeepsExpiredContainer(client, params, run_tool).run()
