"""Property-based agreement with the ``anthropic`` SDK (2.10).

* Objects drawn from the schemas' own strategies (:mod:`simulator.strategies`, driven by the
  registry) parse with the SDK's types (``anthropic.types`` and ``anthropic.types.beta``) without
  losing a field: no field lands in ``model_extra`` and dumping gives the same JSON back.
* Objects the SDK's models build (drawn from their field types, ``tests/strategies``) validate in
  lenient mode, and in strict mode except where a deliberate disagreement below applies.

Deliberate disagreements (``DISAGREEMENTS``; each is demonstrated by ``test_disagreement``):

=====================  ==========================================================================
id                     what differs, and the source the schemas follow
=====================  ==========================================================================
code_execution_usage   the schemas accept ``usage.server_tool_use = {"code_execution_requests": n}``
                       (seed 000 § Penggunaan dan harga); the SDK's ServerToolUsage requires
                       ``web_search_requests`` and ``web_fetch_requests`` and rejects it
registry_scope         strict mode refuses block types, server tool names and tool types outside
                       the registry (tool search, advisor, memory, MCP connector blocks,
                       compaction; tool_result content search_result/tool_reference); the SDK
                       models them. Lenient mode notes them (INFO)
stop_fields_present    strict mode requires the ``stop_reason`` and ``stop_sequence`` keys (null
                       allowed) on a Message and a message_delta, as the API sends them
                       (PROTOCOL.md § 6); the SDK defaults them to None
tool_input_by_name     the input of a tool_use/server_tool_use named after a registry tool
                       (``bash``, ``str_replace_based_edit_tool``, ``bash_code_execution``...) is
                       checked against the registry's commands (seed 001 § Perintah tool editor
                       teks, seed 000 § Format respons); the SDK types every input as a dict
legacy_error_codes     lenient mode accepts ``container_expired``/``string_not_found`` as INFO
                       notes (PROTOCOL.md § Known discrepancies); the SDK's Literal rejects them
compaction_stop        ``stop_reason: "compaction"`` is accepted on every Message (PROTOCOL.md § 6,
                       beta); the non-beta ``anthropic.types.Message`` rejects it
=====================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import anthropic.types as T
import anthropic.types.beta as B
import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, TypeAdapter, ValidationError
from strategies.sdk_models import dumped

from simulator import strategies as S
from simulator.validation import Violation, errors, validate

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@dataclass(frozen=True)
class Disagreement:
    id: str
    source: str
    #: Does this strict-mode (or lenient-mode) violation come from the disagreement?
    explains: Callable[[Violation], bool]
    in_lenient: bool = False


def _enum_scope(v: Violation) -> bool:
    return v.rule in ("blocks/response_block:enum", "blocks/block:enum",
                      "blocks/server_tool_use:enum", "tools/tool_definition:enum",
                      "blocks/tool_result:enum")


DISAGREEMENTS = (
    Disagreement("code_execution_usage", "000_1c6513e12fd2ccd0.txt § Penggunaan dan harga",
                 lambda v: False),
    Disagreement("registry_scope", "DESIGN.md § simulator/ Tool registry", _enum_scope),
    Disagreement("stop_fields_present", "PROTOCOL.md § 6. Streaming (SSE)",
                 lambda v: v.rule.endswith(":required") and "'stop_" in v.message),
    Disagreement("tool_input_by_name", "001_30efa6f7a5b3609f.txt § Perintah tool editor teks",
                 lambda v: v.rule.startswith("tools/") or v.rule == "tools.commands",
                 in_lenient=True),
    Disagreement("legacy_error_codes", "PROTOCOL.md § Known discrepancies", lambda v: False),
    Disagreement("compaction_stop", "PROTOCOL.md § 6. Streaming (SSE): Stop reasons",
                 lambda v: False),
)


def _unexplained(vs: list[Violation], *, lenient: bool) -> list[str]:
    return [str(v) for v in errors(vs)
            if not any(d.explains(v) and (d.in_lenient or not lenient) for d in DISAGREEMENTS)]


def _extras(m: Any, path: str = "") -> list[str]:
    """Fields the SDK did not recognise (kept in ``model_extra``)."""
    out: list[str] = []
    if isinstance(m, BaseModel):
        out += [f"{path}/{k}" for k in (m.model_extra or {})]
        for name in type(m).model_fields:
            out += _extras(getattr(m, name), f"{path}/{name}")
    elif isinstance(m, list):
        for i, x in enumerate(m):
            out += _extras(x, f"{path}/{i}")
    return out


def _plain(x: Any) -> Any:
    """TypedDict validation returns iterators for Iterable fields: make them lists."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple) or type(x).__name__ == "ValidatorIterator":
        return [_plain(v) for v in x]
    return x


@cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


# --- schemas -> SDK ------------------------------------------------------------------------------

@pytest.mark.parametrize("model", [T.Message, B.BetaMessage], ids=lambda m: m.__name__)
@SETTINGS
@given(message=S.messages_responses(sdk_shape_only=True))
def test_generated_messages_parse_with_the_sdk_without_losing_fields(
        model: type[BaseModel], message: dict[str, Any]) -> None:
    assert validate(message, "response", strict=True) == []
    parsed = model.model_validate(message)
    assert _extras(parsed) == []
    assert parsed.model_dump(mode="json", exclude_unset=True) == message


