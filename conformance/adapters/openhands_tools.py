"""Subjects over openhands-tools' ``FileEditorExecutor`` and ``TerminalExecutor`` (OpenHands SDK).

``pip install openhands-tools`` (checked with 1.58.2; it needs Python 3.12, and its dependency
browser-use pins ``anthropic<2``, so install it beside this suite with pip's legacy resolver, as
the project's ``matrix.toml`` does; the editor and the terminal do not import browser-use).

- :func:`file_editor`: ``FileEditorExecutor(workspace_root=WORKDIR)``, declared as
  ``text_editor_20250124``: its ``FileEditorAction`` is that tool type's input (``view``,
  ``create``, ``str_replace``, ``insert`` with ``new_str``, ``undo_edit``); it has no
  ``insert_text``, so it is not declared as a later type.
- :func:`terminal_tmux` and :func:`terminal_subprocess`: ``TerminalExecutor(working_dir=WORKDIR,
  terminal_type=...)`` with its tmux back-end (the pane pool it uses when tmux is installed) and
  its subprocess (pty) back-end, declared as ``bash_20250124``.

``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set (unless already set) before the import: the SDK
imports litellm, which otherwise fetches a price list from the network at import time, retrying
for seconds offline; it changes nothing the tools do. For the terminals ``TMUX_TMPDIR`` defaults
to ``$TMPDIR`` (tmux's socket and OpenHands' lock beside it; under the suite's sandbox only the
private ``$TMPDIR`` is writable, not ``/tmp``).

What is mapped, as the SDK's agent does it (``openhands/sdk/agent/agent.py``):

- the input is validated into the tool's action with ``model_validate``; a ``ValidationError`` is
  answered with ``is_error`` and pydantic's message, as the agent answers a tool call whose
  arguments do not validate (it does not run the tool). bash ``command`` becomes
  ``TerminalAction(command=..., timeout=TIMEOUT)``: the suite's command timeout is the action's
  own ``timeout`` field ("a maximum time limit for running the command"); ``restart: true``
  becomes ``TerminalAction(command="", reset=True)``, the terminal's documented reset;
- the executor's observation is returned as the agent shows it to the model: the texts of
  ``observation.to_llm_content`` (with the terminal's metadata lines, ``[Command finished with
  exit code N]``, and the ``ERROR_MESSAGE_HEADER`` the SDK prepends to errors), and ``is_error`` is
  ``observation.is_error``, the tool's own flag. The terminal reports a failed command's exit code
  in the text and does not set ``is_error`` for it; the adapter does not derive one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from conformance.adapters._lazy import require

__all__ = ["REQUIREMENT", "Executor", "file_editor", "terminal_subprocess", "terminal_tmux"]

REQUIREMENT = "openhands-tools"
PYTHON = "3.12"
#: OpenHands' default soft timeout when the suite gives none.
DEFAULT_TIMEOUT = 30.0


def _module(name: str) -> Any:
    # The SDK imports litellm, which fetches a model price list from the network at import time
    # (and retries for seconds when there is none); the editor and the terminal never use it.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return require(name, REQUIREMENT, python=PYTHON)


def llm_content(observation: Any) -> str | list[dict[str, Any]]:
    """``observation.to_llm_content`` as tool_result content: the text, or blocks when there are
    images."""
    blocks: list[dict[str, Any]] = []
    for item in observation.to_llm_content:
        if getattr(item, "type", "text") == "text":
            blocks.append({"type": "text", "text": item.text})
        else:
            for url in getattr(item, "image_urls", []):
                media, _, data = url.partition(";base64,")
                blocks.append({"type": "image", "source": {
                    "type": "base64", "media_type": media.removeprefix("data:"), "data": data}})
    if all(b["type"] == "text" for b in blocks):
        return "".join(b["text"] for b in blocks)
    return blocks


class Executor:
    """One OpenHands executor and its action type, called as the agent calls it."""

    def __init__(self, executor: Any, action_type: Any, *, bash_timeout: float | None = None) -> None:
        self.executor, self.action_type = executor, action_type
        self.bash_timeout = bash_timeout
        self.validation_error = _module("pydantic").ValidationError

    def _action_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        if self.bash_timeout is None:
            return tool_input
        return _bash_action(tool_input, self.bash_timeout)

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        try:
            action = self.action_type.model_validate(self._action_input(tool_input))
        except self.validation_error as e:
            return {"content": f"Error validating tool arguments: {e}", "is_error": True}
        observation = self.executor(action)
        return {"content": llm_content(observation), "is_error": bool(observation.is_error)}

    def close(self) -> None:
        close = getattr(self.executor, "close", None)
        if close is not None:
            close()


def file_editor(workdir: Path, timeout: float | None = None) -> Executor:
    """Factory: ``FileEditorExecutor`` rooted at ``workdir`` (``text_editor_20250124``)."""
    impl = _module("openhands.tools.file_editor.impl")
    definition = _module("openhands.tools.file_editor.definition")
    return Executor(impl.FileEditorExecutor(workspace_root=str(workdir)),
                    definition.FileEditorAction)


def _terminal(workdir: Path, timeout: float | None, terminal_type: str) -> Executor:
    # tmux (and OpenHands' lock beside its socket) use $TMUX_TMPDIR, default /tmp: under the
    # suite's sandbox only the private $TMPDIR is writable, so the socket goes there.
    os.environ.setdefault("TMUX_TMPDIR", tempfile.gettempdir())
    impl = _module("openhands.tools.terminal.impl")
    definition = _module("openhands.tools.terminal.definition")
    executor = impl.TerminalExecutor(working_dir=str(workdir), terminal_type=terminal_type)
    return Executor(executor, definition.TerminalAction,
                    bash_timeout=timeout or DEFAULT_TIMEOUT)


def terminal_tmux(workdir: Path, timeout: float | None = None) -> Executor:
    """Factory: ``TerminalExecutor`` with its tmux back-end (needs ``tmux`` on PATH)."""
    return _terminal(workdir, timeout, "tmux")


def terminal_subprocess(workdir: Path, timeout: float | None = None) -> Executor:
    """Factory: ``TerminalExecutor`` with its subprocess (pty) back-end."""
    return _terminal(workdir, timeout, "subprocess")


_ANSWER = '''\
def answer(observation):
    # what the SDK's agent shows the model: observation.to_llm_content, and the tool's flag
    text = "".join(getattr(item, "text", "") for item in observation.to_llm_content)
    return {"content": text, "is_error": bool(observation.is_error)}


def refused(exc):
    # the agent answers arguments that do not validate with an error, without running the tool
    if type(exc).__name__ == "ValidationError":
        return {"content": f"Error validating tool arguments: {exc}", "is_error": True}
    return None
'''


def repro_calls(factory: str, timeout: float) -> Any:
    """A reproducer's calls (:mod:`conformance.adapters._repro`): the executor called with the
    action the SDK's agent validates from the tool input (``Action.model_validate(input)``); a
    bash ``restart`` is the terminal's ``reset``, the suite's timeout the action's ``timeout``."""
    from conformance.adapters._repro import UpstreamCalls, lit

    env = (("LITELLM_LOCAL_MODEL_COST_MAP", "True"),)
    if factory == "file_editor":
        return UpstreamCalls(
            install=REQUIREMENT, env=env,
            imports=("from openhands.tools.file_editor.definition import FileEditorAction\n"
                     "from openhands.tools.file_editor.impl import FileEditorExecutor"),
            make="executor = FileEditorExecutor(workspace_root=W)",
            call=lambda i: f"executor(FileEditorAction.model_validate({lit(i)}))",
            answer=_ANSWER)
    if factory not in ("terminal_tmux", "terminal_subprocess"):
        return None
    kind = factory.removeprefix("terminal_")

    def call(tool_input: dict[str, Any]) -> str:
        return f"executor(TerminalAction.model_validate({lit(_bash_action(tool_input, timeout))}))"

    return UpstreamCalls(
        install=REQUIREMENT, env=env,
        imports=("from openhands.tools.terminal.definition import TerminalAction\n"
                 "from openhands.tools.terminal.impl import TerminalExecutor"),
        make=f"executor = TerminalExecutor(working_dir=W, terminal_type={kind!r})",
        call=call, answer=_ANSWER, close="executor.close()")


def _bash_action(tool_input: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The action the adapter sends for a bash tool input (:meth:`Executor._action_input`)."""
    if tool_input.get("restart") is True and "command" not in tool_input:
        return {"command": "", "reset": True}
    mapped = {k: v for k, v in tool_input.items() if k != "restart"}
    if "restart" in tool_input:  # restart: false, or with a command: the tool's own checks
        mapped["reset"] = tool_input["restart"]
    mapped.setdefault("timeout", timeout)
    return mapped
