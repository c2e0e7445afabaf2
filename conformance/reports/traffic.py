"""What a set of recorded conversations contains: block types and their fields, stop reasons,
error codes, tools called, turns per conversation.

Cassettes are read only through :func:`simulator.cassette.iter_corpus`. Streamed responses are
assembled from their SSE events (``message_start``, ``content_block_start``, deltas,
``message_delta``) into the message a client would see.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.cassette import Cassette, Exchange, iter_corpus


@dataclass
class TrafficStats:
    cassettes: int = 0
    exchanges: int = 0
    #: Content block types in responses (incl. typed objects nested in a result's ``content``).
    block_types: Counter[str] = field(default_factory=Counter)
    #: Block type -> field names seen on it.
    block_fields: dict[str, set[str]] = field(default_factory=dict)
    #: Block types clients sent back in request messages.
    request_block_types: Counter[str] = field(default_factory=Counter)
    stop_reasons: Counter[str] = field(default_factory=Counter)
    #: ``error_code`` values inside tool results.
    error_codes: Counter[str] = field(default_factory=Counter)
    #: ``error.type`` of error responses (HTTP errors and mid-stream ``error`` events).
    api_errors: Counter[str] = field(default_factory=Counter)
    http_statuses: Counter[str] = field(default_factory=Counter)
    #: ``name`` of ``tool_use`` / ``server_tool_use`` blocks the model emitted.
    tools_called: Counter[str] = field(default_factory=Counter)
    #: ``type`` of tool definitions in requests (``custom`` for user-defined tools).
    tool_types: Counter[str] = field(default_factory=Counter)
    #: Requests per conversation (cassette id -> count).
    turns: dict[str, int] = field(default_factory=dict)
    #: Rule ids the cassettes expect the simulator to enforce (``expect_rule``).
    expected_rules: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        turns = sorted(self.turns.values())
        return {
            "cassettes": self.cassettes, "exchanges": self.exchanges,
            "block_types": dict(sorted(self.block_types.items())),
            "block_fields": {k: sorted(v) for k, v in sorted(self.block_fields.items())},
            "request_block_types": dict(sorted(self.request_block_types.items())),
            "stop_reasons": dict(sorted(self.stop_reasons.items())),
            "error_codes": dict(sorted(self.error_codes.items())),
            "api_errors": dict(sorted(self.api_errors.items())),
            "http_statuses": dict(sorted(self.http_statuses.items())),
            "tools_called": dict(sorted(self.tools_called.items())),
            "tool_types": dict(sorted(self.tool_types.items())),
            "models": dict(sorted(self.models.items())),
            "expected_rules": dict(sorted(self.expected_rules.items())),
            "turns": {
                "conversations": len(turns),
                "min": turns[0] if turns else 0,
                "max": turns[-1] if turns else 0,
                "mean": round(sum(turns) / len(turns), 2) if turns else 0,
                "histogram": {str(k): v for k, v in sorted(Counter(turns).items())},
            },
        }


def assemble_stream(events: Iterable[Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Rebuild the message from recorded SSE events; also return mid-stream ``error`` payloads."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    errors: list[dict[str, Any]] = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        data = ev.get("data")
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or ev.get("event")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"])
            message["content"] = []
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            blocks[int(data.get("index", len(blocks)))] = dict(data["content_block"])
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            idx = int(data.get("index", 0))
            block = blocks.setdefault(idx, {})
            delta = data["delta"]
            if delta.get("type") == "input_json_delta":
                partial[idx] = partial.get(idx, "") + str(delta.get("partial_json", ""))
            else:
                for key in ("text", "thinking", "signature"):
                    if key in delta:
                        block[key] = str(block.get(key, "")) + str(delta[key])
        elif kind == "message_delta":
            message = message if message is not None else {"content": []}
            delta = data.get("delta") or {}
            for key in ("stop_reason", "stop_sequence", "container"):
                if key in delta:
                    message[key] = delta[key]
        elif kind == "error":
            err = data.get("error")
            errors.append(err if isinstance(err, dict) else data)
    for idx, text in partial.items():
        try:
            blocks[idx]["input"] = json.loads(text) if text else {}
        except json.JSONDecodeError:
            blocks[idx]["input"] = text
    if message is not None:
        message["content"] = [blocks[i] for i in sorted(blocks)]
    return message, errors


def response_message(exchange: Exchange) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The response as a message dict (None for an error body), plus any error objects."""
    resp = exchange.response
    if exchange.is_stream:
        return assemble_stream(resp.get("events") or [])
    body = resp.get("body")
    if isinstance(body, dict) and body.get("type") == "error":
        err = body.get("error")
        return None, [err if isinstance(err, dict) else {"type": "unknown"}]
    return (body if isinstance(body, dict) else None), []


def _record_block(stats: TrafficStats, block: dict[str, Any]) -> None:
    btype = block.get("type")
    if not isinstance(btype, str):
        return
    stats.block_types[btype] += 1
    stats.block_fields.setdefault(btype, set()).update(str(k) for k in block)
    if "error_code" in block and isinstance(block["error_code"], str):
        stats.error_codes[block["error_code"]] += 1
    if btype in ("tool_use", "server_tool_use") and isinstance(block.get("name"), str):
        stats.tools_called[block["name"]] += 1
    content = block.get("content")
    nested = content if isinstance(content, list) else [content]
    for item in nested:
        if isinstance(item, dict) and "type" in item and btype.endswith("_result"):
            _record_block(stats, item)


def add_cassette(stats: TrafficStats, cassette: Cassette) -> None:
    stats.cassettes += 1
    stats.turns[cassette.id] = len(cassette.exchanges)
    if cassette.model:
        stats.models[cassette.model] += 1
    for ex in cassette.exchanges:
        stats.exchanges += 1
        stats.http_statuses[str(ex.response.get("status"))] += 1
        if ex.expect_rule:
            stats.expected_rules[ex.expect_rule] += 1
        body = ex.request_body
        if isinstance(body, dict):
            for tool in body.get("tools") or []:
                if isinstance(tool, dict):
                    stats.tool_types[str(tool.get("type") or "custom")] += 1
            for msg in body.get("messages") or []:
                content = msg.get("content") if isinstance(msg, dict) else None
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and isinstance(block.get("type"), str):
                        stats.request_block_types[block["type"]] += 1
        message, errors = response_message(ex)
        for err in errors:
            stats.api_errors[str(err.get("type", "unknown"))] += 1
        if message is None:
            continue
        if message.get("stop_reason"):
            stats.stop_reasons[str(message["stop_reason"])] += 1
        for block in message.get("content") or []:
            if isinstance(block, dict):
                _record_block(stats, block)


def collect(cassettes: Iterable[Cassette]) -> TrafficStats:
    stats = TrafficStats()
    for c in cassettes:
        add_cassette(stats, c)
    return stats


def collect_corpus(root: str | Path | None = None) -> TrafficStats:
    """Statistics of every cassette under ``root`` (a directory or one cassette file)."""
    return collect(iter_corpus(root))
