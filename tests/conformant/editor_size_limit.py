"""A conformant editor with a size limit: files over 256 KiB, and lines over 64 KiB, are refused.

Real editors cap what they load (the ``anthropic`` SDK's agent toolset refuses to read or edit
past 262,144 bytes and says so). The docs set no size limit either way, and a refusal with
``is_error: true`` that leaves the file untouched loses nothing, so the suite must accept it
(issue 15: calibration on real implementations). Creating a file is never refused; every other
command on a file past the limit is answered with an error naming the limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor

FILE_LIMIT = 256 * 1024
LINE_LIMIT = 64 * 1024


class SizeLimited(TextEditor):
    """The reference editor, refusing files past ``FILE_LIMIT`` or lines past ``LINE_LIMIT``."""

    CONVENTION = "refuses files over 256 KiB and lines over 64 KiB with an error"

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        path = tool_input.get("path") if isinstance(tool_input, dict) else None
        if tool_input.get("command") != "create" and isinstance(path, str):
            p = Path(path)
            if p.is_file():
                data = p.read_bytes()
                if len(data) > FILE_LIMIT or max(map(len, data.split(b"\n"))) > LINE_LIMIT:
                    return {"content": f"Error: {path} is past this editor's size limit "
                                       f"({FILE_LIMIT} bytes a file, {LINE_LIMIT} a line); "
                                       "nothing was changed", "is_error": True}
        return super().__call__(tool_input)
