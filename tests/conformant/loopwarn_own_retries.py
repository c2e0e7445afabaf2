"""Unusual but conformant loop: retries 429/529 itself, waiting exactly what `retry-after` says
(not the SDK's retries); sends the container as an object (`{"id": ...}`, the request param's
other form); resends tool_use blocks without a `direct` caller (optional, and what most live
clients do) while keeping a code execution caller. No warning fails."""

from __future__ import annotations

import time
from typing import Any

from conformance.reference.loop import ReferenceLoop


class _WaitsRetryAfter:
    def __init__(self, messages: Any) -> None:
        self._messages = messages

    def create(self, **request: Any) -> Any:
        import anthropic

        for _ in range(3):
            try:
                return self._messages.create(**request)
            except anthropic.APIStatusError as e:
                wait = e.response.headers.get("retry-after")
                if e.status_code not in (429, 529) or wait is None:
                    raise
                time.sleep(float(wait))
        return self._messages.create(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._messages, name)


class _Client:
    def __init__(self, client: Any) -> None:
        self.messages = _WaitsRetryAfter(client.with_options(max_retries=0).messages)


class OwnRetries(ReferenceLoop):
    def remember_container(self, container_id: str) -> None:
        self.container = {"id": container_id}

    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        super().add_assistant([{k: v for k, v in b.items()
                                if not (k == "caller" and v == {"type": "direct"})}
                               for b in content])


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return OwnRetries(_Client(client), params, run_tool).run()
