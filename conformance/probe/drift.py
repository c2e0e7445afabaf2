"""API drift: what a live response holds that the project's schemas and registry do not know.

Every response a probe receives is validated strictly (:func:`simulator.validation.validate`,
``strict=True``: unknown fields are errors) as a message, an error body, or each SSE event (with
the stream's event order, :func:`~simulator.validation._stream.stream_order`). Each violation is a
:class:`Finding` with its JSON pointer into the recorded exchange and a kind:

- ``new_field``: a field the schema does not list (one finding per field, its pointer included);
- ``new_block_type``, ``new_stop_reason``, ``new_error_code``: a value outside the schema's enum
  at a block's ``type``, a ``stop_reason``, an error ``type`` or a tool result ``error_code``;
- ``new_tool_version``: a dated tool type (``name_YYYYMMDD``) the registry does not hold;
- ``new_value``, ``schema``: any other enum value or broken schema rule;
- ``rule``: a request the API accepted that the simulator's protocol rules refuse, when the
  recording is replayed through them in order (:func:`judge_requests`): the rules are stricter than
  the API, or the live responses led the conversation somewhere the rules do not allow.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from conformance.reports.diff_traffic import _rule_checker, replay_refusals
from simulator.registry import TOOLS
from simulator.validation import Violation, detect_kind, validate

_EXTRA = re.compile(r"Additional properties are not allowed \((?P<names>.*) (?:was|were) unexpected\)")
_NAME = re.compile(r"'([^']*)'")
_TOOL_VERSION = re.compile(r"^[a-z][a-z0-9_]*_20\d{6}$")


@dataclass(frozen=True)
class Finding:
    scenario: str
    kind: str
    #: JSON pointer into the scenario's cassette (``/exchanges/N/response/...``).
    pointer: str
    detail: str
    rule: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def _kind_of_enum(pointer: str) -> str:
    if pointer.endswith("/stop_reason"):
        return "new_stop_reason"
    if pointer.endswith("/error/type") or pointer.endswith("/error_code"):
        return "new_error_code"
    if pointer.endswith("/type"):
        return "new_block_type"
    return "new_value"


def _value_at(obj: Any, pointer: str) -> Any:
    for token in [t for t in pointer.split("/") if t]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(obj, list) and token.isdigit() and int(token) < len(obj):
            obj = obj[int(token)]
        elif isinstance(obj, dict) and token in obj:
            obj = obj[token]
        else:
            return None
    return obj


def _findings(scenario: str, base: str, obj: Any, violations: list[Violation]) -> list[Finding]:
    out: list[Finding] = []
    for v in violations:
        if v.severity != "error":
            continue
        m = _EXTRA.match(v.message)
        if m:
            for name in _NAME.findall(m["names"]):
                out.append(Finding(scenario, "new_field", f"{base}{v.pointer}/{name}",
                                   f"{name}: not in the schema", v.rule))
        elif v.rule.endswith(":enum"):
            value = _value_at(obj, v.pointer)
            out.append(Finding(scenario, _kind_of_enum(v.pointer), base + v.pointer,
                               f"{value}: not a known value", v.rule))
        else:
            out.append(Finding(scenario, "schema", base + v.pointer, v.message, v.rule))
    return out


def _tool_versions(scenario: str, base: str, obj: Any, ptr: str = "") -> list[Finding]:
    out: list[Finding] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _tool_versions(scenario, base, v, f"{ptr}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _tool_versions(scenario, base, v, f"{ptr}/{i}")
    elif isinstance(obj, str) and ptr.endswith("/type") and _TOOL_VERSION.match(obj) \
            and obj not in TOOLS:
        out.append(Finding(scenario, "new_tool_version", base + ptr,
                           f"{obj}: not in the tool registry"))
    return out


def judge_response(scenario: str, index: int, response: dict[str, Any]) -> list[Finding]:
    """Drift findings of one recorded response (``{"status", "headers", "body"|"events"}``)."""
    base = f"/exchanges/{index}/response"
    out: list[Finding] = []
    if "events" in response:
        from simulator.validation._stream import stream_order

        events = response.get("events") or []
        for i, event in enumerate(events):
            data = event.get("data") if isinstance(event, dict) else None
            if not isinstance(data, dict):
                continue
            out += _findings(scenario, f"{base}/events/{i}/data", data,
                             validate(data, detect_kind(data), strict=True))
            out += _tool_versions(scenario, f"{base}/events/{i}/data", data)
        out += _findings(scenario, f"{base}/events", events, stream_order(events))
        return _unique(out)
    body = response.get("body")
    if isinstance(body, dict):
        kind = "error" if body.get("type") == "error" else detect_kind(body)
        out += _findings(scenario, f"{base}/body", body, validate(body, kind, strict=True))
        out += _tool_versions(scenario, f"{base}/body", body)
    return _unique(out)


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


def judge_requests(scenario: str, cassette: dict[str, Any]) -> list[Finding]:
    """``rule`` findings: the recorded requests, in order, through the simulator's rules (with the
    state a replay builds), for those the API answered without a 4xx."""
    from simulator.cassette import parse_cassette

    refusals = replay_refusals(parse_cassette(cassette), *_rule_checker())
    return _unique([Finding(scenario, "rule", f"/exchanges/{r.exchange}/request/body",
                            f"{r.rule_id}: {r.message}", r.rule_id)
                    for r in refusals if not r.recorded_refused])
