"""Editor checks of ``undo_edit`` on files whose bytes are easy to lose: tabs, CRLF line ends.

Real tools keep their undo history or backup in a form that loses bytes (seed 001's own
``backup_file`` copies with ``open(file_path, 'r')``, which turns CRLF into LF). Each check edits
a planted file three ways (``str_replace``, ``insert``, ``create`` over it) and undoes each edit
at once (one level: what every undo convention does). The first undo must give back the exact
bytes from before the edit.

One defect, one check: an edit that itself changed the file's tabs or line ends is
``editor.bytes.tabs_preserved``'s / ``crlf_preserved``'s (that case is not judged here); an
undo broken on plain files is ``editor.undo_edit.restores_previous_content``'s (skip naming it).
``undo_edit`` of a ``create`` may restore the file from before it, leave the file as created
(editors that keep each created text as a version), or be refused with the file untouched.
"""

from __future__ import annotations

from conformance.catalog import CheckSkipped, Severity, check
from conformance.session import ToolSession

from .editor_bytes import _Inserted
from .editor_support import (
    FAMILY,
    SRC_UNDO,
    UNDO_TYPES,
    expect_bytes,
    fail,
    insert_input,
    plant,
    read,
    refused,
    show,
)

PLAIN = b"alpha\nbeta\ngamma\n"


def _plain_undo_works(s: ToolSession) -> bool:
    """Does one str_replace then one undo_edit give a plain file back (the undo check's case)?"""
    path = plant(s, "control-undo.txt", PLAIN)
    if refused(s.call({"command": "str_replace", "path": path, "old_str": "beta",
                       "new_str": "BETA"})):
        return True  # str_replace is another check's; nothing to say about undo here
    r = s.call({"command": "undo_edit", "path": path})
    return not refused(r) and read(path) == PLAIN


def _undo_keeps(s: ToolSession, what: str, name: str, data: bytes, owner: str) -> str:
    """Edit a planted file with ``data`` three ways, undo each at once: the exact bytes must
    come back. Returns how an undo of a create was answered."""
    judged, create_convention = 0, ""
    edits = [
        ("str_replace", {"command": "str_replace", "path": "", "old_str": "TOKEN",
                         "new_str": "EDITED"}, data.replace(b"TOKEN", b"EDITED", 1)),
        ("insert", None, None),
    ]
    for i, (command, tool_input, expected) in enumerate(edits):
        path = plant(s, f"{i}-{name}", data)
        if tool_input is None:
            tool_input = insert_input(s, path, 1, "INSERTED LINE\n")
        tool_input = {**tool_input, "path": path}
        r = s.call(tool_input)
        after = read(path)
        exact = (after == expected if expected is not None
                 else after in _Inserted(data, 1, b"INSERTED LINE\n"))
        if refused(r) or not exact:
            continue  # the edit itself is its own checks' business (one defect, one check)
        judged += 1
        r = s.call({"command": "undo_edit", "path": path})
        if refused(r):
            fail(s, f"undo_edit right after a {command} of a file with {what} was refused",
                 received=r, documented="a successful undo_edit restoring the file's bytes")
        expect_bytes(s, path, data, f"undo_edit of a {command} of a file with {what}")
    # create over the file: the undo may restore it, leave it as created, or be refused.
    path = plant(s, f"2-{name}", data)
    created = data.replace(b"TOKEN", b"CREATED")
    r = s.call({"command": "create", "path": path, "file_text": created.decode("utf-8")})
    if not refused(r) and read(path) == created:
        judged += 1
        r = s.call({"command": "undo_edit", "path": path})
        got = read(path)
        if refused(r):
            create_convention = "refused"
            if got != created:
                fail(s, f"a refused undo_edit of a create changed a file with {what}",
                     received=show(got), documented=show(created))
        elif got == data:
            create_convention = "restores the file from before it"
        elif got == created:
            create_convention = "leaves the file as created"
        else:
            fail(s, f"undo_edit of a create over a file with {what} left neither the file from "
                    "before it nor the created text", received=got,
                 documented=f"{show(data)} (or the created text {show(created)})")
    if not judged:
        raise CheckSkipped(f"every edit of the file with {what} changed bytes outside its "
                           f"span or was refused: {owner} and the edit checks report that")
    return f"undo_edit of a create: {create_convention or 'not judged'}"


def _undo_case(s: ToolSession, what: str, name: str, data: bytes, owner: str) -> str:
    if not _plain_undo_works(s):
        raise CheckSkipped("undo_edit does not restore a plain file either: "
                           "editor.undo_edit.restores_previous_content reports that")
    return _undo_keeps(s, what, name, data, owner)


@check("editor.undo_edit.restores_tabs", family=FAMILY, severity=Severity.MUST,
       applies_to=UNDO_TYPES, source=SRC_UNDO,
       statement="undo_edit right after a str_replace, insert or create of a file with tabs "
                 "restores its exact bytes (tabs never expanded by the undo history or backup).")
def undo_restores_tabs(s: ToolSession) -> str:
    return _undo_case(s, "tabs", "tabs.py",
                      b"def f():\n\treturn 1\n\tTOKEN = 2\n\t\tx\t=\t3\n", "editor.bytes.tabs_preserved")


@check("editor.undo_edit.restores_crlf", family=FAMILY, severity=Severity.MUST,
       applies_to=UNDO_TYPES, source=SRC_UNDO,
       statement="undo_edit right after a str_replace, insert or create of a file with CRLF "
                 "line ends restores its exact bytes (no newline translation in the undo history "
                 "or backup).")
def undo_restores_crlf(s: ToolSession) -> str:
    return _undo_case(s, "CRLF line ends", "dos.txt",
                      b"first\r\nTOKEN line\r\nthird\r\nlone\rcarriage\r\n",
                      "editor.bytes.crlf_preserved")
