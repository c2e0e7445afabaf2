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


_HELPERS = '''\
LOOP = asyncio.new_event_loop()


def run(coro):
    return LOOP.run_until_complete(coro)


async def start_session(runtime, workdir, timeout):
    # as SWE-agent: a session, then cd into the repository
    await runtime.create_session(CreateBashSessionRequest(startup_timeout=max(timeout, 10.0)))
    await runtime.run_in_session(BashAction(command="cd " + shlex.quote(workdir),
                                            timeout=timeout, check="silent"))


async def communicate(runtime, command, timeout):
    # SWE-agent's communicate: check="silent"; on a timeout it interrupts the session
    try:
        obs = await runtime.run_in_session(BashAction(command=command, timeout=timeout,
                                                      check="silent"))
    except CommandTimeoutError as e:
        interrupted = await runtime.run_in_session(BashInterruptAction())
        return {"content": str(e) + (f"\\n{interrupted.output}" if interrupted.output else ""),
                "is_error": True}
    except BashIncorrectSyntaxError as e:
        return {"content": str(e), "is_error": True}
    return {"content": obs.output, "is_error": obs.exit_code != 0}


async def restart(runtime, workdir, timeout):
    await runtime.close_session(CloseBashSessionRequest())
    await start_session(runtime, workdir, timeout)
    return {"content": "tool has been restarted.", "is_error": False}


def answer(raw):
    return raw


def refused(exc):
    return None
'''


def repro_calls(factory: str, timeout: float | None) -> Any:
    """A reproducer's calls (:mod:`conformance.adapters._repro`): a ``LocalRuntime`` session
    driven as SWE-agent drives it (the mapping above)."""
    from conformance.adapters._repro import UpstreamCalls

    t = timeout or DEFAULT_TIMEOUT

    def call(tool_input: dict[str, Any]) -> str:
        from conformance.adapters._repro import lit

        if tool_input.get("restart") is True:
            return f"run(restart(runtime, W, {t!r}))"
        return f"run(communicate(runtime, {lit(tool_input.get('command'))}, {t!r}))"

    return UpstreamCalls(
        install=REQUIREMENT,
        imports=("import asyncio\nimport shlex\n"
                 "from swerex.exceptions import BashIncorrectSyntaxError, CommandTimeoutError\n"
                 "from swerex.runtime.abstract import (BashAction, BashInterruptAction,\n"
                 "                                     CloseBashSessionRequest,\n"
                 "                                     CreateBashSessionRequest)\n"
                 "from swerex.runtime.local import LocalRuntime\n\n" + _HELPERS),
        make=f"runtime = LocalRuntime()\nrun(start_session(runtime, W, {t!r}))",
        call=call, answer="", close="run(runtime.close())")
