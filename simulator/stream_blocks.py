"""Which content blocks stream as deltas (PROTOCOL.md §6; seed 000 § Streaming).

The one fact :mod:`simulator.sse` (synthesizing streams) and :mod:`simulator.envelope` (measuring
them) share; it lives below both so neither imports the other's floor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def called_by_code(block: Mapping[str, Any]) -> bool:
    """A call made from code (``caller`` other than direct): it streams whole, no deltas."""
    caller = block.get("caller")
    return isinstance(caller, dict) and caller.get("type") not in (None, "direct")


def streams_deltas(block: Mapping[str, Any]) -> bool:
    """Whether ``block`` streams as a start, deltas and a stop (else it arrives whole)."""
    t = block.get("type")
    return t in ("text", "thinking", "compaction") or (t in TOOL_INPUT_BLOCKS
                                                        and not called_by_code(block))


__all__ = ["TOOL_INPUT_BLOCKS", "called_by_code", "streams_deltas"]
