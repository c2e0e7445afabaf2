"""A text editor subject over openhands-aci's ``file_editor`` (OpenHands' ``str_replace_editor``).

``pip install openhands-aci`` (checked with 0.3.3; it needs Python 3.12). Declare it as
``text_editor_20250124``: ``file_editor`` takes exactly that tool type's input (``view``,
``create``, ``str_replace``, ``insert`` with ``new_str``, ``undo_edit``), and OpenHands gives it
to every model under the name ``str_replace_editor``. It has no ``insert_text`` (the field of
20250429+), so it is not declared as a later type: that would need a renaming the tool does not do::

    tooluse run --editor conformance.adapters.openhands_aci:file_editor \\
        --editor-type text_editor_20250124

What is mapped:

- the input: passed to ``openhands_aci.editor.file_editor(**input)`` as it is (the suite sends
  absolute paths, which the tool requires). A key the function does not take, or a missing
  ``command``/``path``, raises ``TypeError`` as it would for any caller; the suite counts an
  exception as an error result and reports it;
- the output: ``file_editor`` returns its result as JSON between ``<oh_aci_output_ID>`` marker
  lines (OpenHands' runtime parses it). The adapter parses it the same way and returns
  ``formatted_output_and_error`` (the text OpenHands shows the model: the output, or
  ``ERROR:\\n`` and the error) as the content, with ``is_error`` true exactly when the tool's
  ``error`` field is set. Nothing else in the JSON (``old_content``, ``new_content``...) is shown,
  as OpenHands does not show it;
- state: ``file_editor`` uses the module's one global ``OHEditor`` (its undo history and file
  cache), as OpenHands does; the adapter keeps it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.adapters._lazy import require

__all__ = ["REQUIREMENT", "FileEditor", "file_editor", "parse_output"]

REQUIREMENT = "openhands-aci"
PYTHON = "3.12"
_MARKED = re.compile(r"\A<oh_aci_output_(?P<id>[0-9a-f]+)>\n(?P<body>.*)\n</oh_aci_output_(?P=id)>\Z",
                     re.DOTALL)


def parse_output(raw: str) -> dict[str, Any]:
    """The content and ``is_error`` of a ``file_editor`` return value (its marked JSON)."""
    m = _MARKED.match(raw)
    if m is None:
        raise ValueError(f"file_editor returned no <oh_aci_output_...> block: {raw[:200]!r}")
    data = json.loads(m.group("body"))
    return {"content": data["formatted_output_and_error"], "is_error": bool(data.get("error"))}


class FileEditor:
    """``openhands_aci.editor.file_editor``, one call per tool input."""

    def __init__(self, workdir: Path) -> None:
        self.editor = require("openhands_aci.editor", REQUIREMENT, python=PYTHON).file_editor
        self.workdir = Path(workdir)

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        return parse_output(self.editor(**tool_input))


def file_editor(workdir: Path, timeout: float | None = None) -> FileEditor:
    """Factory: openhands-aci's ``file_editor`` (``text_editor_20250124``)."""
    return FileEditor(workdir)


def repro_calls(factory: str, timeout: float) -> Any:
    """A reproducer's calls (:mod:`conformance.adapters._repro`): ``file_editor(**input)`` as
    OpenHands' runtime calls it, its marked JSON read as OpenHands reads it."""
    from conformance.adapters._repro import UpstreamCalls, kwargs

    return UpstreamCalls(
        install=REQUIREMENT,
        imports="import json\nimport re\nfrom openhands_aci.editor import file_editor",
        make="",
        call=lambda tool_input: f"file_editor({kwargs(tool_input)})",
        answer=(
            "def answer(raw):\n"
            "    # file_editor returns JSON between <oh_aci_output_ID> lines; OpenHands shows the\n"
            "    # model formatted_output_and_error, an error when 'error' is set\n"
            "    body = re.search(r'<oh_aci_output_[0-9a-f]+>\\n(.*)\\n</oh_aci_output_', raw,\n"
            "                     re.DOTALL).group(1)\n"
            "    data = json.loads(body)\n"
            "    return {'content': data['formatted_output_and_error'],\n"
            "            'is_error': bool(data.get('error'))}\n\n\n"
            "def refused(exc):\n"
            "    return None\n"))
