"""Schemas of content blocks (response and request side) and their nested results."""

from __future__ import annotations

from .. import registry
from ..sources import SEED_CODE_EXECUTION, SEED_PTC, protocol, seed
from ._core import (
    ANY_OBJ,
    BOOL,
    INT,
    MESSAGE,
    NONNEG,
    RULE,
    STR,
    Ctx,
    Schema,
    by_type,
    cite,
    const,
    document,
    enum,
    nullable,
    obj,
    ref,
    str_array,
)
from ._tools import client_tool_names, server_tool_inputs

NAME = "blocks"
_RESULTS = seed(SEED_CODE_EXECUTION, "Format respons")
_BLOCKS_SRC = protocol("2. Code execution tool: Result blocks")
_CACHE = {"cache_control": nullable({"type": "object", "required": ["type"],
                                     "properties": {"type": const("ephemeral")}})}
_TOOLS = "tools"


def _error_code(ctx: Ctx, codes: tuple[str, ...], source: str, *, legacy: bool = True) -> Schema:
    return enum(ctx, codes, source, what="error_code",
                legacy=registry.LEGACY_ERROR_CODES if legacy else (),
                legacy_note=f"only in older doc revisions ({registry.LEGACY_ERROR_CODES_SOURCE.cite()})")


def caller(ctx: Ctx) -> Schema:
    variants = {t: (obj(ctx, {"type": const(t)}, ["type"]) if t == "direct" else
                    obj(ctx, {"type": const(t), "tool_id": STR}, ["type", "tool_id"]))
                for t in registry.CALLER_TYPES}
    s = by_type(ctx, variants, what="caller type", source=cite(registry.CALLERS_SOURCE))
    s["properties"]["type"][RULE] = "ptc.caller.type"
    return s


def citation(ctx: Ctx) -> Schema:
    doc = {"cited_text": STR, "document_index": NONNEG, "document_title": nullable(STR),
           "file_id": nullable(STR)}
    req = ["type", "cited_text"]
    return by_type(ctx, {
        "char_location": obj(ctx, {"type": const("char_location"), **doc, "start_char_index": NONNEG,
                                   "end_char_index": NONNEG}, req),
        "page_location": obj(ctx, {"type": const("page_location"), **doc, "start_page_number": INT,
                                   "end_page_number": INT}, req),
        "content_block_location": obj(ctx, {"type": const("content_block_location"), **doc,
                                            "start_block_index": NONNEG, "end_block_index": NONNEG},
                                      req),
        "web_search_result_location": obj(ctx, {"type": const("web_search_result_location"),
                                                "cited_text": STR, "encrypted_index": STR,
                                                "title": nullable(STR), "url": STR}, req),
        "search_result_location": obj(ctx, {"type": const("search_result_location"),
                                            "cited_text": STR, "search_result_index": NONNEG,
                                            "source": STR, "title": nullable(STR),
                                            "start_block_index": NONNEG, "end_block_index": NONNEG},
                                      req),
    }, what="citation type", source=cite(protocol("6. Streaming (SSE): Delta types", "S")))


def text(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": const("text"), "text": STR,
                     "citations": nullable({"type": "array", "items": ref("citation")}), **_CACHE},
               ["type", "text"])


def thinking(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": const("thinking"), "thinking": STR, "signature": STR, **_CACHE},
               ["type", "thinking", "signature"], lenient_required=["type", "thinking"])


def _named_input(name: str) -> Schema:
    """Condition: the block names ``name`` and carries a non-empty input (a streamed block starts
    with ``"input": {}`` and gets its input from ``input_json_delta`` events)."""
    return {"properties": {"name": const(name), "input": {"minProperties": 1}},
            "required": ["name", "input"]}


def tool_use(ctx: Ctx) -> Schema:
    s = obj(ctx, {"type": const("tool_use"), "id": STR, "name": STR, "input": ANY_OBJ,
                  "caller": nullable(ref("caller")), "toolset_name": nullable(STR), **_CACHE},
            ["type", "id", "name", "input"], lenient_required=["type", "id", "name"],
            comment=f"caller: {seed(SEED_PTC, 'Le champ caller').cite()}")
    s["allOf"] = [{"if": _named_input(n), "then": {"properties": {
                      "input": ref(f"input_by_name.{n}", _TOOLS)}}} for n in client_tool_names()]
    return s


def server_tool_use(ctx: Ctx) -> Schema:
    names = [n for t in registry.TOOLS.values() for n in t.sub_tools]
    name = enum(ctx, names, cite(_BLOCKS_SRC), what="server tool name")
    s = obj(ctx, {"type": const("server_tool_use"), "id": STR, "name": name, "input": ANY_OBJ,
                  "caller": nullable(ref("caller")), **_CACHE},
            ["type", "id", "name", "input"], lenient_required=["type", "id", "name"])
    s["allOf"] = [{"if": _named_input(n), "then": {"properties": {
                      "input": ref(f"server_input.{n}", _TOOLS)}}} for n in server_tool_inputs(ctx)]
    return s


