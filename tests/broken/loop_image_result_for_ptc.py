"""Broken loop: answers a programmatic call with an image block (code takes text only)."""

from __future__ import annotations

from typing import Any

from conformance.reference.loop import ReferenceLoop

BREAKS = ("loop.ptc.parallel_calls", "ptc.tool_result.text_content_only")
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAAB"
         "JRU5ErkJggg==")


class ImageResult(ReferenceLoop):
    def answer(self, use: dict[str, Any]) -> dict[str, Any]:
        result = super().answer(use)
        result["content"] = [{"type": "image", "source": {"type": "base64",
                                                          "media_type": "image/png", "data": PIXEL}}]
        return result


def loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    return ImageResult(client, params, run_tool).run()
