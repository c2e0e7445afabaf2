"""The reference custom-tool worker: the ``anthropic`` SDK's own ``EnvironmentWorker``.

It serves the conformance toolset (or any tools given) with each call bounded by ``timeout``:
the SDK's worker turns a raising tool into an ``is_error`` result, so a timeout raises. Everything
else (poll, ack, heartbeat with ``expected_last_heartbeat``, giving up on 412, force-stop) is the
SDK's. Use it as ``--worker conformance.reference.worker:serve`` or, from any process with the
``ANTHROPIC_BASE_URL`` / ``TOOLUSE_ENVIRONMENT_*`` variables set, ``python -m conformance.reference.worker``.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The SDK runner's idle grace after an ``end_turn`` (its default is 60 s; the suite archives
#: finished sessions, which ends the run at once, so this only bounds a stray wait).
MAX_IDLE = 5.0


async def serve(client: Any, environment_id: str, environment_key: str, *,
                tools: Sequence[Any] | None = None, timeout: float | None = None,
                workdir: str | os.PathLike[str] | None = None) -> None:
    """Serve the environment until cancelled (``tools`` default: the conformance toolset)."""
    from anthropic.lib.environments import EnvironmentWorker

    from conformance.workers.toolset import sdk_tools

    served = list(tools) if tools is not None else sdk_tools(timeout)
    await EnvironmentWorker(
        client, environment_id=environment_id, environment_key=environment_key,
        tools=served, workdir=workdir or tempfile.mkdtemp(prefix="tooluse-worker-"),
        max_idle=MAX_IDLE, memory_sync_interval=None,
    ).run()


def main() -> None:
    """Entry point for ``--worker-cmd 'python -m conformance.reference.worker'``."""
    from anthropic import AsyncAnthropic

    key = os.environ.get("TOOLUSE_ENVIRONMENT_KEY") or os.environ["ANTHROPIC_ENVIRONMENT_KEY"]
    env_id = os.environ.get("TOOLUSE_ENVIRONMENT_ID") or os.environ["ANTHROPIC_ENVIRONMENT_ID"]
    timeout = float(os.environ.get("TOOLUSE_TOOL_TIMEOUT") or 150)

    async def run() -> None:
        async with AsyncAnthropic(auth_token=key, base_url=os.environ.get("ANTHROPIC_BASE_URL")) as c:
            await serve(c, env_id, key, timeout=timeout,
                        workdir=Path(os.environ.get("TOOLUSE_WORKDIR") or os.getcwd()))

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
