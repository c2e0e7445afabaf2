"""Synthetic but protocol-faithful conversations used by the benchmarks.

A bash-tool conversation: each assistant turn asks for one command, the client answers with a
tool_result, and the last turn ends the conversation. Requests carry the full history, as an
agent loop sends them.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "claude-opus-5-5"
TOOLS = [{"type": "bash_20250124", "name": "bash"}]


def _usage(i: int) -> dict[str, int]:
    return {"input_tokens": 400 + 60 * i, "output_tokens": 40, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}


def build(turns: int, salt: str = "") -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``turns`` (request body, response body) pairs; the last response ends the turn. ``salt``
    goes into what the client writes (the prompt, every tool result): the same conversation
    with other client content, as a new run of a tool produces."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"List the Python files.{salt}"}]
    pairs = []
    for i in range(turns):
        request = {"model": MODEL, "max_tokens": 1024, "tools": TOOLS,
                   "messages": json.loads(json.dumps(messages))}
        last = i == turns - 1
        if last:
            content: list[dict[str, Any]] = [{"type": "text", "text": "Done: found the files."}]
        else:
            content = [
                {"type": "text", "text": f"Step {i}: running a command."},
                {"type": "tool_use", "id": f"toolu_01Bench{i:04d}", "name": "bash",
                 "input": {"command": f"ls -la /tmp/dir{i}"}},
            ]
        response = {"id": f"msg_01Bench{i:04d}", "type": "message", "role": "assistant",
                    "model": MODEL, "content": content,
                    "stop_reason": "end_turn" if last else "tool_use", "stop_sequence": None,
                    "usage": _usage(i)}
        pairs.append((request, response))
        messages.append({"role": "assistant", "content": content})
        if not last:
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_01Bench{i:04d}",
                 "content": f"a.py\nb{i}.py\n{salt}"}]})
    return pairs


def as_cassette(pairs: list[tuple[dict[str, Any], dict[str, Any]]], cid: str) -> dict[str, Any]:
    return {
        "version": 1, "id": f"bench/bash_20250124/{cid}", "title": f"benchmark {cid}",
        "source": {"document": "003_6e507974676b5473.txt", "section": "작동 방식 (How it works)",
                   "tag": "I"},
        "model": MODEL, "tools": TOOLS, "streamed": False,
        "tags": {"family": "bench", "tool_type": "bash_20250124"},
        "exchanges": [
            {"request": {"method": "POST", "path": "/v1/messages",
                         "headers": {"content-type": "application/json"}, "body": req},
             "response": {"status": 200, "headers": {"content-type": "application/json",
                                                     "request-id": f"req_bench{i}"},
                          "body": resp}}
            for i, (req, resp) in enumerate(pairs)
        ],
    }


def sse_bytes(message: dict[str, Any]) -> bytes:
    """A faithful SSE rendering of a message (the floor's canned stream)."""
    def ev(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = dict(message, content=[], stop_reason=None)
    out = [ev("message_start", {"type": "message_start", "message": start})]
    for idx, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                                                  "content_block": {"type": "text", "text": ""}}))
            out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                  "delta": {"type": "text_delta",
                                                            "text": block["text"]}}))
        else:
            out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                                                  "content_block": dict(block, input={})}))
            out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                  "delta": {"type": "input_json_delta",
                                                            "partial_json": json.dumps(block["input"])}}))
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": idx}))
    out.append(ev("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": message["stop_reason"],
                                              "stop_sequence": None},
                                    "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    out.append(ev("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()
