"""pydantic-ai (``pydantic-ai-slim[anthropic]``) as an agent-loop subject: ``--loop
conformance.adapters.pydantic_ai:agent_loop``.

Wired as a user would: an ``AnthropicModel`` on an ``AnthropicProvider`` built from the client the
harness hands over (``anthropic_client=``, the provider's documented way to bring a client), an
``Agent`` with the scenario's custom tools as ``Tool.from_schema`` tools answering through
``run_tool``, and ``code_execution`` as the ``CodeExecutionTool`` native tool (capability
``NativeTool``). The first user message is the prompt; ``max_tokens`` goes in the model
settings; a ``stream: true`` scenario runs with an ``event_stream_handler`` (pydantic-ai then
streams the requests). A conversation that starts with ``container`` passes it as
``anthropic_container``. Nothing else is set: pause_turn, containers and retries are left to
pydantic-ai's defaults.

What pydantic-ai cannot express (``tooluse_unsupported``, ``tooluse_variants``): it has no bash
client tool (the client-tool scenarios run with a custom function tool); it sends the code
execution version it picks for the model (``code_execution_20260120`` for Sonnet/Opus 4.5+,
``anthropic_code_execution_tool_version='auto'``); its function tools carry no
``allowed_callers`` (``models/anthropic/__init__.py`` ``_map_tool_definition``), so no
programmatic tool calling. Requests are matched with the tolerant matcher set (pydantic-ai lists
function tools before native ones, a formatting choice, not a protocol fault).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.adapters._lazy import require

RunTool = Callable[..., Any]

CODE_EXECUTION_VERSION = "code_execution_20260120"


def _prompt(params: dict[str, Any]) -> str:
    content = (params.get("messages") or [{}])[0].get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict)
                     and b.get("type") == "text")


def _function_tool(definition: dict[str, Any], run_tool: RunTool | None) -> Any:
    from pydantic_ai import Tool

    name = str(definition["name"])

    def call(**kwargs: Any) -> Any:
        return run_tool(name, kwargs, None) if run_tool is not None else f"{name}: done"

    return Tool.from_schema(call, name=name, description=definition.get("description"),
                            json_schema=definition.get("input_schema") or {"type": "object"})


async def agent_loop(client: Any, params: dict[str, Any], run_tool: RunTool | None = None) -> Any:
    """One conversation of the scenario, run by a pydantic-ai ``Agent``."""
    require("pydantic_ai", "pydantic-ai-slim[anthropic]")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.native_tool import NativeTool
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.native_tools import CodeExecutionTool
    from pydantic_ai.providers.anthropic import AnthropicProvider

    model = AnthropicModel(params["model"], provider=AnthropicProvider(anthropic_client=client))
    tools, capabilities = [], []
    for definition in params.get("tools") or []:
        kind = str(definition.get("type", "custom"))
        if kind == "custom":
            tools.append(_function_tool(definition, run_tool))
        elif kind.startswith("code_execution_"):
            capabilities.append(NativeTool(CodeExecutionTool()))
        else:
            raise ValueError(f"the pydantic-ai adapter has no mapping for a {kind} tool")
    settings: dict[str, Any] = {"max_tokens": params.get("max_tokens", 1024)}
    if params.get("container"):
        settings["anthropic_container"] = params["container"]
    agent = Agent(model, tools=tools, capabilities=capabilities)
    handler = None
    if params.get("stream"):
        async def handler(_ctx: Any, events: Any) -> None:
            async for _ in events:
                pass
    return await agent.run(_prompt(params), model_settings=settings,
                           event_stream_handler=handler)


#: Formatting is not judged: pydantic-ai lists its function tools before native ones.
agent_loop.tooluse_matching = "tolerant"  # type: ignore[attr-defined]
agent_loop.tooluse_variants = {  # type: ignore[attr-defined]
    "client_tool": "custom", "code_execution": CODE_EXECUTION_VERSION}
agent_loop.tooluse_unsupported = {  # type: ignore[attr-defined]
    **{f"loop.ptc.{s}": "pydantic-ai function tools carry no allowed_callers "
                        "(models/anthropic/__init__.py _map_tool_definition): no programmatic "
                        "tool calling"
       for s in ("pause_resume", "pause_resume_streamed", "parallel_calls", "several_pauses")},
}
