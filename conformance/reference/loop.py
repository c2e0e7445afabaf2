"""Reference agent loops: a small documented loop, and the SDK's beta tool runner as a subject.

:func:`loop` is the whole protocol a client owes the Messages API, in order:

1. Send the request (``stream: true`` streams it and assembles the final message).
2. Remember the ``container`` a response names and send its id on every later request.
3. ``stop_reason == "pause_turn"``: the server paused its own tool loop; send the assistant
   content back as-is (appended to the paused assistant message) with the same tools.
4. ``stop_reason == "tool_use"``: run every client ``tool_use`` block (programmatic calls, whose
   ``caller`` names code execution, included) and answer them all in ONE user message holding only
   ``tool_result`` blocks, in order; server tools (``server_tool_use``) are never answered.
5. A 400 saying the container expired: send the same request again without ``container``.
6. Anything else ends the conversation; the final message is returned.

Transient 429/529/5xx answers are retried by the SDK client itself (its ``max_retries``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RunTool = Callable[..., Any]


def _default_tool(name: str, tool_input: dict[str, Any], tool_use_id: str | None = None) -> str:
    return f"{name}: done"


def _send(client: Any, request: dict[str, Any], stream: bool) -> Any:
    if stream:
        with client.messages.stream(**request) as s:
            return s.get_final_message()
    return client.messages.create(**request)


def _expired_container(error: Exception) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return "container" in message and ("expired" in message or "not found" in message)


def _result_content(value: Any) -> Any:
    """A tool's output as tool_result content: text for programmatic calls (they take text only)."""
    if isinstance(value, str | list):
        return value
    return str(value)


class ReferenceLoop:
    """The steps above, one method each (the project's deliberately broken loops override one)."""

    def __init__(self, client: Any, params: dict[str, Any], run_tool: RunTool | None = None) -> None:
        self.client = client
        self.run_tool = run_tool or _default_tool
        self.base = {k: v for k, v in params.items() if k not in ("messages", "stream", "container")}
        self.messages: list[dict[str, Any]] = list(params["messages"])
        self.stream = bool(params.get("stream"))
        self.container: Any = params.get("container")

    def run(self) -> Any:
        import anthropic

        while True:
            request = dict(self.base, messages=list(self.messages))
            if self.container is not None:
                request["container"] = self.container
            try:
                message = _send(self.client, request, self.stream)
            except anthropic.BadRequestError as e:
                if self.container is not None and _expired_container(e):
                    self.on_expired_container()
                    continue
                raise
            if message.container is not None:
                self.remember_container(message.container.id)
            content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
            if message.stop_reason == "pause_turn":
                self.on_pause_turn(content)
                continue
            if message.stop_reason == "tool_use":
                self.add_assistant(content)
                uses = [b for b in content if b.get("type") == "tool_use"]
                self.add_results([self.answer(use) for use in uses])
                continue
            return message

    # -- the steps ---------------------------------------------------------------------------

    def on_expired_container(self) -> None:
        self.container = None  # documented: send the request again without `container`

    def remember_container(self, container_id: str) -> None:
        self.container = container_id

    def on_pause_turn(self, content: list[dict[str, Any]]) -> None:
        self.add_assistant(content)  # sent back as-is: the next request continues the turn

    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        """Append the assistant content, extending a paused assistant message."""
        if self.messages and self.messages[-1]["role"] == "assistant":
            previous = _blocks(self.messages[-1]["content"])
            self.messages[-1] = {"role": "assistant", "content": [*previous, *content]}
        else:
            self.messages.append({"role": "assistant", "content": content})

    def answer(self, use: dict[str, Any]) -> dict[str, Any]:
        """Run one client tool: a tool_result (a failing tool is an error result, not a crash)."""
        try:
            output, is_error = self.run_tool(use["name"], use.get("input") or {}, use["id"]), False
        except Exception as e:
            output, is_error = f"Error: {e}", True
        result = {"type": "tool_result", "tool_use_id": use["id"], "content": _result_content(output)}
        if is_error:
            result["is_error"] = True
        return result

    def add_results(self, results: list[dict[str, Any]]) -> None:
        """All results of a turn in one user message, tool_result blocks only."""
        self.messages.append({"role": "user", "content": results})


def loop(client: Any, params: dict[str, Any], run_tool: RunTool | None = None) -> Any:
    """Drive the conversation in ``params`` (Messages create parameters) to its end."""
    return ReferenceLoop(client, params, run_tool).run()


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


#: Scenarios the SDK tool runner does not claim to handle (reported as skipped, with the reason).
SDK_UNSUPPORTED = {
    "loop.container.expired": "the SDK tool runner raises on a 400 for an expired container; "
                              "recovering is left to the application",
}


def sdk_tool_runner(client: Any, params: dict[str, Any], run_tool: RunTool | None = None) -> Any:
    """The ``anthropic`` SDK's ``client.beta.messages.tool_runner`` as a loop subject.

    Client tools (custom tools, bash, text editor) become SDK runnable tools answering through
    ``run_tool``; server tools are passed as they are. Runs with the SDK's defaults (server-side message
    threads included).
    """
    from anthropic.lib.tools import BetaBuiltinFunctionTool

    run = run_tool or _default_tool

    class _Tool(BetaBuiltinFunctionTool):
        def __init__(self, definition: dict[str, Any]) -> None:
            self.definition = definition

        def to_dict(self) -> Any:
            return self.definition

        def call(self, input: object) -> Any:
            tool_input = dict(input) if isinstance(input, dict) else {}
            return _result_content(run(self.definition["name"], tool_input, None))

    tools = [_Tool(t) if _is_client_tool(t) else t for t in params.get("tools") or []]
    kwargs = {k: v for k, v in params.items() if k != "tools"}
    # The runner's default keeps the conversation in a server-side message thread (`thread:
    # {"type": "continue", ...}`); the simulator expands those (simulator.routes.MessageThreads).
    runner = client.beta.messages.tool_runner(tools=tools, **kwargs)
    return runner.until_done()


sdk_tool_runner.tooluse_unsupported = SDK_UNSUPPORTED  # type: ignore[attr-defined]


def _is_client_tool(tool: dict[str, Any]) -> bool:
    from simulator.registry import TOOLS

    kind = tool.get("type")
    if kind in (None, "custom"):
        return True
    version = TOOLS.get(str(kind))
    return version is not None and version.side == "client"
