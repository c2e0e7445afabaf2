"""LiteLLM under an OpenAI-style agent loop, as a ``--loop-cmd`` program: ``python -m
conformance.adapters.litellm_loop``.

Wired as LiteLLM's docs show a tool loop: ``litellm.completion(model="anthropic/<model>",
messages, tools, api_base=ANTHROPIC_BASE_URL, max_tokens, stream)``; custom tools as OpenAI
function tools (``allowed_callers`` kept on the function, which LiteLLM forwards), code
execution as the Anthropic tool dict LiteLLM passes through (``code_execution_20250825``, the
version its Anthropic transformation knows, ``llms/anthropic/common_utils.py``); while
``finish_reason == "tool_calls"`` the assistant message goes back with one ``role: "tool"``
message per call (the recorded result); a streamed response is assembled with
``litellm.stream_chunk_builder``. Retries: LiteLLM's default. Requests are matched with the
tolerant matcher set (LiteLLM writes ``"type": "custom"`` on tools, a formatting choice).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from conformance.adapters._loop_params import opening_prompt, recorded_result, run_program

CODE_EXECUTION = "code_execution_20250825"
DESCRIBE = {"matching": "tolerant",
            "variants": {"client_tool": "custom", "code_execution": CODE_EXECUTION}}

def _tools(params: dict[str, Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for t in params.get("tools") or []:
        kind = str(t.get("type", "custom"))
        if kind == "custom":
            function = {"name": t["name"], "description": t.get("description", ""),
                        "parameters": t.get("input_schema") or {"type": "object"}}
            if t.get("allowed_callers"):
                function["allowed_callers"] = t["allowed_callers"]
            tools.append({"type": "function", "function": function})
        elif kind.startswith("code_execution_"):
            tools.append({"type": CODE_EXECUTION, "name": "code_execution"})
        else:
            raise ValueError(f"the LiteLLM adapter has no mapping for a {kind} tool")
    return tools


def conversation(doc: dict[str, Any], params: dict[str, Any]) -> Any:
    import litellm

    messages: list[dict[str, Any]] = [{"role": "user", "content": opening_prompt(params)}]
    tools = _tools(params)
    stream = bool(params.get("stream"))
    extra: dict[str, Any] = {}
    if params.get("extra_headers"):
        extra["extra_headers"] = params["extra_headers"]
    if params.get("container"):
        extra["container"] = params["container"]
    for _ in range(20):
        response = litellm.completion(
            model=f"anthropic/{params['model']}", messages=messages, tools=tools or None,
            api_base=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["ANTHROPIC_API_KEY"],
            max_tokens=params.get("max_tokens", 1024), stream=stream, **extra)
        if stream:
            response = litellm.stream_chunk_builder(list(response), messages=messages)
        choice = response.choices[0]
        message = choice.message
        if choice.finish_reason == "tool_calls" and message.tool_calls:
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                arguments = json.loads(call.function.arguments or "{}")
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": recorded_result(doc, call.function.name, arguments)})
            continue
        return response
    raise RuntimeError("more than 20 steps")


def main() -> int:
    return run_program(DESCRIBE, conversation)


if __name__ == "__main__":
    sys.exit(main())
