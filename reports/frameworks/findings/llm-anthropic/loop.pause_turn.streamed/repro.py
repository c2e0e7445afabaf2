#!/usr/bin/env python3
"""llm-anthropic 0.30: the loop stopped before the conversation ended (exchanges [1] of the recording were never requested)

llm-anthropic (llm-anthropic 0.30), check loop.pause_turn.streamed (MUST).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): You can pass the response back as-is in the next request to let Claude continue its turn, or modify its content if you want to interrupt the conversation.
Needs: pip install llm-anthropic==0.30 and this suite's `tooluse serve` (the simulated API: $TOOLUSE or PATH) (this file installs nothing).
Run: python repro.py  (exit 1 while the defect is there, 0 once fixed, 2 when it cannot run)
The recording: cassette.json (code_execution/code_execution_20260521/pause_turn_streamed.json); the loop's start: params.json.
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

# --- the framework's loop, as the column wires it (conformance/adapters/llm_anthropic.py) ---
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