def image(ctx: Ctx) -> Schema:
    source = by_type(ctx, {
        "base64": obj(ctx, {"type": const("base64"), "media_type": STR, "data": STR},
                      ["type", "media_type", "data"]),
        "url": obj(ctx, {"type": const("url"), "url": STR}, ["type", "url"]),
        "file": obj(ctx, {"type": const("file"), "file_id": STR}, ["type", "file_id"]),
    }, what="image source type", source=cite(protocol("1. Programmatic tool calling")))
    return obj(ctx, {"type": const("image"), "source": source, **_CACHE}, ["type", "source"])


def document_block(ctx: Ctx) -> Schema:
    content = {"anyOf": [STR, {"type": "array", "items": ANY_OBJ}]}
    source = by_type(ctx, {
        "base64": obj(ctx, {"type": const("base64"), "media_type": STR, "data": STR},
                      ["type", "media_type", "data"]),
        "text": obj(ctx, {"type": const("text"), "media_type": STR, "data": STR},
                    ["type", "data"]),
        "content": obj(ctx, {"type": const("content"), "content": content}, ["type", "content"]),
        "url": obj(ctx, {"type": const("url"), "url": STR}, ["type", "url"]),
        "file": obj(ctx, {"type": const("file"), "file_id": STR}, ["type", "file_id"]),
    }, what="document source type", source=cite(protocol("1. Programmatic tool calling")))
    return obj(ctx, {"type": const("document"), "source": source, "title": nullable(STR),
                     "context": nullable(STR),
                     "citations": nullable(obj(ctx, {"enabled": BOOL})), **_CACHE},
               ["type", "source"])


def search_result(ctx: Ctx) -> Schema:
    """Search results a tool returns, citable with ``search_result_location`` (the SDK's
    SearchResultBlockParam [S]; live: real_traffic rubyllm__023/024)."""
    return obj(ctx, {"type": const("search_result"), "source": STR, "title": STR,
                     "content": {"type": "array", "items": ref("text")},
                     "citations": nullable(obj(ctx, {"enabled": BOOL})), **_CACHE},
               ["type", "source", "title", "content"])


def tool_result(ctx: Ctx) -> Schema:
    item = by_type(ctx, {"text": ref("text"), "image": ref("image"), "document": ref("document"),
                         "search_result": search_result(ctx)},
                   what="tool_result content type",
                   source=cite(protocol("1. Programmatic tool calling: Continuation request")))
    return obj(ctx, {"type": const("tool_result"), "tool_use_id": STR,
                     "content": {"anyOf": [STR, {"type": "array", "items": item}]},
                     "is_error": BOOL, "toolset_name": nullable(STR), **_CACHE},
               ["type", "tool_use_id"])


def _result_block(ctx: Ctx, block_type: str, variants: dict[str, Schema], *,
                  with_caller: bool = False) -> Schema:
    content = by_type(ctx, variants, what=f"{block_type} content type", source=cite(_RESULTS))
    props: dict[str, Schema] = {"type": const(block_type), "tool_use_id": STR, "content": content}
    if with_caller:
        props["caller"] = nullable(ref("caller"))
    props.update(_CACHE)
    return obj(ctx, props, ["type", "tool_use_id", "content"])


def _output(ctx: Ctx, t: str) -> Schema:
    return {"type": "array", "items": obj(ctx, {"type": const(t), "file_id": STR}, ["type", "file_id"])}


def _run_result(ctx: Ctx, t: str, output: str, *, encrypted: bool = False,
                abort_reason: bool = False) -> Schema:
    stdout = "encrypted_stdout" if encrypted else "stdout"
    props: dict[str, Schema] = {"type": const(t), stdout: STR, "stderr": STR, "return_code": INT,
                                "content": _output(ctx, output)}
    if abort_reason:
        # Python results say why a cell stopped early (null when it ran to the end): 16 live
        # captures (real_traffic pydai__250, pydai__273, vercel__090), absent from SDK 2.10.
        props["abort_reason"] = nullable(STR)
    return obj(ctx, props, ["type", stdout, "stderr", "return_code", "content"],
               lenient_required=["type", "return_code"])


def _error(ctx: Ctx, t: str, codes: tuple[str, ...], source: str, *,
           message: bool = False, legacy: bool = True) -> Schema:
    props = {"type": const(t), "error_code": _error_code(ctx, codes, source, legacy=legacy)}
    if message:
        props["error_message"] = nullable(STR)
    return obj(ctx, props, ["type", "error_code"])


def code_execution_tool_result(ctx: Ctx) -> Schema:
    src = cite(registry.ERROR_CODES_SOURCE)
    return _result_block(ctx, "code_execution_tool_result", {
        "code_execution_result": _run_result(ctx, "code_execution_result", "code_execution_output",
                                             abort_reason=True),
        "encrypted_code_execution_result": _run_result(
            ctx, "encrypted_code_execution_result", "code_execution_output", encrypted=True,
            abort_reason=True),
        "code_execution_tool_result_error": _error(ctx, "code_execution_tool_result_error",
                                                   registry.CODE_EXECUTION_ERROR_CODES, src),
    })


