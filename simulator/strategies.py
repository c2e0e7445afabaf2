"""Hypothesis strategies for protocol objects, driven by :mod:`simulator.registry`.

Every object drawn here validates against the strict schemas (``simulator.validation``); tool
names, commands, error codes, stop reasons and callers come from the registry, so a new registry
entry shows up in generated data without touching this module.

>>> from simulator.strategies import response_blocks, messages_responses, tool_definitions
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

from . import registry
from .schemas._tools import CODE_EXECUTION_EDITOR_COMMANDS, client_tool_names

__all__ = [
    "callers", "containers", "custom_tool_definitions", "json_objects", "messages_responses",
    "response_blocks", "server_tool_usages", "sse_events_for", "stop_reasons", "tool_definitions",
    "tool_inputs", "tool_result_blocks", "usages",
]

Json = dict[str, Any]
_ID_CHARS = string.ascii_letters + string.digits
_NAME_CHARS = string.ascii_letters + string.digits + "_-"

text = st.text(max_size=40)
nonneg = st.integers(min_value=0, max_value=10_000)
paths = st.text(alphabet=string.ascii_lowercase + "/._", min_size=1, max_size=20)


def _id(prefix: str) -> st.SearchStrategy[str]:
    return st.text(alphabet=_ID_CHARS, min_size=8, max_size=24).map(lambda s: prefix + s)


json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | text
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3)
                           | st.dictionaries(st.text(_NAME_CHARS, min_size=1, max_size=8), kids,
                                             max_size=3), max_leaves=6)


def json_objects() -> st.SearchStrategy[Json]:
    return st.dictionaries(st.text(_NAME_CHARS, min_size=1, max_size=8), json_values, max_size=4)


def callers() -> st.SearchStrategy[Json]:
    def build(t: str, tool_id: str) -> Json:
        return {"type": t} if t == "direct" else {"type": t, "tool_id": tool_id}
    return st.builds(build, st.sampled_from(registry.CALLER_TYPES), _id("srvtoolu_"))


def _with_optional(base: Json, **optional: st.SearchStrategy[Any]) -> st.SearchStrategy[Json]:
    """``base`` plus any subset of the optional fields."""
    def merge(chosen: dict[str, Any]) -> Json:
        return {**base, **chosen}
    return st.fixed_dictionaries({}, optional=optional).map(merge)


@st.composite
def tool_inputs(draw: st.DrawFn, tool_type: str) -> Json:
    """A valid ``input`` for a client tool version (text editor or bash)."""
    tool = registry.TOOLS[tool_type]
    if tool.family == "bash":
        return draw(st.one_of(st.builds(lambda c: {"command": c}, text), st.just({"restart": True})))
    cmd = draw(st.sampled_from(tool.commands))
    values = {"path": paths, "old_str": text, "new_str": text, "file_text": text,
              "insert_text": text, "insert_line": nonneg,
              "view_range": st.tuples(st.integers(1, 50), st.integers(-1, 99)).map(list)}
    out: Json = {"command": cmd.name}
    for f in cmd.required:
        out[f] = draw(values[f])
    if cmd.name == "insert" and tool.insert_text_fields:
        out[draw(st.sampled_from(tool.insert_text_fields))] = draw(text)
    for f in cmd.optional:
        if f in values and f not in out and cmd.name != "insert" and draw(st.booleans()):
            out[f] = draw(values[f])
    return out


@st.composite
def _tool_use(draw: st.DrawFn) -> Json:
    fixed = client_tool_names()
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(fixed)))
        tool_input = draw(tool_inputs(fixed[name][0].type))
    else:
        name = draw(st.text(_NAME_CHARS, min_size=1, max_size=20).filter(lambda n: n not in fixed))
        tool_input = draw(json_objects())
    base = {"type": "tool_use", "id": draw(_id("toolu_")), "name": name, "input": tool_input}
    return draw(_with_optional(base, caller=callers()))


@st.composite
def _server_tool_use(draw: st.DrawFn) -> Json:
    name = draw(st.sampled_from(["code_execution", "bash_code_execution",
                                 "text_editor_code_execution"]))
    if name == "code_execution":
        tool_input: Json = {"code": draw(text)}
    elif name == "bash_code_execution":
        tool_input = {"command": draw(text)}
    else:
        tool_input = {"command": draw(st.sampled_from(CODE_EXECUTION_EDITOR_COMMANDS)),
                      "path": draw(paths)}
    base = {"type": "server_tool_use", "id": draw(_id("srvtoolu_")), "name": name,
            "input": tool_input}
    return draw(_with_optional(base, caller=callers()))


def _outputs(t: str) -> st.SearchStrategy[list[Json]]:
    return st.lists(st.builds(lambda f: {"type": t, "file_id": f}, _id("file_")), max_size=2)


def _run(t: str, output: str, stdout: str = "stdout") -> st.SearchStrategy[Json]:
    return st.builds(lambda o, e, rc, c: {"type": t, stdout: o, "stderr": e, "return_code": rc,
                                          "content": c},
                     text, text, st.integers(-1, 255), _outputs(output))


def _err(t: str, codes: tuple[str, ...]) -> st.SearchStrategy[Json]:
    return st.builds(lambda c: {"type": t, "error_code": c}, st.sampled_from(codes))


def _result(t: str, content: st.SearchStrategy[Any]) -> st.SearchStrategy[Json]:
    return st.builds(lambda i, c: {"type": t, "tool_use_id": i, "content": c},
                     _id("srvtoolu_"), content)


def _editor_content() -> st.SearchStrategy[Json]:
    p = "text_editor_code_execution_"
    view = _with_optional({"type": f"{p}view_result", "file_type": "text", "content": ""},
                          num_lines=nonneg, start_line=nonneg, total_lines=nonneg)
    create = st.builds(lambda b: {"type": f"{p}create_result", "is_file_update": b}, st.booleans())
    replace = _with_optional({"type": f"{p}str_replace_result"}, old_start=nonneg,
                             old_lines=nonneg, new_start=nonneg, new_lines=nonneg,
                             lines=st.lists(text, max_size=3))
    return st.one_of(view, create, replace, _err(f"{p}tool_result_error",
                                                 registry.TEXT_EDITOR_ERROR_CODES))


def response_blocks() -> st.SearchStrategy[Json]:
    """Any content block a response can carry (types and codes from the registry)."""
    web_result = st.builds(lambda u, t, e: {"type": "web_search_result", "url": u, "title": t,
                                            "encrypted_content": e}, text, text, text)
    document = st.builds(lambda d: {"type": "document", "source": {
        "type": "text", "media_type": "text/plain", "data": d}}, text)
    fetch = st.builds(lambda u, d: {"type": "web_fetch_result", "url": u, "content": d},
                      text, document)
    return st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, text, text),
        st.builds(lambda d: {"type": "redacted_thinking", "data": d}, text),
        _tool_use(), _server_tool_use(),
        _result("code_execution_tool_result", st.one_of(
            _run("code_execution_result", "code_execution_output"),
            _run("encrypted_code_execution_result", "code_execution_output", "encrypted_stdout"),
            _err("code_execution_tool_result_error", registry.CODE_EXECUTION_ERROR_CODES))),
        _result("bash_code_execution_tool_result", st.one_of(
            _run("bash_code_execution_result", "bash_code_execution_output"),
            _err("bash_code_execution_tool_result_error", registry.BASH_ERROR_CODES))),
        _result("text_editor_code_execution_tool_result", _editor_content()),
        _result("web_search_tool_result", st.lists(web_result, max_size=2)
                | _err("web_search_tool_result_error", registry.WEB_SEARCH_ERROR_CODES)),
        _result("web_fetch_tool_result", fetch
                | _err("web_fetch_tool_result_error", registry.WEB_FETCH_ERROR_CODES)),
        st.builds(lambda f: {"type": "container_upload", "file_id": f}, _id("file_")),
    )


def tool_result_blocks() -> st.SearchStrategy[Json]:
    content = st.one_of(text, st.lists(st.builds(lambda t: {"type": "text", "text": t}, text),
                                       max_size=2))
    base = st.builds(lambda i: {"type": "tool_result", "tool_use_id": i}, _id("toolu_"))
    return base.flatmap(lambda b: _with_optional(b, content=content, is_error=st.booleans()))


def stop_reasons() -> st.SearchStrategy[str]:
    return st.sampled_from(registry.STOP_REASONS)


def server_tool_usages(*, sdk_shape_only: bool = False) -> st.SearchStrategy[Json]:
    """``usage.server_tool_use`` in the SDK's shape or (unless ``sdk_shape_only``) the code
    execution guide's ``{"code_execution_requests": n}``."""
    sdk = st.builds(lambda s, f: {"web_search_requests": s, "web_fetch_requests": f}, nonneg, nonneg)
    return sdk if sdk_shape_only else sdk | st.builds(
        lambda n: {"code_execution_requests": n}, nonneg)


