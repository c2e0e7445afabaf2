#!/usr/bin/env python3
"""litellm 1.110.2: the loop stopped before the conversation ended (exchanges [1] of the recording were never requested)

litellm (litellm 1.110.2), check loop.pause_turn.streamed (MUST).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): You can pass the response back as-is in the next request to let Claude continue its turn, or modify its content if you want to interrupt the conversation.
Needs: pip install litellm==1.110.2 and this suite's `tooluse serve` (the simulated API: $TOOLUSE or PATH) (this file installs nothing).
Run: python repro.py  (exit 1 while the defect is there, 0 once fixed, 2 when it cannot run)
The recording: cassette.json (code_execution/code_execution_20250825/pause_turn_streamed.json); the loop's start: params.json.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

DOCS = 'You can pass the response back as-is in the next request to let Claude continue its turn, or modify its content if you want to interrupt the conversation.'
RULE = 'a streamed pause_turn response is sent back as-is to continue the turn'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool'
MATCHING = 'tolerant'
#: what `tooluse serve` plays besides the recording: the earlier conversation (--setup,
#: on the recording's clock) and the planned transient faults (--fault KIND@EXCHANGE)
SERVE = []
SETUP = 0
#: the column's settings (its integration's options)
ENV = []

# --- the framework's loop, as the column wires it (conformance/adapters/litellm_loop.py) ---
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


import json
import os
import sys
from typing import Any

# the adapter's shared helpers (conformance/adapters/_loop_params.py)
from collections.abc import Callable


def opening_prompt(params: dict[str, Any]) -> str:
    """The first user message's text (a string, or its text blocks joined by newlines)."""
    content = params["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def recorded_result(doc: dict[str, Any], name: str, tool_input: Any) -> str:
    """The recorded result of the call of ``name`` with ``tool_input`` ("ok" when none is)."""
    for call in doc.get("tool_results_by_call") or []:
        if call["name"] == name and call["input"] == tool_input:
            content = call["content"]
            return content if isinstance(content, str) else json.dumps(content)
    return "ok"


def recorded_call(doc: dict[str, Any], name: str) -> Callable[..., str]:
    """A client tool's implementation for a framework: called with the tool's input as keyword
    arguments, it answers the recorded result of that call."""
    def call(**kwargs: Any) -> str:
        return recorded_result(doc, name, kwargs)
    return call


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


# --- the reproducer ---

def serve(cassette, matching, log):
    tooluse = os.environ.get("TOOLUSE") or shutil.which("tooluse")
    if not tooluse:
        print("cannot run: tooluse (the simulated API: pip install 'tooluse-conformance[serve]') "
              "is not on PATH; set TOOLUSE")
        sys.exit(2)
    proc = subprocess.Popen([tooluse, "serve", cassette, "--port", "0", "--matching", matching,
                             "--quiet", "--log", log, *SERVE], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    base = proc.stdout.readline().decode().strip()
    if not base.startswith("http"):
        proc.kill()
        print("cannot run: tooluse serve did not start")
        sys.exit(2)
    return proc, base


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "params.json")) as f:
        doc = json.load(f)
    with open(os.path.join(here, "cassette.json")) as f:
        recorded = json.load(f)["exchanges"]
    exchanges = len(recorded)
    # the exchanges the loop must reach: after the setup conversation, not the recorded refusals
    required = [i for i in range(SETUP, exchanges) if not recorded[i].get("expect_rule")]
    expected = sum(1 for ex in recorded[SETUP:] if ex.get("expect_rule"))
    for name, value in ENV:
        os.environ.setdefault(name, value)
    box = tempfile.mkdtemp(prefix="repro-")
    log = os.path.join(box, "served.jsonl")
    proc, base = serve(os.path.join(here, "cassette.json"), MATCHING, log)
    os.environ["ANTHROPIC_BASE_URL"] = base
    os.environ["ANTHROPIC_API_KEY"] = "sk-tooluse-simulator"
    raised = None
    try:
        for params in doc["conversations"]:
            conversation(doc, params)
    except Exception as exc:  # what the framework raised to its application
        raised = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        proc.terminate()
        proc.wait(10)
    with open(log) as f:
        served = [json.loads(line) for line in f if line.strip()]
    shutil.rmtree(box, ignore_errors=True)
    # a planned fault (429, 529) is not a refusal; the recording's own refusals (an expired
    # container) are expected, once each
    refused = [s for s in served if int(s.get("status") or 0) >= 400
               and s.get("outcome") != "fault"][expected:]
    faults = [s for s in served if s.get("outcome") == "fault"]
    answered = {s.get("exchange") for s in served
                if int(s.get("status") or 0) < 400 and s.get("exchange") is not None}
    missing = [i for i in required if i not in answered]
    for s in served:
        print(f"request: {s.get('status')} {str(s.get('outcome'))[:100]} {str(s.get('detail') or '')[:160]}")
    happened = [f"the API answered {len(faults)} request(s) with a planned "
                f"{'/'.join(str(s.get('status')) for s in faults)} (transient)"] if faults else []
    if refused:
        first = refused[0]
        happened.append(f"the API refused a request: {first.get('status')} "
                        f"{str(first.get('outcome'))[:200]} {str(first.get('detail') or '')[:300]}")
    if missing:
        happened.append(f"exchanges {missing} of the {exchanges} recorded were never requested"
                        + (f" (the first {SETUP} played as the earlier conversation)" if SETUP else ""))
    if raised:
        happened.append(f"the framework raised {raised}")
    defect = bool(refused or missing)
    print()
    print(f"the docs ({URL}): {DOCS}")
    print(f"the rule: {RULE}")
    print(f"happened: {'; '.join(happened) or 'every recorded exchange was requested and served'}")
    print("defect present: exit 1" if defect else "not reproduced (fixed?): exit 0")
    return 1 if defect else 0


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit:
        raise
    except Exception as exc:
        import traceback
        traceback.print_exc()
        print(f"cannot run: {type(exc).__name__}: {exc}")
        code = 2
    sys.stdout.flush()
    os._exit(code)
