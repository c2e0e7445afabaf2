"""LangChain's agent (``langchain`` 1.x ``create_agent``) on ``langchain-anthropic``'s
``ChatAnthropic``, as a ``--loop-cmd`` program: ``python -m conformance.adapters.langchain_agent``.

Wired as a user would: ``ChatAnthropic(model, base_url=ANTHROPIC_BASE_URL, max_tokens,
streaming=<the scenario's stream>)``, the scenario's custom tools as ``StructuredTool``s whose
``args_schema`` is the recorded JSON schema (``allowed_callers`` in ``extras``, which
langchain-anthropic copies onto the tool definition) answering with the recorded results, code
execution as the provider tool dict (``{"type": "code_execution_20260120", "name":
"code_execution"}``), ``create_agent(model, tools)`` invoked with the first user message. A
conversation that starts with ``container`` passes it as ``ChatAnthropic(container=...)``.
``TOOLUSE_LANGCHAIN_REUSE_CONTAINER=1`` sets langchain-anthropic's opt-in
``reuse_last_container=True`` (a column of its own: the default and the helper are two
integrations). Requests are matched with the tolerant matcher set (LangChain lists client tools
before server tools, a formatting choice).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from conformance.adapters._loop_params import opening_prompt, recorded_call, run_program

CODE_EXECUTION = "code_execution_20260120"
DESCRIBE = {"matching": "tolerant",
            "variants": {"client_tool": "custom", "code_execution": CODE_EXECUTION}}

def conversation(doc: dict[str, Any], params: dict[str, Any]) -> Any:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic
    from langchain_core.tools import StructuredTool

    tools: list[Any] = []
    for t in params.get("tools") or []:
        kind = str(t.get("type", "custom"))
        if kind == "custom":
            name = str(t["name"])
            extras = {"allowed_callers": t["allowed_callers"]} if t.get("allowed_callers") else None
            tools.append(StructuredTool.from_function(
                func=recorded_call(doc, name), name=name, description=t.get("description", ""),
                args_schema=t.get("input_schema") or {"type": "object"}, extras=extras))
        elif kind.startswith("code_execution_"):
            tools.append({"type": CODE_EXECUTION, "name": "code_execution"})
        else:
            raise ValueError(f"the LangChain adapter has no mapping for a {kind} tool")
    options: dict[str, Any] = {}
    if params.get("container"):
        options["container"] = params["container"]
    if os.environ.get("TOOLUSE_LANGCHAIN_REUSE_CONTAINER") == "1":
        options["reuse_last_container"] = True
    if params.get("extra_headers"):
        options["default_headers"] = params["extra_headers"]
    model = ChatAnthropic(model=params["model"], base_url=os.environ["ANTHROPIC_BASE_URL"],
                          api_key=os.environ["ANTHROPIC_API_KEY"],
                          max_tokens=params.get("max_tokens", 1024),
                          streaming=bool(params.get("stream")), **options)
    agent = create_agent(model, tools=tools)
    return agent.invoke({"messages": [{"role": "user", "content": opening_prompt(params)}]})


def main() -> int:
    return run_program(DESCRIBE, conversation)


if __name__ == "__main__":
    sys.exit(main())
