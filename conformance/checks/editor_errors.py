"""Editor checks of error handling: missing files, invalid input, the ``is_error`` flag, texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.catalog import CheckSkipped, Severity, check
from conformance.session import ToolResult, ToolSession

from .editor_support import (
    EDITOR_TYPES,
    FAMILY,
    NO_UNDO_TYPES,
    SRC_ERROR_TEXTS,
    SRC_ERRORS,
    SRC_VALIDATION,
    expect_bytes,
    expect_refused,
    fail,
    insert_input,
    p,
    plant,
    read,
    refused,
)

THREE = b"alpha\nbeta\ngamma\n"


@check("editor.errors.missing_file", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_ERRORS,
       statement="view, str_replace and insert on a file that does not exist are refused, and "
                 "no file appears.")
def missing_file(s: ToolSession) -> None:
    path = p(s, "does_not_exist.py")
    for tool_input in ({"command": "view", "path": path},
                       {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"},
                       insert_input(s, path, 0, "text\n")):
        r = s.call(tool_input)
        expect_refused(s, r, f"{tool_input['command']} of a missing file", "Error: File not found")
        expect_bytes(s, path, None, f"{tool_input['command']} of a missing file")


def _error_cases(s: ToolSession) -> list[tuple[str, dict[str, Any]]]:
    path = plant(s, "f.txt", THREE)
    plant(s, "dup.txt", b"x\nx\n")
    cases = [
        ("view of a missing file", {"command": "view", "path": p(s, "missing.txt")}),
        ("str_replace with no match",
         {"command": "str_replace", "path": path, "old_str": "delta", "new_str": "x"}),
        ("str_replace with 2 matches",
         {"command": "str_replace", "path": p(s, "dup.txt"), "old_str": "x", "new_str": "y"}),
        ("insert past the end", insert_input(s, path, 9, "x\n")),
        ("an unknown command", {"command": "frobnicate", "path": path}),
        ("view_range past the end", {"command": "view", "path": path, "view_range": [9, -1]}),
        # the file system refuses it (f.txt is a file): an OS error, flagged like the others
        ("create under a file", {"command": "create", "path": p(s, "f.txt/inner.txt"),
                                 "file_text": "x"}),
    ]
    if s.tool_type in NO_UNDO_TYPES:
        cases.append(("undo_edit (not in this version)", {"command": "undo_edit", "path": path}))
    else:
        cases.append(("undo_edit with no history",
                      {"command": "undo_edit", "path": p(s, "never_edited.txt")}))
    return cases


@check("editor.errors.flagged_is_error", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_ERRORS,
       statement="every refusal comes back as a tool_result with is_error: true.")
def flagged_is_error(s: ToolSession) -> None:
    for what, tool_input in _error_cases(s):
        r = s.call(tool_input)
        if refused(r) and not r.is_error:
            fail(s, f"{what} was answered with an error text but is_error is not true", received=r,
                 documented={"content": "Error: ...", "is_error": True})


#: (situation, input, the documented example texts: PROTOCOL.md §3 in English, seed 001
#: "Tangani kesalahan" (Handle errors) in Indonesian).
_DOCUMENTED: list[tuple[str, Callable[[ToolSession], dict[str, Any]], tuple[str, ...]]] = [
    ("view of a missing file", lambda s: {"command": "view", "path": p(s, "missing.txt")},
     ("Error: File not found", "Error: File tidak ditemukan")),
    ("str_replace with no match",
     lambda s: {"command": "str_replace", "path": p(s, "f.txt"), "old_str": "delta",
                "new_str": "x"},
     ("Error: No match found for replacement. Please check your text and try again.",
      "Error: Tidak ditemukan kecocokan untuk penggantian")),
    ("str_replace with 3 matches",
     lambda s: {"command": "str_replace", "path": p(s, "dup.txt"), "old_str": "x", "new_str": "y"},
     ("Error: Found 3 matches for replacement text. Please provide more context to make a unique "
      "match.", "Error: Ditemukan 3 kecocokan")),
]


@check("editor.errors.documented_texts", family=FAMILY, severity=Severity.INFO,
       applies_to=EDITOR_TYPES, source=SRC_ERROR_TEXTS,
       statement="reports which refusals use the documented example texts (\"Error: File not "
                 "found\", \"Error: No match found for replacement...\", \"Error: Found n "
                 "matches...\"); the texts are examples, any message explaining the problem will "
                 "do, but an error must say something.")
def documented_texts(s: ToolSession) -> str:
    # Seed 001 "Tangani kesalahan" (Handle errors) asks for "an appropriate error message"
    # (pesan kesalahan yang sesuai) and quotes examples; PROTOCOL.md §3 lists them as "Documented
    # example texts". Whether a refusal happens at all is other checks' business.
    plant(s, "f.txt", THREE)
    plant(s, "dup.txt", b"x\nx\nx\n")
    documented: list[str] = []
    own: list[str] = []
    for what, make, texts in _DOCUMENTED:
        r = s.call(make(s))
        if not refused(r):
            continue
        if not r.text.strip():
            fail(s, f"{what}: the error result says nothing about the problem", received=r,
                 documented=texts[0])
        (documented if any(_core(t) in r.text for t in texts) else own).append(what)
    if not documented and not own:
        raise CheckSkipped("none of the situations was refused (the str_replace and missing-file "
                           "checks report that)")
    parts = ([f"documented texts for {', '.join(documented)}"] if documented else []) + \
        ([f"its own texts for {', '.join(own)}"] if own else [])
    return "errors: " + "; ".join(parts)


def _core(text: str) -> str:
    """The part of a documented text an editor must keep (it may add the path or a hint)."""
    return text.split(". ")[0].rstrip(".")


def _invalid_inputs(s: ToolSession, path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("an empty input", {}),
        ("view without a path", {"command": "view"}),
        ("an unknown command", {"command": "frobnicate", "path": path}),
        ("str_replace without old_str", {"command": "str_replace", "path": path, "new_str": "x"}),
        ("create without file_text", {"command": "create", "path": p(s, "nothing.txt")}),
        ("insert with a non-integer insert_line", insert_input(s, path, "two", "x\n")),  # type: ignore[arg-type]
        ("insert without the text to insert", {"command": "insert", "path": path,
                                               "insert_line": 1}),
    ]


@check("editor.errors.invalid_input_answered", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VALIDATION,
       statement="invalid input (no command, no path, unknown command, missing or mistyped "
                 "fields) is answered with an error and changes nothing.")
def invalid_input(s: ToolSession) -> None:
    path = plant(s, "f.txt", THREE)
    for what, tool_input in _invalid_inputs(s, path):
        r = s.call(tool_input)
        expect_refused(s, r, what, "an error result naming the problem")
        if read(path) != THREE:
            fail(s, f"{what} changed f.txt", received=read(path), documented=THREE)
        if read(p(s, "nothing.txt")) is not None:
            fail(s, f"{what} created nothing.txt", received=read(p(s, "nothing.txt")),
                 documented="no file")


@check("editor.errors.returned_not_raised", family=FAMILY, severity=Severity.SHOULD,
       applies_to=EDITOR_TYPES, source=SRC_ERRORS,
       statement="errors are returned as tool results, not raised as exceptions (no tracebacks).")
def returned_not_raised(s: ToolSession) -> None:
    path = plant(s, "f.txt", THREE)
    cases = [*_invalid_inputs(s, path), *_error_cases(s),
             # answered with the file or an error alike, never raised
             ("view with a view_range of three numbers",
              {"command": "view", "path": path, "view_range": [1, 2, 3]}),
             ("view of a relative path", {"command": "view", "path": "f.txt"})]
    for what, tool_input in cases:
        r: ToolResult = s.call(tool_input)
        if r.raised:
            fail(s, f"{what} raised an exception instead of returning an error result",
                 received=r.raised, documented={"content": "Error: ...", "is_error": True})
