"""Editor checks of the editing commands: ``str_replace``, ``create``, ``insert``, ``undo_edit``."""

from __future__ import annotations

from conformance.catalog import CheckSkipped, Severity, check
from conformance.session import ToolSession

from .editor_support import (
    EDITOR_TYPES,
    FAMILY,
    INSERT_TEXT_TYPES,
    NO_UNDO_TYPES,
    SRC_CHANGELOG,
    SRC_CREATE,
    SRC_INSERT,
    SRC_INSERT_TEXT,
    SRC_STR_REPLACE,
    SRC_UNDO,
    SRC_UNIQUE,
    expect_bytes,
    expect_refused,
    expect_success,
    fail,
    insert_convention,
    insert_input,
    p,
    plant,
    read,
    refused,
    setup_success,
)

THREE = b"alpha\nbeta\ngamma\n"


# -- str_replace ------------------------------------------------------------------------------------

@check("editor.str_replace.replaces_exactly_one_match", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_STR_REPLACE,
       statement="str_replace with exactly one match replaces that text and nothing else.")
def str_replace_one(s: ToolSession) -> None:
    path = plant(s, "f.py", b"def f(x):\n    return x\n\nprint(f(1))\n")
    cases = [("    return x", "    return x + 1", b"def f(x):\n    return x + 1\n\nprint(f(1))\n"),
             ("x + 1\n\nprint", "x\nprint", b"def f(x):\n    return x\nprint(f(1))\n"),
             ("print(f(1))\n", "", b"def f(x):\n    return x\n")]
    for old, new, want in cases:
        r = s.call({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
        expect_success(s, r, "str_replace with exactly one match")
        expect_bytes(s, path, want, f"str_replace of {old!r}")


@check("editor.str_replace.rejects_no_match", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_UNIQUE,
       statement="str_replace whose old_str does not occur is refused and the file is untouched.")
def str_replace_none(s: ToolSession) -> None:
    path = plant(s, "f.txt", THREE)
    r = s.call({"command": "str_replace", "path": path, "old_str": "delta", "new_str": "x"})
    expect_refused(s, r, "str_replace with no match",
                   "Error: No match found for replacement. Please check your text and try again.")
    expect_bytes(s, path, THREE, "a refused str_replace")


@check("editor.str_replace.rejects_multiple_matches", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_UNIQUE,
       statement="str_replace whose old_str occurs several times is refused and the file is "
                 "untouched.")
def str_replace_several(s: ToolSession) -> None:
    # three matches (the documented example's count), and two (an editor refusing only more
    # than two replaces the first of two)
    for n, data in ((3, b"x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"), (2, b"x = 1\ny = 2\nx = 1\n")):
        path = plant(s, f"f{n}.py", data)
        r = s.call({"command": "str_replace", "path": path, "old_str": "x = 1",
                    "new_str": "x = 9"})
        expect_refused(s, r, f"str_replace with {n} matches",
                       f"Error: Found {n} matches for replacement text. Please provide more "
                       "context to make a unique match.")
        expect_bytes(s, path, data, "a refused str_replace with several matches")


@check("editor.str_replace.whitespace_exact", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_STR_REPLACE,
       statement="old_str matches exactly, whitespace and indentation included: no fuzzy or "
                 "normalised matching.")
def str_replace_whitespace(s: ToolSession) -> None:
    data = b"def f():\n    return 1\n  value = 3   \n"
    path = plant(s, "f.py", data)
    for old in ("return  1", "\treturn 1", "        return 1", "value = 3\n", "    value = 3"):
        s.call({"command": "str_replace", "path": path, "old_str": old, "new_str": "X"})
        if read(path) != data:
            fail(s, f"old_str {old!r} is not in the file byte for byte, yet the file changed",
                 received=read(path), documented=data)
    r = s.call({"command": "str_replace", "path": path, "old_str": "  value = 3   \n",
                "new_str": "  value = 4 \n"})
    expect_success(s, r, "str_replace with the exact whitespace")
    expect_bytes(s, path, b"def f():\n    return 1\n  value = 4 \n", "an exact-whitespace edit")


# -- create -----------------------------------------------------------------------------------------

@check("editor.create.writes_file_text", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_CREATE,
       statement="create makes a new file whose bytes are exactly file_text (UTF-8).")
def create_new(s: ToolSession) -> None:
    for name, text in (("new.py", "import os\n\ndef main():\n\tprint('é ✓')\n"),
                       ("no_newline.txt", "last line without newline"),
                       ("empty.txt", "")):
        path = p(s, name)
        r = s.call({"command": "create", "path": path, "file_text": text})
        expect_success(s, r, f"create of the new file {name}")
        expect_bytes(s, path, text.encode(), f"create of {name}")


# -- insert -----------------------------------------------------------------------------------------

def _insert_case(s: ToolSession, line: int, where: str) -> str:
    """Two inserts at ``line``; every documented-compatible result is accepted (the text as
    written, or split into lines: :func:`~.editor_support.insert_conventions`)."""
    path = plant(s, f"{where}.txt", THREE)
    current = THREE
    seen = []
    for text in ("INSERTED\n", "two\nlines"):
        r = s.call(insert_input(s, path, line, text))
        expect_success(s, r, f"insert at line {line} ({where})")
        seen.append(insert_convention(s, path, current, line, text,
                                      f"insert after line {line} ({where})"))
        current = read(path) or b""
    return f"insert: {seen[0]}"


@check("editor.insert.at_start", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_INSERT,
       statement="insert with insert_line 0 puts the text at the start of the file.")
def insert_at_start(s: ToolSession) -> str:
    return _insert_case(s, 0, "start")


@check("editor.insert.in_middle", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_INSERT,
       statement="insert with insert_line N puts the text after line N (1-based).")
def insert_in_middle(s: ToolSession) -> str:
    return _insert_case(s, 2, "middle")


@check("editor.insert.at_end", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_INSERT,
       statement="insert with insert_line equal to the line count appends after the last line.")
def insert_at_end(s: ToolSession) -> str:
    path = plant(s, "end.txt", THREE)
    r = s.call(insert_input(s, path, 3, "omega\n"))
    expect_success(s, r, "insert after the last line")
    return "insert: " + insert_convention(s, path, THREE, 3, "omega\n", "insert after the last line")


@check("editor.insert.newline_convention", family=FAMILY, severity=Severity.INFO,
       applies_to=EDITOR_TYPES, source=SRC_INSERT,
       statement="reports how insert treats a new_str ending in \"\\n\": inserted as written, or "
                 "split into lines (an extra empty line after it, as the vendor's reference "
                 "editor does); anything else corrupts the file.")
def insert_newline_convention(s: ToolSession) -> str:
    # Seed 001's own insert example ends its new_str with "\n"; the docs do not say whether that
    # "\n" ends the inserted line or starts an empty one. Both are accepted everywhere else.
    path = plant(s, "f.txt", THREE)
    r = s.call(insert_input(s, path, 1, "NEW\n"))
    if refused(r):
        expect_bytes(s, path, THREE, "a refused insert")
        raise CheckSkipped("the insert was refused (editor.insert.in_middle reports that)")
    return "insert: " + insert_convention(s, path, THREE, 1, "NEW\n",
                                          "insert of \"NEW\\n\" after line 1")


@check("editor.insert.rejects_past_end", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_INSERT,
       statement="insert with insert_line clearly past the end of the file (or negative) is "
                 "refused and the file is untouched; line count + 1 on a file ending in \"\\n\" "
                 "(a phantom empty last line) may append.")
def insert_past_end(s: ToolSession) -> str:
    path = plant(s, "f.txt", THREE)
    # Line 4 of a 3-line file ending in "\n": editors that split on "\n" (the vendor's reference
    # among them) count an empty 4th line and append there. Nothing is lost: a convention.
    r = s.call(insert_input(s, path, 4, "nope\n"))
    got = read(path) or b""
    if refused(r):
        expect_bytes(s, path, THREE, "a refused insert at line 4")
        observed = "insert_line = line count + 1 refused"
    elif got.startswith(THREE) and got[len(THREE):].strip(b"\r\n") == b"nope":
        observed = "insert_line = line count + 1 appends (a phantom empty last line)"
    else:
        fail(s, "insert at line 4 of a 3-line file (ending in \"\\n\") was accepted but did not "
                "append", received=got, documented=THREE + b"nope\n")
    path = plant(s, "g.txt", THREE)
    for line in (5, 10, -1):
        r = s.call(insert_input(s, path, line, "nope\n"))
        expect_refused(s, r, f"insert at line {line} of a 3-line file",
                       "an error: insert_line must be between 0 and 3")
        expect_bytes(s, path, THREE, f"a refused insert at line {line}")
    return observed


@check("editor.insert.accepts_insert_text", family=FAMILY, severity=Severity.MUST,
       applies_to=INSERT_TEXT_TYPES, source=SRC_INSERT_TEXT,
       statement="on text_editor_20250728, insert takes its text from insert_text.")
def insert_text_field(s: ToolSession) -> None:
    path = plant(s, "f.txt", THREE)
    r = s.call({"command": "insert", "path": path, "insert_line": 1, "insert_text": "NEW\n"})
    if refused(r):  # not expect_success: it would defer to this very check
        fail(s, "insert carrying insert_text was refused", received=r,
             documented="a successful tool_result")
    insert_convention(s, path, THREE, 1, "NEW\n", "insert with insert_text")


# -- undo_edit --------------------------------------------------------------------------------------

@check("editor.undo_edit.restores_previous_content", family=FAMILY, severity=Severity.MUST,
       applies_to=tuple(t for t in EDITOR_TYPES if t not in NO_UNDO_TYPES), source=SRC_UNDO,
       statement="undo_edit reverts the last edit of the file (str_replace, insert); a second "
                 "undo_edit reverts the edit before it, or is refused with the file untouched "
                 "(one level, as the text editor docs' own .backup design keeps).")
def undo_restores(s: ToolSession) -> str:
    path = plant(s, "f.txt", THREE)
    r = s.call({"command": "str_replace", "path": path, "old_str": "beta", "new_str": "BETA"})
    setup_success(r, "str_replace before undo_edit", "editor.str_replace.replaces_exactly_one_match")
    after_replace = read(path)
    r = s.call(insert_input(s, path, 0, "top\n"))
    setup_success(r, "insert before undo_edit", "editor.insert.at_start")
    r = s.call({"command": "undo_edit", "path": path})
    expect_success(s, r, "undo_edit after an insert")
    expect_bytes(s, path, after_replace, "undo_edit of the insert")
    r = s.call({"command": "undo_edit", "path": path})
    if refused(r):
        # One level (seed 001's backup_file keeps one {file_path}.backup): refused, untouched.
        expect_bytes(s, path, after_replace, "a refused second undo_edit")
        return "undo_edit: one level (a second undo refused)"
    expect_bytes(s, path, THREE, "undo_edit of the str_replace")
    return "undo_edit: several levels"


@check("editor.undo_edit.refused_without_undo", family=FAMILY, severity=Severity.SHOULD,
       applies_to=NO_UNDO_TYPES, source=SRC_CHANGELOG,
       statement="text_editor_20250429 and later have no undo_edit: it should be refused (as "
                 "the docs' sample handler does), leaving the file untouched.")
def undo_refused(s: ToolSession) -> None:
    path = plant(s, "f.txt", THREE)
    r = s.call({"command": "str_replace", "path": path, "old_str": "beta", "new_str": "BETA"})
    setup_success(r, "str_replace before undo_edit", "editor.str_replace.replaces_exactly_one_match")
    edited = read(path)
    r = s.call({"command": "undo_edit", "path": path})
    expect_refused(s, r, f"undo_edit on {s.tool_type}",
                   "an error: undo_edit was removed in text_editor_20250429 (the text "
                   "editor docs, Changelog)")
    expect_bytes(s, path, edited, "a refused undo_edit")