def usages(*, sdk_shape_only: bool = False) -> st.SearchStrategy[Json]:
    base = st.builds(lambda i, o: {"input_tokens": i, "output_tokens": o}, nonneg, nonneg)
    return base.flatmap(lambda b: _with_optional(
        b, cache_creation_input_tokens=nonneg, cache_read_input_tokens=nonneg,
        server_tool_use=server_tool_usages(sdk_shape_only=sdk_shape_only)))


def containers() -> st.SearchStrategy[Json]:
    return st.builds(lambda i, d: {"id": i, "expires_at": f"2026-{d:02d}-20T14:30:00Z"},
                     _id("container_"), st.integers(1, 12))


def messages_responses(*, sdk_shape_only: bool = False) -> st.SearchStrategy[Json]:
    """A complete ``Message`` (every stop reason, optional container)."""
    base = st.builds(
        lambda i, c, r, u: {"id": i, "type": "message", "role": "assistant",
                            "model": "claude-opus-4-8", "content": c, "stop_reason": r,
                            "stop_sequence": None, "usage": u},
        _id("msg_"), st.lists(response_blocks(), max_size=4), stop_reasons(),
        usages(sdk_shape_only=sdk_shape_only))
    return base.flatmap(lambda b: _with_optional(b, container=containers()))


