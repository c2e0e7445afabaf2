"""A complete ``--loop-cmd`` agent loop in Python, on the ``anthropic`` SDK (docs/loops.md).

    tooluse run --loop-cmd "python docs/examples/loop_cmd.py" --check 'loop.*'

It reads the conversations to drive from the file ``$TOOLUSE_LOOP_PARAMS`` names, talks to the
simulation at ``$ANTHROPIC_BASE_URL`` (the SDK reads it, and ``$ANTHROPIC_API_KEY``), drives
each conversation to its end, and exits 0. tests/test_loop_docs.py runs it through a check of
each step of the contract (it passes every loop check).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anthropic


def send(client: anthropic.Anthropic, request: dict[str, Any], stream: bool) -> Any:
    """One request; a streamed one is assembled into the final message by the SDK."""
    if stream:
        with client.messages.stream(**request) as events:
            return events.get_final_message()
    return client.messages.create(**request)


def expired_container(error: anthropic.BadRequestError) -> bool:
    text = str(error).lower()
    return "container" in text and ("expired" in text or "not found" in text)


def drive(client: anthropic.Anthropic, params: dict[str, Any],
          results: dict[str, Any]) -> None:
    """One conversation, from its first request's parameters to a response that ends it."""
    base = {k: v for k, v in params.items() if k not in ("messages", "stream", "container")}
    messages: list[dict[str, Any]] = list(params["messages"])
    stream = bool(params.get("stream"))
    container = params.get("container")
    while True:
        request = {**base, "messages": messages}
        if container is not None:
            request["container"] = container  # every request after a response named one
        try:
            message = send(client, request, stream)
        except anthropic.BadRequestError as e:
            if container is not None and expired_container(e):
                container = None  # documented: send it again without `container`
                continue
            raise
        if message.container is not None:
            container = message.container.id
        # The assistant turn goes back as it was served: every block, in order, inputs unchanged.
        content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
        if message.stop_reason not in ("pause_turn", "tool_use"):
            return  # end_turn, max_tokens, stop_sequence, refusal: the conversation is over
        if messages[-1]["role"] == "assistant":  # continuing a paused turn: extend it
            previous = messages[-1]["content"]
            if isinstance(previous, str):
                previous = [{"type": "text", "text": previous}]
            messages[-1] = {"role": "assistant", "content": [*previous, *content]}
        else:
            messages.append({"role": "assistant", "content": content})
        if message.stop_reason == "pause_turn":
            continue  # the server paused its own tool loop: resend, and it goes on
        # Every client tool_use of the turn (programmatic calls included) answered in ONE user
        # message of tool_result blocks only; server tools (server_tool_use) are never answered.
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"],
             "content": results.get(b["id"], "ok")}
            for b in content if b["type"] == "tool_use"]})


def main() -> int:
    if os.environ.get("TOOLUSE_LOOP_DESCRIBE") == "1":
        # What this loop cannot express (check id -> why), the variants it can, its matching.
        print(json.dumps({"unsupported": {}}))
        return 0
    with open(os.environ["TOOLUSE_LOOP_PARAMS"], encoding="utf-8") as f:
        doc = json.load(f)
    # The SDK retries 429, 529 and 5xx answers itself, waiting what `retry-after` says.
    client = anthropic.Anthropic(max_retries=4)
    for params in doc["conversations"]:
        drive(client, params, doc["tool_results"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
