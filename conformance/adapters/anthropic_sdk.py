"""Subjects wrapping the ``anthropic`` SDK's own tool implementations (SDK 2.10 to 2.15).

- :func:`agent_toolset_bash`: the ``bash`` tool of ``beta_agent_toolset_20260401``
  (``anthropic.lib.tools.agent_toolset``), as a ``bash_20250124`` subject.
- :func:`agent_toolset_editor`: a text-editor profile over that toolset's ``read`` / ``write`` /
  ``edit`` (and ``glob`` for directories): ``view`` → ``read``, ``create`` → ``write``,
  ``str_replace`` → ``edit``. The toolset has no ``insert`` and no ``undo_edit``; those are
  answered with an error naming the gap. Declare it as ``text_editor_20250728``.
- :func:`memory_tool_editor`: ``BetaLocalFilesystemMemoryTool`` (``memory_20250818``), whose
  commands (``view``, ``create``, ``str_replace``, ``insert`` with ``insert_text``) are the text
  editor's; paths inside the working directory are mapped to ``/memories/...``. Declare it as
  ``text_editor_20250728``.
- :func:`async_memory_tool_editor`: the same over ``BetaAsyncLocalFilesystemMemoryTool``, the
  SDK's separate async implementation of the memory tool (its own code, its own behaviour).

The SDK is imported when a subject is made: without it, making one raises
:class:`~conformance.adapters._lazy.ImplementationMissing` naming ``pip install anthropic``.
A ``ToolError`` raised by an SDK tool becomes ``{"content": ..., "is_error": True}``.

    tooluse run --editor conformance.adapters.anthropic_sdk:agent_toolset_editor \\
        --editor-type text_editor_20250728
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conformance.adapters._lazy import require

__all__ = ["REQUIREMENT", "agent_toolset_bash", "agent_toolset_editor",
           "async_memory_tool_editor", "memory_tool_editor"]

REQUIREMENT = "anthropic>=2.10"

#: The profile's declared tool type (no undo_edit; insert_text).
EDITOR_PROFILE_TYPE = "text_editor_20250728"


def _sdk(module: str) -> Any:
    return require(module, REQUIREMENT)


def _tool_error() -> type[Exception]:
    error: type[Exception] = _sdk("anthropic.lib.tools").ToolError
    return error


def _error(e: Any) -> dict[str, Any]:
    return {"content": e.content, "is_error": True}


class AgentToolsetBash:
    """``bash`` of the agent toolset; async (the suite keeps one event loop per subject)."""

    def __init__(self, workdir: Path, timeout: float | None = None) -> None:
        toolset = _sdk("anthropic.lib.tools.agent_toolset")
        AgentToolContext, beta_bash_tool = toolset.AgentToolContext, toolset.beta_bash_tool
        self.tool_error = _tool_error()
        self.timeout_ms = int((timeout or 120.0) * 1000)
        self.tool = beta_bash_tool(AgentToolContext(workdir=str(workdir)))

    async def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any] | str:
        args = {k: v for k, v in tool_input.items() if k in ("command", "restart")}
        if "command" in args:
            args["timeout_ms"] = self.timeout_ms
        try:
            out = await self.tool.call(args)
        except self.tool_error as e:
            return _error(e)
        return out if isinstance(out, str) else {"content": out, "is_error": False}

    async def aclose(self) -> None:
        await _sdk("anthropic.lib.tools._beta_functions").aclose_runnable_tool(self.tool)


def agent_toolset_bash(workdir: Path, timeout: float | None = None) -> AgentToolsetBash:
    return AgentToolsetBash(workdir, timeout)


class AgentToolsetEditor:
    """The text-editor profile over ``read`` / ``write`` / ``edit`` / ``glob``."""

    def __init__(self, workdir: Path) -> None:
        toolset = _sdk("anthropic.lib.tools.agent_toolset")
        self.tool_error = _tool_error()
        ctx = toolset.AgentToolContext(workdir=str(workdir))
        self.read, self.write = toolset.beta_read_tool(ctx), toolset.beta_write_tool(ctx)
        self.edit, self.glob = toolset.beta_edit_tool(ctx), toolset.beta_glob_tool(ctx)

    async def __call__(self, tool_input: dict[str, Any]) -> Any:
        command, path = tool_input.get("command"), tool_input.get("path")
        try:
            if command == "view" and isinstance(path, str) and os.path.isdir(path):
                return await self.glob.call({"pattern": "**/*", "path": path})
            if command == "view":
                args: dict[str, Any] = {"file_path": path}
                if "view_range" in tool_input:
                    args["view_range"] = tool_input["view_range"]
                return await self.read.call(args)
            if command == "create":
                return await self.write.call({"file_path": path,
                                              "content": tool_input.get("file_text")})
            if command == "str_replace":
                return await self.edit.call({"file_path": path,
                                             "old_string": tool_input.get("old_str"),
                                             "new_string": tool_input.get("new_str", "")})
        except self.tool_error as e:
            return _error(e)
        return {"content": f"Error: the agent toolset has no equivalent of {command!r} "
                           "(it maps view/create/str_replace to read/write/edit)",
                "is_error": True}


def agent_toolset_editor(workdir: Path, timeout: float | None = None) -> AgentToolsetEditor:
    return AgentToolsetEditor(workdir)


class MemoryToolEditor:
    """``BetaLocalFilesystemMemoryTool`` rooted at the working directory (as ``/memories``)."""

    def __init__(self, workdir: Path) -> None:
        memory = _sdk("anthropic.lib.tools._beta_builtin_memory_tool")
        self.tool_error = _tool_error()
        self.root = str(Path(workdir))
        self.tool = memory.BetaLocalFilesystemMemoryTool(base_path=self.root)
        # The SDK roots memories at base_path/memories; point it at the working directory itself
        # and drop the directory it made, so the suite's files are what it sees.
        made = self.tool.memory_root
        self.tool.memory_root = Path(self.root)
        if made.is_dir() and not any(made.iterdir()):
            made.rmdir()

    def _memory_path(self, value: Any) -> Any:
        if isinstance(value, str) and (value == self.root or value.startswith(self.root + "/")):
            return "/memories" + value[len(self.root):]
        return value

    def __call__(self, tool_input: dict[str, Any]) -> Any:
        mapped = dict(tool_input)
        if "path" in mapped:
            mapped["path"] = self._memory_path(mapped["path"])
        try:
            return self.tool.call(mapped)
        except self.tool_error as e:
            return _error(e)


def memory_tool_editor(workdir: Path, timeout: float | None = None) -> MemoryToolEditor:
    return MemoryToolEditor(workdir)


class AsyncMemoryToolEditor(MemoryToolEditor):
    """``BetaAsyncLocalFilesystemMemoryTool`` rooted at the working directory (as ``/memories``).

    The async tool makes its ``memories`` directory on first use, not in ``__init__``; its root is
    pointed at the working directory (which exists) before any call.
    """

    def __init__(self, workdir: Path) -> None:
        memory = _sdk("anthropic.lib.tools._beta_builtin_memory_tool")
        self.tool_error = _tool_error()
        self.root = str(Path(workdir))
        self.tool = memory.BetaAsyncLocalFilesystemMemoryTool(base_path=self.root)
        self.tool.memory_root = self.tool.base_path.__class__(self.root)

    async def __call__(self, tool_input: dict[str, Any]) -> Any:
        mapped = dict(tool_input)
        if "path" in mapped:
            mapped["path"] = self._memory_path(mapped["path"])
        try:
            return await self.tool.call(mapped)
        except self.tool_error as e:
            return _error(e)


def async_memory_tool_editor(workdir: Path, timeout: float | None = None) -> AsyncMemoryToolEditor:
    return AsyncMemoryToolEditor(workdir)


_ASYNC = '''\
LOOP = asyncio.new_event_loop()


def run(coro):
    return LOOP.run_until_complete(coro)
'''

_ANSWER = '''\
def answer(raw):
    # a tool's return value is the tool_result content
    return raw if isinstance(raw, dict) else {"content": raw, "is_error": False}


def refused(exc):
    # the SDK's tool runner answers a ToolError with an error result
    if isinstance(exc, ToolError):
        return {"content": exc.content, "is_error": True}
    return None
'''


def repro_calls(factory: str, timeout: float | None) -> Any:
    """A reproducer's calls (:mod:`conformance.adapters._repro`): the SDK's tool objects called
    with the tool input, as its tool runner calls them (``tool.call(input)``); the memory tool
    rooted at ``base_path`` (its memories are ``W = base_path/memories``, paths ``/memories/...``)."""
    from conformance.adapters._repro import UpstreamCalls, lit

    if factory == "agent_toolset_bash":
        ms = int((timeout or 120.0) * 1000)

        def bash_call(tool_input: dict[str, Any]) -> str:
            args = {k: v for k, v in tool_input.items() if k in ("command", "restart")}
            if "command" in args:
                args["timeout_ms"] = ms
            return f"run(tool.call({lit(args)}))"

        return UpstreamCalls(
            install="anthropic",
            imports=("import asyncio\nfrom anthropic.lib.tools import ToolError\n"
                     "from anthropic.lib.tools.agent_toolset import AgentToolContext, "
                     "beta_bash_tool\n\n" + _ASYNC),
            make="tool = beta_bash_tool(AgentToolContext(workdir=W))",
            call=bash_call, answer=_ANSWER,
            close=("from anthropic.lib.tools._beta_functions import aclose_runnable_tool\n"
                   "run(aclose_runnable_tool(tool))"))
    if factory not in ("memory_tool_editor", "async_memory_tool_editor"):
        return None
    is_async = factory.startswith("async")
    cls = "BetaAsyncLocalFilesystemMemoryTool" if is_async else "BetaLocalFilesystemMemoryTool"

    def memory_call(tool_input: dict[str, Any]) -> str:
        mapped = dict(tool_input)
        path = mapped.get("path")
        if isinstance(path, str) and (path == "$TOOLUSE_WORKDIR"
                                      or path.startswith("$TOOLUSE_WORKDIR/")):
            mapped["path"] = "/memories" + path[len("$TOOLUSE_WORKDIR"):]
        expr = f"tool.call({lit(mapped)})"
        return f"run({expr})" if is_async else expr

    return UpstreamCalls(
        install="anthropic",
        imports=("import asyncio\nimport os\nimport tempfile\n"
                 "from anthropic.lib.tools import ToolError\n"
                 f"from anthropic.lib.tools._beta_builtin_memory_tool import {cls}\n\n"
                 + (_ASYNC if is_async else "")),
        make=(f"tool = {cls}(base_path=BASE)\n"
              "W = os.path.join(BASE, 'memories')  # the tool's /memories\n"
              "os.makedirs(W, exist_ok=True)"),
        call=memory_call, answer=_ANSWER, tool_makes_workdir=True)
