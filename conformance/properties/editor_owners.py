"""One defect, one check: what a model-check finding is about, and the fixed checks that own it.

A disagreement of the model check (:mod:`conformance.properties.editor`) gets a **kind** when it
is found (:func:`kind_of`): the command and what went wrong in the docs' terms (``str_replace``
accepted an ``old_str`` that occurs several times, an ``insert`` at the start of the file left
the wrong bytes, ...), or a byte property the wrong bytes differ by (a final newline added or
dropped, bytes that are not UTF-8 replaced). :data:`REPORTED_BY` maps each kind to the fixed
checks that report that defect: when one of them fails on the same subject, the finding is
theirs and the model check sets it aside (a SKIP naming them when nothing else is left).

Two byte properties are owned by what the finding *needs* rather than by what it shows
(:data:`NEUTRAL`): a finding whose steps hold a tab (a CR) and that is gone when the same steps
are replayed with every tab turned into a space (every CR into LF) is ``tabs_preserved``'s
(``crlf_preserved``'s), or the undo checks' on those bytes when it ends in ``undo_edit``.

Everything here is data and pure functions; replaying and running the fixed checks is the model
check's (:func:`conformance.properties.editor.explore_editor_model`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.properties.editor_model import lines_of, occurrences

# -- the fixed checks ---------------------------------------------------------------------------

TABS_CHECK = "editor.bytes.tabs_preserved"
CRLF_CHECK = "editor.bytes.crlf_preserved"
FINAL_NEWLINE_CHECK = "editor.bytes.trailing_newline_preserved"
NON_UTF8_CHECK = "editor.bytes.non_utf8_preserved"
INSERT_KEY_CHECK = "editor.insert.accepts_insert_text"
UNDO_CHECK = "editor.undo_edit.restores_previous_content"
UNDO_TABS_CHECK = "editor.undo_edit.restores_tabs"
UNDO_CRLF_CHECK = "editor.undo_edit.restores_crlf"
SEVERAL_MATCHES_CHECK = "editor.str_replace.rejects_multiple_matches"
NO_MATCH_CHECK = "editor.str_replace.rejects_no_match"

# -- finding kinds -------------------------------------------------------------------------------

SEVERAL_MATCHES = "str_replace:several matches accepted"
NO_MATCH = "str_replace:no match accepted"
REPLACE = "str_replace:one match"
CREATE = "create"
INSERT_START = "insert:at start"
INSERT_MIDDLE = "insert:in middle"
INSERT_END = "insert:at end"
INSERT_PAST_END = "insert:past end accepted"
VIEW = "view"
VIEW_RANGE = "view_range"
MISSING_FILE = "missing file accepted"
UNDO = "undo_edit"
FINAL_NEWLINE = "bytes:final newline"
NON_UTF8 = "bytes:not UTF-8"
TABS = "bytes:tab"
CR = "bytes:CR"

#: A command refused on a file whose name holds spaces, quotes or shell syntax (the model's
#: file names do) is that check's defect, whatever the command.
_PATHS = "editor.paths.special_characters_are_plain"
_INSERTS = ("editor.insert.accepts_insert_text", _PATHS)

#: Finding kind → the fixed checks that report the same defect, in order: the first that fails
#: on the subject owns the finding (one defect, one check).
REPORTED_BY: dict[str, tuple[str, ...]] = {
    SEVERAL_MATCHES: (SEVERAL_MATCHES_CHECK,),
    NO_MATCH: (NO_MATCH_CHECK,),
    REPLACE: ("editor.str_replace.replaces_exactly_one_match",
              "editor.str_replace.whitespace_exact", _PATHS),
    CREATE: ("editor.create.writes_file_text", _PATHS),
    INSERT_START: ("editor.insert.at_start", *_INSERTS),
    INSERT_MIDDLE: ("editor.insert.in_middle", *_INSERTS),
    INSERT_END: ("editor.insert.at_end", *_INSERTS),
    INSERT_PAST_END: ("editor.insert.rejects_past_end",),
    VIEW: ("editor.view.returns_file_content", _PATHS),
    VIEW_RANGE: ("editor.view.view_range_one_based_inclusive",
                 "editor.view.view_range_minus_one_reads_to_end", _PATHS),
    MISSING_FILE: ("editor.errors.missing_file",),
    UNDO: (UNDO_CHECK,),
    FINAL_NEWLINE: (FINAL_NEWLINE_CHECK, "editor.insert.at_end"),
    NON_UTF8: (NON_UTF8_CHECK,),
    TABS: (TABS_CHECK, UNDO_TABS_CHECK),
    CR: (CRLF_CHECK, UNDO_CRLF_CHECK),
}


def kind_of(tool_input: dict[str, Any], before: bytes | None, refused: bool,
            after: bytes | None, allowed: list[bytes | None]) -> str:
    """The kind of a disagreement on ``tool_input`` (the file held ``before``; the subject
    refused or not and left ``after``; ``allowed``: the bytes the documented outcomes leave)."""
    command = str(tool_input.get("command"))
    if command == "undo_edit":
        return UNDO
    if command == "create":
        return CREATE
    if not refused:
        byte_kind = _byte_kind(after, allowed)
        if byte_kind:
            return byte_kind
    if before is None and command != "create" and not refused:
        return MISSING_FILE
    if command == "view":
        return VIEW_RANGE if tool_input.get("view_range") is not None else VIEW
    if command == "str_replace":
        old = str(tool_input.get("old_str") or "").encode()
        if not refused and before is not None and old:
            n = occurrences(before, old, overlapping=False)
            if n > 1:
                return SEVERAL_MATCHES
            if n == 0:
                return NO_MATCH
        return REPLACE
    if command == "insert":
        line = tool_input.get("insert_line")
        n = len(lines_of(before or b""))
        if isinstance(line, int) and line > n and not refused:
            return INSERT_PAST_END
        if line == 0:
            return INSERT_START
        return INSERT_END if isinstance(line, int) and line >= n else INSERT_MIDDLE
    return command


def _byte_kind(after: bytes | None, allowed: list[bytes | None]) -> str:
    """A byte property the wrong bytes differ by from a documented result, or ""."""
    if after is None:
        return ""
    for want in allowed:
        if want is None or want == after:
            continue
        if want.rstrip(b"\r\n") == after.rstrip(b"\r\n") and want != after:
            return FINAL_NEWLINE
        if not _utf8(want) and want.decode("utf-8", "replace").encode() == after:
            return NON_UTF8
    return ""


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- byte properties a finding needs ----------------------------------------------------------------

Steps = list[Any]


def _mapped(steps: Steps, on_bytes: Callable[[bytes], bytes],
            on_text: Callable[[str], str]) -> Steps:
    """The same steps with every planted file's bytes and every input's texts mapped."""
    out: Steps = []
    for step in steps:
        if isinstance(step, dict):
            out.append({k: (on_text(v) if isinstance(v, str) and k != "path" else v)
                        for k, v in step.items()})
        else:  # a planted file (conformance.properties.editor_judge.Plant)
            out.append(type(step)(step.path, on_bytes(step.data)))
    return out


def _holds(steps: Steps, byte: bytes) -> bool:
    return any(byte in step.data if not isinstance(step, dict)
               else any(isinstance(v, str) and byte.decode() in v
                        for k, v in step.items() if k != "path")
               for step in steps)


def without_cr(steps: Steps) -> Steps:
    """Every CRLF and CR in the steps' texts and planted bytes turned into LF."""
    return _mapped(steps, lambda b: b.replace(b"\r\n", b"\n").replace(b"\r", b"\n"),
                   lambda t: t.replace("\r\n", "\n").replace("\r", "\n"))


def without_tabs(steps: Steps) -> Steps:
    """Every tab in the steps' texts and planted bytes turned into one space."""
    return _mapped(steps, lambda b: b.replace(b"\t", b" "), lambda t: t.replace("\t", " "))


#: Byte kinds a finding may *need*: kind → (does the example hold the bytes, the same example
#: without them). A finding that holds them and is gone without them is that kind.
NEUTRAL: dict[str, tuple[Callable[[Steps], bool], Callable[[Steps], Steps]]] = {
    CR: (lambda steps: _holds(steps, b"\r"), without_cr),
    TABS: (lambda steps: _holds(steps, b"\t"), without_tabs),
}


def owners(kind: str, last_command: str) -> tuple[str, ...]:
    """The fixed checks that report a finding of ``kind`` ending in ``last_command``: for the
    byte kinds, the undo checks on those bytes own the findings that end in ``undo_edit``."""
    checks = REPORTED_BY.get(kind, ())
    if kind in (TABS, CR):
        bytes_check, undo_check = checks
        return (undo_check, UNDO_CHECK) if last_command == "undo_edit" else (bytes_check,)
    return checks