def custom_tool_definitions() -> st.SearchStrategy[Json]:
    schema = st.builds(lambda props: {"type": "object", "properties": props},
                       st.dictionaries(st.text(_NAME_CHARS, min_size=1, max_size=8),
                                       st.just({"type": "string"}), max_size=3))
    base = st.builds(lambda n, s: {"name": n, "input_schema": s},
                     st.text(_NAME_CHARS, min_size=1, max_size=30), schema)
    return base.flatmap(lambda b: _with_optional(
        b, description=text, strict=st.booleans(), defer_loading=st.booleans(),
        allowed_callers=st.lists(st.sampled_from(registry.ALLOWED_CALLERS), min_size=1,
                                 max_size=2, unique=True),
        input_examples=st.lists(json_objects(), max_size=2)))


def tool_definitions() -> st.SearchStrategy[Json]:
    """A definition of any Messages tool type of the registry, or a custom tool."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "allowed_callers": st.lists(st.sampled_from(registry.ALLOWED_CALLERS), min_size=1,
                                    max_size=2, unique=True),
        "defer_loading": st.booleans(), "strict": st.booleans(),
        "cache_control": st.just({"type": "ephemeral"}),
        "max_characters": st.integers(1, 100_000), "max_uses": st.integers(1, 10),
        "input_examples": st.lists(json_objects(), max_size=2),
    }
    builtins = [t for t in registry.TOOLS.values() if t.name and t.side != "managed"]

    def one(t: registry.ToolVersion) -> st.SearchStrategy[Json]:
        fields = {f: s for f, s in optional.items() if f in t.definition_fields}
        base: Json = {"type": t.type, "name": t.name}
        if t.family == "computer":  # the display is required (the SDK's BetaToolComputerUse*Param)
            base.update(display_width_px=1024, display_height_px=768)
        return _with_optional(base, **fields)
    return st.one_of(*(one(t) for t in builtins), custom_tool_definitions())


def sse_events_for(message: Json) -> list[Json]:
    """The ``{"event", "data"}`` list a streamed response of ``message`` is sent as: each block
    starts empty (``tool_use`` input ``{}`` then one ``input_json_delta``), result blocks arrive
    whole, then ``message_delta`` and ``message_stop``."""
    import json as _json

    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    events: list[Json] = [{"event": "message_start", "data": {"type": "message_start",
                                                              "message": start}}]
    for i, block in enumerate(message["content"]):
        t = block["type"]
        deltas: list[Json] = []
        if t in ("tool_use", "server_tool_use"):
            first = {**block, "input": {}}
            deltas.append({"type": "input_json_delta", "partial_json": _json.dumps(block["input"])})
        elif t == "text":
            first = {**block, "text": ""}
            deltas.append({"type": "text_delta", "text": block["text"]})
        elif t == "thinking":
            first = {**block, "thinking": "", "signature": ""}
            deltas += [{"type": "thinking_delta", "thinking": block["thinking"]},
                       {"type": "signature_delta", "signature": block["signature"]}]
        else:
            first = block
        events.append({"event": "content_block_start", "data": {
            "type": "content_block_start", "index": i, "content_block": first}})
        events += [{"event": "content_block_delta", "data": {
            "type": "content_block_delta", "index": i, "delta": d}} for d in deltas]
        events.append({"event": "content_block_stop", "data": {"type": "content_block_stop",
                                                               "index": i}})
    delta: Json = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    if "container" in message:
        delta["container"] = message["container"]
    events.append({"event": "message_delta", "data": {
        "type": "message_delta", "delta": delta,
        "usage": {"output_tokens": message["usage"]["output_tokens"]}}})
    events.append({"event": "message_stop", "data": {"type": "message_stop"}})
    return events
