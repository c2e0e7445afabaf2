"""The conformance toolset: the custom tools every worker under test serves.

The suite declares these on the simulated agent and scripts sessions that call them; a worker
serves them the way it serves any custom tool. In-process workers may receive ready-made SDK tools
(``tools=``); workers in other languages implement the four served tools themselves, exactly:

=====================  =====================  ==================================================
tool                   input                  behaviour
=====================  =====================  ==================================================
``tooluse_echo``       ``{"text": str}``      returns ``text``
``tooluse_fail``       ``{"message": str}``   fails with ``message`` (sent as an ``is_error`` result)
``tooluse_hang``       ``{}``                 never returns (the worker's timeout must end it)
``tooluse_sleep``      ``{"seconds": float}`` returns ``"slept"`` after ``seconds``
``tooluse_unserved``   ``{}``                 declared on the agent, served by no worker
=====================  =====================  ==================================================
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

ECHO, FAIL, HANG, SLEEP, UNSERVED = ("tooluse_echo", "tooluse_fail", "tooluse_hang",
                                     "tooluse_sleep", "tooluse_unserved")
SERVED = (ECHO, FAIL, HANG, SLEEP)


def _decl(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "custom", "name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties,
                             "required": sorted(properties)}}


DECLARATIONS: list[dict[str, Any]] = [
    _decl(ECHO, "Return the given text unchanged.", {"text": {"type": "string"}}),
    _decl(FAIL, "Always fail with the given message.", {"message": {"type": "string"}}),
    _decl(HANG, "Never return (tests the worker's timeout).", {}),
    _decl(SLEEP, "Return 'slept' after the given number of seconds.",
          {"seconds": {"type": "number"}}),
    _decl(UNSERVED, "A tool no worker serves; the session waits for its result.", {}),
]


class ToolFailure(Exception):
    """What ``tooluse_fail`` raises."""


async def run_tool(name: str, tool_input: Mapping[str, Any]) -> str:
    """The documented behaviour of each served tool (raises :class:`ToolFailure` for ``fail``)."""
    if name == ECHO:
        return str(tool_input.get("text", ""))
    if name == FAIL:
        raise ToolFailure(str(tool_input.get("message", "failed")))
    if name == HANG:
        await asyncio.Event().wait()
    if name == SLEEP:
        await asyncio.sleep(float(tool_input.get("seconds", 0)))
        return "slept"
    raise KeyError(name)


def sdk_tools(timeout: float | None = None) -> list[Any]:
    """The served tools as the ``anthropic`` SDK's async runnable tools (``beta_async_tool``),
    each bounded by ``timeout`` seconds when given (a timeout raises, so it becomes an error
    result)."""
    from anthropic import beta_async_tool

    async def bounded(name: str, tool_input: dict[str, Any]) -> str:
        if timeout is None:
            return await run_tool(name, tool_input)
        try:
            return await asyncio.wait_for(run_tool(name, tool_input), timeout)
        except TimeoutError:
            raise ToolFailure(f"tool {name!r} timed out after {timeout:g}s") from None

    async def tooluse_echo(text: str) -> str:
        return await bounded(ECHO, {"text": text})

    async def tooluse_fail(message: str) -> str:
        return await bounded(FAIL, {"message": message})

    async def tooluse_hang() -> str:
        return await bounded(HANG, {})

    async def tooluse_sleep(seconds: float) -> str:
        return await bounded(SLEEP, {"seconds": seconds})

    by_name = {d["name"]: d for d in DECLARATIONS}
    return [beta_async_tool(fn, name=fn.__name__, description=by_name[fn.__name__]["description"],
                            input_schema=by_name[fn.__name__]["input_schema"])
            for fn in (tooluse_echo, tooluse_fail, tooluse_hang, tooluse_sleep)]