def bash_code_execution_tool_result(ctx: Ctx) -> Schema:
    src = cite(registry.ERROR_CODES_SOURCE)
    return _result_block(ctx, "bash_code_execution_tool_result", {
        "bash_code_execution_result": _run_result(ctx, "bash_code_execution_result",
                                                  "bash_code_execution_output"),
        "bash_code_execution_tool_result_error": _error(
            ctx, "bash_code_execution_tool_result_error", registry.BASH_ERROR_CODES, src),
    })


def text_editor_code_execution_tool_result(ctx: Ctx) -> Schema:
    src = cite(registry.ERROR_CODES_SOURCE)
    p = "text_editor_code_execution_"
    return _result_block(ctx, f"{p}tool_result", {
        f"{p}view_result": obj(ctx, {"type": const(f"{p}view_result"),
                                     "file_type": {"enum": ["text", "image", "pdf"]},
                                     "content": STR, "num_lines": nullable(INT),
                                     "start_line": nullable(INT), "total_lines": nullable(INT)},
                               ["type", "file_type", "content"]),
        f"{p}create_result": obj(ctx, {"type": const(f"{p}create_result"), "is_file_update": BOOL},
                                 ["type", "is_file_update"]),
        f"{p}str_replace_result": obj(ctx, {"type": const(f"{p}str_replace_result"),
                                            "old_start": nullable(INT), "old_lines": nullable(INT),
                                            "new_start": nullable(INT), "new_lines": nullable(INT),
                                            "lines": nullable(str_array())}, ["type"]),
        f"{p}tool_result_error": _error(ctx, f"{p}tool_result_error",
                                        registry.TEXT_EDITOR_ERROR_CODES, src, message=True),
    })


def web_search_tool_result(ctx: Ctx) -> Schema:
    src = cite(registry.WEB_ERROR_CODES_SOURCE)
    result = obj(ctx, {"type": const("web_search_result"), "url": STR, "title": STR,
                       "encrypted_content": STR, "page_age": nullable(STR)},
                 ["type", "url", "title", "encrypted_content"], lenient_required=["type", "url"])
    error = _error(ctx, "web_search_tool_result_error", registry.WEB_SEARCH_ERROR_CODES, src,
                   legacy=False)
    return obj(ctx, {"type": const("web_search_tool_result"), "tool_use_id": STR,
                     "content": {"anyOf": [{"type": "array", "items": result}, error],
                                 MESSAGE: "content is a list of web_search_result blocks or a "
                                          "web_search_tool_result_error"},
                     "caller": nullable(ref("caller")), **_CACHE}, ["type", "tool_use_id", "content"])


def web_fetch_tool_result(ctx: Ctx) -> Schema:
    src = cite(registry.WEB_ERROR_CODES_SOURCE)
    return _result_block(ctx, "web_fetch_tool_result", {
        "web_fetch_result": obj(ctx, {"type": const("web_fetch_result"), "url": STR,
                                      "content": ref("document"), "retrieved_at": nullable(STR)},
                                ["type", "url", "content"]),
        "web_fetch_tool_result_error": _error(ctx, "web_fetch_tool_result_error",
                                              registry.WEB_FETCH_ERROR_CODES, src, legacy=False),
    }, with_caller=True)


def container_upload(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": const("container_upload"), "file_id": STR, **_CACHE},
               ["type", "file_id"])


def redacted_thinking(ctx: Ctx) -> Schema:
    return obj(ctx, {"type": const("redacted_thinking"), "data": STR, **_CACHE}, ["type", "data"])


#: Block type -> builder. Response blocks come first; request-only blocks after.
RESPONSE_BLOCKS = {
    "text": text, "thinking": thinking, "redacted_thinking": redacted_thinking,
    "tool_use": tool_use, "server_tool_use": server_tool_use,
    "web_search_tool_result": web_search_tool_result, "web_fetch_tool_result": web_fetch_tool_result,
    "code_execution_tool_result": code_execution_tool_result,
    "bash_code_execution_tool_result": bash_code_execution_tool_result,
    "text_editor_code_execution_tool_result": text_editor_code_execution_tool_result,
    "container_upload": container_upload,
}
REQUEST_ONLY_BLOCKS = {"tool_result": tool_result, "image": image, "document": document_block}
BLOCK_TYPES = (*RESPONSE_BLOCKS, *REQUEST_ONLY_BLOCKS)


def build(ctx: Ctx) -> Schema:
    defs: dict[str, Schema] = {t: f(ctx) for t, f in {**RESPONSE_BLOCKS, **REQUEST_ONLY_BLOCKS}.items()}
    src = cite(_BLOCKS_SRC)
    defs["block"] = by_type(ctx, {t: ref(t) for t in BLOCK_TYPES}, what="content block type",
                            source=src)
    defs["response_block"] = by_type(ctx, {t: ref(t) for t in RESPONSE_BLOCKS},
                                     what="response content block type", source=src)
    defs["caller"] = caller(ctx)
    defs["citation"] = citation(ctx)
    return document(ctx, NAME, defs, title="Content blocks")
