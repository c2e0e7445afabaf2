"""Simon Willison's ``llm`` with the ``llm-anthropic`` plugin, as a ``--loop-cmd`` program:
``python -m conformance.adapters.llm_anthropic``.

llm-anthropic 0.30 pins ``anthropic<2``, which the suite cannot share (it needs ``anthropic>=2.10``),
so frameworks.toml gives this column ``program_requirements``: a venv of its own, first on the
command's PATH, holding llm, llm-anthropic and this suite without its dependencies. This module
therefore imports only the standard library, ``llm`` and ``conformance.adapters._loop_params``.

Wired as a user would: ``llm.get_model("anthropic/<the scenario's model>")`` (the plugin's own
registration, so its defaults: it always streams, and sends its own ``temperature``), the
scenario's custom tools as ``llm.Tool(name, description, input_schema, implementation)``
answering with the recorded results, code execution as the plugin's ``CodeExecution`` tool (it
sends ``code_execution_20260521``; a conversation that starts with ``container`` passes it as
``CodeExecution(container=...)``, the plugin's only container setting), ``max_tokens`` as the
recorded request's, then ``model.chain(prompt, tools=...).text()`` (llm's tool loop). The API key
and base URL come from ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` (the anthropic client
reads the latter), unpatched.

What it cannot express (not applicable, never failures): programmatic tool calling. llm's tool
definitions carry name, description and input schema only (``llm_anthropic.py:1772`` builds
``{"name", "description", "input_schema"}``), so no ``allowed_callers`` reaches the request.
Requests are matched with the tolerant matcher set.
"""

from __future__ import annotations

import sys
from typing import Any

from conformance.adapters._loop_params import opening_prompt, recorded_call, run_program

CODE_EXECUTION = "code_execution_20260521"
_NO_ALLOWED_CALLERS = ("llm's tool definitions carry no allowed_callers (llm_anthropic.py:1772 "
                       "sends name, description and input_schema only): no programmatic call "
                       "can be requested")
DESCRIBE = {"matching": "tolerant",
            "variants": {"client_tool": "custom", "code_execution": CODE_EXECUTION},
            "unsupported": {c: _NO_ALLOWED_CALLERS for c in (
                "loop.ptc.pause_resume", "loop.ptc.pause_resume_streamed",
                "loop.ptc.parallel_calls", "loop.ptc.several_pauses")}}


def conversation(doc: dict[str, Any], params: dict[str, Any]) -> str:
    import llm
    from llm_anthropic import CodeExecution

    tools: list[Any] = []
    for t in params.get("tools") or []:
        kind = str(t.get("type", "custom"))
        if kind == "custom":
            name = str(t["name"])
            tools.append(llm.Tool(name=name, description=t.get("description", ""),
                                  input_schema=t.get("input_schema") or {"type": "object"},
                                  implementation=recorded_call(doc, name)))
        elif kind.startswith("code_execution_"):
            tools.append(CodeExecution(container=params.get("container")))
        else:
            raise ValueError(f"the llm-anthropic adapter has no mapping for a {kind} tool")
    model = llm.get_model(f"anthropic/{params['model']}")
    chain = model.chain(opening_prompt(params), tools=tools,
                        options={"max_tokens": params.get("max_tokens", 1024)})
    return str(chain.text())


def main() -> int:
    return run_program(DESCRIBE, conversation)


if __name__ == "__main__":
    sys.exit(main())
