"""A bash subject over SWE-ReX's ``LocalRuntime`` bash session, driven as SWE-agent drives it.

``pip install swe-rex`` (checked with 1.4). Declare it as ``bash_20250124``::

    tooluse run --bash conformance.adapters.swe_rex:local_runtime_bash

What is mapped, following SWE-agent's ``SWEEnv`` (``sweagent/environment/swe_env.py``):

- the session: one ``LocalRuntime`` and one session created with ``create_session(
  CreateBashSessionRequest(startup_timeout=...))``; its shell starts in the current directory
  (SWE-ReX has no working-directory option), so the adapter runs ``cd WORKDIR`` in the session
  first, as SWE-agent ``cd``\\ s into the repository after creating its session;
- ``command``: ``run_in_session(BashAction(command=..., timeout=TIMEOUT, check="silent"))`` —
  SWE-agent's ``communicate`` passes ``check="silent"`` (it extracts the exit code and raises
  nothing). The observation's ``output`` is returned unchanged; ``is_error`` is ``exit_code !=
  0`` (an exit code SWE-ReX could not read, ``None``, is reported as an error: the tool did not
  say the command succeeded);
- a ``CommandTimeoutError``: SWE-agent then calls ``interrupt_session()`` (``run_in_session(
  BashInterruptAction())``) and tells the model the command was cancelled; the adapter does the
  same and answers ``is_error`` with SWE-ReX's message (and the interrupt's output, if any);
- a ``BashIncorrectSyntaxError`` (SWE-ReX runs ``bash -n`` before each command and refuses it):
  ``is_error`` with SWE-ReX's message;
- ``restart``: ``close_session`` and a new session (SWE-agent's ``reset`` makes a new
  deployment; the effect on the shell is the same), answered ``"tool has been restarted."``;
- an input with neither: an error naming the input (SWE-ReX has no such call).

Any other exception SWE-ReX raises propagates: the suite reports it as an error result with its
traceback, which is what SWE-agent would see.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from conformance.adapters._lazy import require

__all__ = ["REQUIREMENT", "SweRexBash", "local_runtime_bash"]

REQUIREMENT = "swe-rex"
#: SWE-agent's default command timeout, used when the suite gives none.
DEFAULT_TIMEOUT = 25.0


class SweRexBash:
    """One SWE-ReX ``LocalRuntime`` with its default bash session."""

    def __init__(self, workdir: Path, timeout: float | None = None) -> None:
        self.local = require("swerex.runtime.local", REQUIREMENT)
        self.abstract = require("swerex.runtime.abstract", REQUIREMENT)
        self.exceptions = require("swerex.exceptions", REQUIREMENT)
        self.workdir = Path(workdir)
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.runtime = self.local.LocalRuntime()
        self.started = False

    async def _start(self) -> None:
        a = self.abstract
        await self.runtime.create_session(
            a.CreateBashSessionRequest(startup_timeout=max(self.timeout, 10.0)))
        await self.runtime.run_in_session(a.BashAction(
            command=f"cd {shlex.quote(str(self.workdir))}", timeout=self.timeout, check="silent"))
        self.started = True

    async def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        a, exc = self.abstract, self.exceptions
        if not self.started:
            await self._start()
        if tool_input.get("restart") is True:
            await self.runtime.close_session(a.CloseBashSessionRequest())
            self.started = False
            await self._start()
            return {"content": "tool has been restarted.", "is_error": False}
        command = tool_input.get("command")
        if not isinstance(command, str):
            return {"content": "Error: the input has neither a 'command' string nor "
                               "'restart': true", "is_error": True}
        try:
            obs = await self.runtime.run_in_session(
                a.BashAction(command=command, timeout=self.timeout, check="silent"))
        except exc.CommandTimeoutError as e:
            interrupted = await self.runtime.run_in_session(a.BashInterruptAction())
            text = str(e) + (f"\n{interrupted.output}" if interrupted.output else "")
            return {"content": text, "is_error": True}
        except exc.BashIncorrectSyntaxError as e:
            return {"content": str(e), "is_error": True}
        return {"content": obs.output, "is_error": obs.exit_code != 0}

    async def aclose(self) -> None:
        await self.runtime.close()


def local_runtime_bash(workdir: Path, timeout: float | None = None) -> SweRexBash:
    """Factory: a SWE-ReX ``LocalRuntime`` bash session in ``workdir``."""
    return SweRexBash(workdir, timeout)
