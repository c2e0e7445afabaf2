#!/usr/bin/env python3
"""litellm 1.110.2: loop.mixed.client_and_server_tools: request 1 continues the conversation with no container; the previous …

litellm (litellm 1.110.2), check loop.container.kept_on_continuation (SHOULD).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): You can reuse an existing container across several API requests by giving the container ID from the previous response. This lets you keep the files created between requests.
Needs: pip install litellm==1.110.2 and this suite's `tooluse serve` (the simulated API: $TOOLUSE or PATH) (this file installs nothing).
Run: python repro.py  (exit 1 while the defect is there, 0 once fixed, 2 when it cannot run)
The recording: cassette.json (mixed/code_execution_20250825/deferred_server_result.json); the loop's start: params.json.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

DOCS = 'You can reuse an existing container across several API requests by giving the container ID from the previous response. This lets you keep the files created between requests.'
RULE = 'a request continuing a conversation sends the container id the previous response named'
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


def recording_proxy(upstream, bodies):
    import http.server
    import threading
    import urllib.error
    import urllib.request

    class Pass(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            data = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                bodies.append(json.loads(data))
            except ValueError:
                bodies.append(None)
            skip = ("host", "content-length", "connection", "accept-encoding")
            request = urllib.request.Request(upstream + self.path, data=data, method="POST",
                                             headers={k: v for k, v in self.headers.items()
                                                      if k.lower() not in skip})
            try:
                with urllib.request.urlopen(request) as r:
                    status, headers, payload = r.status, r.headers, r.read()
            except urllib.error.HTTPError as e:
                status, headers, payload = e.code, e.headers, e.read()
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                     "date", "server"):
                    self.send_header(k, v)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pass)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def recorded_container(response):
    found = None
    body = response.get("body")
    if isinstance(body, dict):
        found = body.get("container")
    for event in response.get("events") or []:
        data = event.get("data") if isinstance(event, dict) else None
        if not isinstance(data, dict):
            continue
        if data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            found = data["message"].get("container") or found
        elif data.get("type") == "message_delta" and isinstance(data.get("delta"), dict):
            found = data["delta"].get("container") or found
    if isinstance(found, dict) and isinstance(found.get("id"), str):
        return found["id"]
    return found if isinstance(found, str) else None


def container_of(body):
    c = body.get("container") if isinstance(body, dict) else None
    if isinstance(c, dict):
        c = c.get("id")
    return c if isinstance(c, str) else None


def continues(body, previous):
    now = body.get("messages") if isinstance(body, dict) else None
    before = previous.get("messages") if isinstance(previous, dict) else None
    return (isinstance(now, list) and isinstance(before, list) and bool(before)
            and len(now) > len(before) and now[0] == before[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "params.json")) as f:
        doc = json.load(f)
    with open(os.path.join(here, "cassette.json")) as f:
        recorded = json.load(f)["exchanges"]
    for name, value in ENV:
        os.environ.setdefault(name, value)
    box = tempfile.mkdtemp(prefix="repro-")
    log = os.path.join(box, "served.jsonl")
    proc, base = serve(os.path.join(here, "cassette.json"), MATCHING, log)
    bodies = []
    proxy, front = recording_proxy(base, bodies)
    os.environ["ANTHROPIC_BASE_URL"] = front
    os.environ["ANTHROPIC_API_KEY"] = "sk-tooluse-simulator"
    raised = None
    try:
        for params in doc["conversations"]:
            conversation(doc, params)
    except Exception as exc:  # what the framework raised to its application
        raised = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        proxy.shutdown()
        proc.terminate()
        proc.wait(10)
    with open(log) as f:
        served = [json.loads(line) for line in f if line.strip()]
    shutil.rmtree(box, ignore_errors=True)
    # the loop sends one request at a time: the i-th request it sent is the i-th the server logged
    checked, drops, previous = 0, [], None
    for i, (body, s) in enumerate(zip(bodies, served)):
        print(f"request {i}: container {container_of(body)!r}; {s.get('status')} "
              f"{str(s.get('outcome'))[:40]} {str(s.get('detail') or '')[:120]}")
        if previous is not None and continues(body, previous[0]):
            checked += 1
            sent = container_of(body)
            if sent != previous[1] and not str(s.get("detail") or "").startswith(
                    "ptc.container.required"):
                what = f"container {sent!r}" if sent else "no container"
                drops.append(f"request {i} continues the conversation with {what}; the "
                             f"previous response named container {previous[1]!r}")
        exchange = s.get("exchange")
        if exchange is not None and 200 <= int(s.get("status") or 0) < 300:
            container = recorded_container(recorded[exchange]["response"])
            previous = (body, container) if container else None
    print()
    print(f"the docs ({URL}): {DOCS}")
    print(f"the rule: {RULE}")
    if not checked:
        print("happened: the loop sent no continuation after a response naming a container"
              + (f"; the framework raised {raised}" if raised else ""))
        print("not judged: exit 2")
        return 2
    print(f"happened: {drops[0] if drops else 'every continuation sent the container'}"
          + (f" (+{len(drops) - 1} more)" if len(drops) > 1 else ""))
    print("defect present: exit 1" if drops else "not reproduced (fixed?): exit 0")
    return 1 if drops else 0


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
