"""Broken loop (warning): retries a 429 or 529 at once, whatever its `retry-after` says. The
conversation completes (loop.errors.transient_retried passes); only the SHOULD warning
reports the early retry."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

WARNS = "loop.errors.retry_after_respected"


class _AtOnce:
    """``client.messages`` whose ``create`` sends a refused request again immediately."""

    def __init__(self, messages: Any) -> None:
        self._messages = messages

    def create(self, **request: Any) -> Any:
        import anthropic

        for _ in range(3):
            try:
                return self._messages.create(**request)
            except (anthropic.RateLimitError, anthropic.InternalServerError):
                continue
        return self._messages.create(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._messages, name)


class _Client:
    def __init__(self, client: Any) -> None:
        self.messages = _AtOnce(client.with_options(max_retries=0).messages)


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return ReferenceLoop(_Client(client), params, run_tool).run()
