"""A minimal custom-tool worker written against the raw endpoints: the shape a worker takes in a
language without the SDK's ``EnvironmentWorker``. It passes every ``worker.*`` check, and its hooks
are what the deliberately broken workers in the project's tests override.

The protocol, step by step (PROTOCOL.md §7, seed 004)::

    loop:
        item = GET  /v1/environments/{env}/work/poll?block_ms=999      (null: poll again)
        POST /v1/environments/{env}/work/{item}/ack
        in parallel until the session ends or the lease is lost:
            POST .../work/{item}/heartbeat?expected_last_heartbeat=<previous or NO_HEARTBEAT>
                 every ttl/2 s; 412 = the lease is lost: stop serving, leave the item alone
            GET  /v1/sessions/{session}/events   -> every agent.custom_tool_use without a result
                 whose tool this worker serves: run it (bounded by the timeout) and
            POST /v1/sessions/{session}/events   {"events": [{"type": "user.custom_tool_result",
                 "custom_tool_use_id": <event id>, "content": [...], "is_error": <failed>}]}
        POST .../work/{item}/stop {"force": true}   (unless the lease was lost)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anthropic

from .toolset import SERVED, run_tool

NO_HEARTBEAT = "NO_HEARTBEAT"
#: How often the session's events are re-read (seconds).
EVENTS_INTERVAL = 0.05

ToolFn = Callable[[str, Mapping[str, Any]], Awaitable[str]]


class MinimalWorker:
    #: Bound on each tool call (None: no bound).
    timeout: float | None = 150.0

    def __init__(self, client: anthropic.AsyncAnthropic, environment_id: str, *,
                 timeout: float | None = None, run: ToolFn = run_tool,
                 served: tuple[str, ...] = SERVED) -> None:
        self.client = client
        self.environment_id = environment_id
        if timeout is not None:
            self.timeout = timeout
        self.run_tool = run
        self.served = served
        self.work = client.beta.environments.work
        self.events = client.beta.sessions.events

    # -- hooks -------------------------------------------------------------------------------

    def serves(self, name: str) -> bool:
        return name in self.served

    async def call(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        """Run one tool: (text, is_error). A failure or a timeout is an error result."""
        try:
            if self.timeout is None:
                return await self.run_tool(name, tool_input), False
            return await asyncio.wait_for(self.run_tool(name, tool_input), self.timeout), False
        except TimeoutError:
            return f"tool {name!r} timed out after {self.timeout:g}s", True
        except Exception as e:
            return f"{type(e).__name__}: {e}", True

    def result_events(self, use: Any, text: str, is_error: bool) -> list[dict[str, Any]]:
        return [{"type": "user.custom_tool_result", "custom_tool_use_id": use.id,
                 "content": [{"type": "text", "text": text or "(no output)"}],
                 "is_error": is_error}]

    async def on_lease_lost(self, work_id: str) -> bool:
        """A heartbeat got 412. Return True to stop serving the item (the documented reaction)."""
        return True

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        while True:
            item = await self.work.poll(self.environment_id, block_ms=999)
            if item is None:
                continue
            await self.work.ack(item.id, environment_id=self.environment_id)
            if item.data.type == "session":
                await self.handle(item.id, item.data.id)

    async def handle(self, work_id: str, session_id: str) -> None:
        lost = asyncio.Event()
        serving = asyncio.create_task(self.serve_session(session_id))
        beating = asyncio.create_task(self.heartbeat(work_id, lost))
        try:
            await asyncio.wait({serving, beating}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (serving, beating):
                task.cancel()
            await asyncio.gather(serving, beating, return_exceptions=True)
        if not lost.is_set():
            try:
                await self.work.stop(work_id, environment_id=self.environment_id, force=True)
            except anthropic.ConflictError:
                pass

    async def heartbeat(self, work_id: str, lost: asyncio.Event) -> None:
        last = NO_HEARTBEAT
        while True:
            try:
                beat = await self.work.heartbeat(work_id, environment_id=self.environment_id,
                                                 expected_last_heartbeat=last)
            except anthropic.APIStatusError as e:
                if e.status_code == 412 and await self.on_lease_lost(work_id):
                    lost.set()
                    return
                await asyncio.sleep(1.0)
                continue
            last = beat.last_heartbeat
            if beat.state in ("stopping", "stopped") or not beat.lease_extended:
                return
            await asyncio.sleep(max(0.5, min(beat.ttl_seconds / 2, 30)))

    async def serve_session(self, session_id: str) -> None:
        answered: set[str] = set()
        while True:
            events = [e async for e in self.events.list(session_id, limit=1000)]
            for e in events:
                if e.type == "user.custom_tool_result":
                    answered.add(e.custom_tool_use_id)
                elif e.type in ("session.status_terminated", "session.deleted"):
                    return
            for e in events:
                if e.type != "agent.custom_tool_use" or e.id in answered or not self.serves(e.name):
                    continue
                text, is_error = await self.call(e.name, dict(e.input))
                await self.events.send(session_id, events=self.result_events(e, text, is_error))  # type: ignore[arg-type]
                answered.add(e.id)
            await asyncio.sleep(EVENTS_INTERVAL)


async def serve(client: anthropic.AsyncAnthropic, environment_id: str, environment_key: str, *,
                timeout: float | None = None) -> None:
    """``--worker conformance.workers.minimal:serve``: serves the conformance toolset itself."""
    await MinimalWorker(client, environment_id, timeout=timeout).run()
