"""Broken loop: takes pause_turn for the end of the conversation."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.pause_turn.streamed", None)


class StopsOnPause(ReferenceLoop):
    def on_pause_turn(self, content: list[dict[str, Any]]) -> None:
        raise _Stop


class _Stop(Exception):
    pass


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    try:
        return StopsOnPause(client, params, run_tool).run()
    except _Stop:
        return None
