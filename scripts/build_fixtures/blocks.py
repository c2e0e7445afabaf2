"""Content blocks, shaped exactly as seed 000 §"Format respons", seed 002 and PROTOCOL.md §1-§2."""

from __future__ import annotations

from typing import Any

Block = dict[str, Any]


def text(t: str) -> Block:
    return {"type": "text", "text": t}


def thinking(t: str, signature: str) -> Block:
    """Extended thinking: the text and its signature (sent back unchanged with tool results)."""
    return {"type": "thinking", "thinking": t, "signature": signature}


def cited(t: str, *citations: Block) -> Block:
    """A text block citing sources (web search answers: one block per cited claim, between
    plain ones; real_traffic pydai__481, vercel__096)."""
    return {"type": "text", "text": t, "citations": list(citations)}


def tool_use(id_: str, name: str, input_: dict[str, Any], caller: Block | None = None) -> Block:
    b: Block = {"type": "tool_use", "id": id_, "name": name, "input": input_}
    if caller is not None:
        b["caller"] = caller
    return b


def server_tool_use(id_: str, name: str, input_: dict[str, Any], caller: Block | None = None) -> Block:
    b: Block = {"type": "server_tool_use", "id": id_, "name": name, "input": input_}
    if caller is not None:
        b["caller"] = caller
    return b


def direct() -> Block:
    return {"type": "direct"}


def code_caller(tool_id: str) -> Block:
    """Responses always tag programmatic callers as 20260120 (PROTOCOL.md §1, seed 002)."""
    return {"type": "code_execution_20260120", "tool_id": tool_id}


def tool_result(tool_use_id: str, content: Any, is_error: bool | None = None) -> Block:
    b: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error is not None:
        b["is_error"] = is_error
    return b


# --- code execution 20250825+ sub-tool results ----------------------------------------------


def bash_result(tool_use_id: str, stdout: str, stderr: str = "", return_code: int = 0,
                file_ids: tuple[str, ...] = ()) -> Block:
    return {"type": "bash_code_execution_tool_result", "tool_use_id": tool_use_id, "content": {
        "type": "bash_code_execution_result", "stdout": stdout, "stderr": stderr,
        "return_code": return_code,
        "content": [{"type": "bash_code_execution_output", "file_id": f} for f in file_ids]}}


def bash_error(tool_use_id: str, error_code: str) -> Block:
    return {"type": "bash_code_execution_tool_result", "tool_use_id": tool_use_id,
            "content": {"type": "bash_code_execution_tool_result_error", "error_code": error_code}}


def editor_view(tool_use_id: str, content: str, start_line: int = 1) -> Block:
    n = content.count("\n") + 1
    return {"type": "text_editor_code_execution_tool_result", "tool_use_id": tool_use_id, "content": {
        "type": "text_editor_code_execution_view_result", "file_type": "text", "content": content,
        "num_lines": n, "start_line": start_line, "total_lines": n + start_line - 1}}


def editor_create(tool_use_id: str, is_file_update: bool) -> Block:
    return {"type": "text_editor_code_execution_tool_result", "tool_use_id": tool_use_id, "content": {
        "type": "text_editor_code_execution_create_result", "is_file_update": is_file_update}}


def editor_str_replace(tool_use_id: str, old_start: int, lines: list[str]) -> Block:
    old = sum(1 for line in lines if line.startswith("-"))
    new = sum(1 for line in lines if line.startswith("+"))
    return {"type": "text_editor_code_execution_tool_result", "tool_use_id": tool_use_id, "content": {
        "type": "text_editor_code_execution_str_replace_result", "old_start": old_start,
        "old_lines": old, "new_start": old_start, "new_lines": new, "lines": lines}}


def editor_error(tool_use_id: str, error_code: str, error_message: str | None = None) -> Block:
    content: Block = {"type": "text_editor_code_execution_tool_result_error", "error_code": error_code}
    if error_message is not None:
        content["error_message"] = error_message
    return {"type": "text_editor_code_execution_tool_result", "tool_use_id": tool_use_id,
            "content": content}


# --- code_execution_tool_result (legacy 20250522 and programmatic runs) ------------------------


def code_result(tool_use_id: str, stdout: str, stderr: str = "", return_code: int = 0,
                file_ids: tuple[str, ...] = ()) -> Block:
    return {"type": "code_execution_tool_result", "tool_use_id": tool_use_id, "content": {
        "type": "code_execution_result", "stdout": stdout, "stderr": stderr,
        "return_code": return_code,
        "content": [{"type": "code_execution_output", "file_id": f} for f in file_ids]}}


def code_error(tool_use_id: str, error_code: str) -> Block:
    return {"type": "code_execution_tool_result", "tool_use_id": tool_use_id,
            "content": {"type": "code_execution_tool_result_error", "error_code": error_code}}


def container_upload(file_id: str) -> Block:
    return {"type": "container_upload", "file_id": file_id}