@SETTINGS
@given(message=S.messages_responses(sdk_shape_only=True))
def test_generated_streams_parse_with_the_sdk(message: dict[str, Any]) -> None:
    events = S.sse_events_for(message)
    assert validate(events, "sse_events", strict=True) == []
    adapter = _adapter(T.RawMessageStreamEvent)
    for ev in events:
        parsed = adapter.validate_python(ev["data"])
        assert _extras(parsed) == []
        assert parsed.model_dump(mode="json", exclude_unset=True) == ev["data"]


@SETTINGS
@given(tool=S.tool_definitions())
def test_generated_tool_definitions_parse_with_the_sdk_params(tool: dict[str, Any]) -> None:
    assert validate(tool, "tool_definition", strict=True) == []
    back = _adapter(B.BetaToolUnionParam).validate_python(tool)
    assert _plain(back) == tool  # TypedDict validation drops unknown keys: nothing was dropped


@SETTINGS
@given(block=S.tool_result_blocks())
def test_generated_tool_results_parse_with_the_sdk_params(block: dict[str, Any]) -> None:
    assert validate(block, "block", strict=True) == []
    assert _plain(_adapter(T.ToolResultBlockParam).validate_python(block)) == block


# --- SDK -> schemas ------------------------------------------------------------------------------

SDK_MODELS: list[tuple[type[BaseModel], str]] = [
    (T.TextBlock, "block"), (T.ThinkingBlock, "block"), (T.ToolUseBlock, "block"),
    (T.ServerToolUseBlock, "block"), (T.CodeExecutionToolResultBlock, "block"),
    (T.BashCodeExecutionToolResultBlock, "block"),
    (T.TextEditorCodeExecutionToolResultBlock, "block"), (T.WebSearchToolResultBlock, "block"),
    (T.WebFetchToolResultBlock, "block"), (T.ContainerUploadBlock, "block"),
    (T.Message, "response"),
    (T.RawMessageStartEvent, "sse_event"), (T.RawContentBlockStartEvent, "sse_event"),
    (T.RawContentBlockDeltaEvent, "sse_event"), (T.RawMessageDeltaEvent, "sse_event"),
]


@pytest.mark.parametrize("model,kind", SDK_MODELS, ids=[m.__name__ for m, _ in SDK_MODELS])
def test_objects_the_sdk_builds_validate(model: type[BaseModel], kind: str) -> None:
    @SETTINGS
    @given(obj=dumped(model))
    def check(obj: dict[str, Any]) -> None:
        assert _unexplained(validate(obj, kind), lenient=True) == []
        assert _unexplained(validate(obj, kind, strict=True), lenient=False) == []

    check()


# --- each disagreement is real ----------------------------------------------------------------

_MSG: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
        "content": [], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}


def _sdk_rejects(model: type[BaseModel], obj: dict[str, Any]) -> bool:
    try:
        model.model_validate(obj)
    except ValidationError:
        return True
    return False


def test_disagreement_code_execution_usage() -> None:
    msg = {**_MSG, "usage": {**_MSG["usage"], "server_tool_use": {"code_execution_requests": 1}}}
    assert validate(msg, "response", strict=True) == []
    assert _sdk_rejects(T.Message, msg)


def test_disagreement_registry_scope() -> None:
    block = T.ServerToolUseBlock(id="srvtoolu_1", name="tool_search_tool_bm25", input={"q": "x"},
                                 type="server_tool_use").model_dump(mode="json", exclude_unset=True)
    strict = validate(block, "block", strict=True)
    assert strict and all(_enum_scope(v) for v in strict)
    assert [v.severity for v in validate(block, "block")] == ["info"]


def test_disagreement_stop_fields_present() -> None:
    msg = {k: v for k, v in _MSG.items() if k not in ("stop_reason", "stop_sequence")}
    T.Message.model_validate(msg)
    assert {v.message for v in validate(msg, "response", strict=True)} == {
        "'stop_reason' is a required property", "'stop_sequence' is a required property"}


def test_disagreement_tool_input_by_name() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}}
    T.ToolUseBlock.model_validate(block)
    assert errors(validate(block, "block"))


def test_disagreement_legacy_error_codes() -> None:
    block = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1", "content": {
        "type": "bash_code_execution_tool_result_error", "error_code": "container_expired"}}
    assert [v.severity for v in validate(block, "block")] == ["info"]
    assert _sdk_rejects(T.BashCodeExecutionToolResultBlock, block)


def test_disagreement_compaction_stop() -> None:
    msg = {**_MSG, "stop_reason": "compaction"}
    assert validate(msg, "response", strict=True) == []
    assert _sdk_rejects(T.Message, msg)
    B.BetaMessage.model_validate(msg)


def test_every_disagreement_has_a_demonstration() -> None:
    names = {n.removeprefix("test_disagreement_") for n in globals()
             if n.startswith("test_disagreement_")}
    assert names == {d.id for d in DISAGREEMENTS}
