"""Editor checks that nothing outside the edited span changes, byte for byte, across commands.

Each check plants a file with one property (tabs, CRLF, final newline or its absence, non-UTF-8
bytes, a very long line, a large file) and runs view, view_range, str_replace and insert on it.
After every command the file must hold exactly the bytes the edit implies; a refused command must
leave it untouched. undo_edit is not part of them (one defect, one check: an editor whose undo is
broken fails ``editor.undo_edit.restores_previous_content``; undo on files with such bytes is
exercised by the model check, ``editor.model.agrees_with_reference_model``). (An editor may refuse, say, a file that is
not UTF-8; it must never corrupt it.)
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.catalog import CheckSkipped, Severity, check
from conformance.properties.editor_model import lines_of
from conformance.session import ToolResult, ToolSession

from .editor_support import (
    EDITOR_TYPES,
    FAMILY,
    SRC_BYTES,
    fail,
    insert_input,
    plant,
    read,
    refused,
    show,
    takes_insert_text,
)


def _first_difference(a: bytes, b: bytes) -> int:
    """The index of the first byte where ``a`` and ``b`` differ (the shorter one's length when
    it is a prefix of the other). Halving slices compared in C: a byte-by-byte loop in Python
    was most of the large-file check's CPU (issue 21)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class _Inserted:
    """Accepts ``data`` with ``text`` inserted whole at some line boundary, nothing else changed.

    Where the text goes, and how its final ``\\n`` is treated, are the insert checks' business
    (``editor.insert.*``); here only the untouched bytes matter. So every documented-compatible
    form of the inserted text is accepted: as written, with the file's CRLF, and followed by one
    more terminator (the split-lines convention of the vendor's reference editor).
    """

    def __init__(self, data: bytes, line: int, text: bytes) -> None:
        crlf = text.replace(b"\n", b"\r\n")
        self.data = data
        self.texts = (text, crlf, text + b"\n", text + b"\r\n", crlf + b"\r\n")
        offset = sum(len(x) for x in lines_of(data)[:line])
        self.expected = data[:offset] + text + data[offset:]

    def __contains__(self, got: object) -> bool:
        if not isinstance(got, bytes):
            return False
        if got in self._appended():
            return True
        for t in self.texts:
            if len(got) != len(self.data) + len(t):
                continue
            i = _first_difference(got, self.data)
            for j in range(max(0, i - len(t)), i + 1):
                if (got[j:j + len(t)] == t and got[:j] == self.data[:j]
                        and got[j + len(t):] == self.data[j:]):
                    return True
        return False

    def _appended(self) -> set[bytes]:
        """At the end of a file without a final newline, a terminator may go before the text
        (so the file still ends without one: the reference editor's way)."""
        if not self.data or self.data.endswith(b"\n"):
            return set()
        t = self.texts[0]
        base = t[:-2] if t.endswith(b"\r\n") else t[:-1] if t.endswith(b"\n") else t
        return {self.data + eol + base + end for eol in (b"\n", b"\r\n")
                for end in (b"", b"\n", b"\r\n")}

    def __iter__(self) -> Iterator[bytes]:
        return iter([self.expected])


def _survives(s: ToolSession, name: str, data: bytes, token: str, *, insert_line: int = 1,
              view_range: tuple[int, int] = (1, 2), may_refuse: bool = False,
              size_may_refuse: bool = False) -> list[str]:
    """Run every command on a planted file; ``token`` occurs exactly once in ``data``.

    Every command must succeed, unless ``may_refuse`` (a file that is not UTF-8 may be refused)
    or ``size_may_refuse`` (a very large file or line: an editor may decline a whole-file view and
    point to view_range, or refuse any command past a size limit it sets, with an error; the docs
    set no size limit either way, and a refusal loses nothing). A refused command
    must leave the file untouched. Returns the steps that were refused.
    """
    refusals: list[str] = []
    path = plant(s, name, data)
    steps: list[tuple[str, dict[str, object], set[bytes]]] = [
        ("view", {"command": "view", "path": path}, {data}),
        ("view with view_range", {"command": "view", "path": path,
                                  "view_range": list(view_range)}, {data}),
    ]
    replaced = data.replace(token.encode(), b"EDITED", 1)
    steps.append(("str_replace", {"command": "str_replace", "path": path, "old_str": token,
                                  "new_str": "EDITED"}, {replaced}))
    current = data
    for what, tool_input, allowed in steps:
        r = s.call(tool_input)
        lenient = may_refuse or size_may_refuse
        was_refused = _refused(s, r, what, lenient, tool_input)
        refusals += [what] if was_refused else []
        _after(s, path, what, was_refused, current, allowed)
        current = read(path) or b""
    text = b"INSERTED LINE\n"
    tool_input = insert_input(s, path, insert_line, text.decode())
    r = s.call(tool_input)
    what = f"insert after line {insert_line}"
    was_refused = _refused(s, r, what, may_refuse or size_may_refuse, tool_input)
    refusals += ["insert"] if was_refused else []
    _after(s, path, what, was_refused, current, _Inserted(current, insert_line, text))
    return refusals


def _size_convention(what: str, refusals: list[str]) -> str:
    if not refusals:
        return f"{what}: every command handled"
    return f"{what}: refused with an error (a size limit): {', '.join(refusals)}; file untouched"


#: The check that owns each command, should it fail on a plain file too.
_OWNERS = {"view": "editor.view.returns_file_content",
           "str_replace": "editor.str_replace.replaces_exactly_one_match",
           "insert": "editor.insert.in_middle"}


def _refused(s: ToolSession, r: ToolResult, what: str, may_refuse: bool,
             tool_input: dict[str, object]) -> bool:
    if refused(r) and not may_refuse:
        if not _works_on_plain_file(s, tool_input):
            command = str(tool_input["command"])
            owner = _OWNERS.get(command, "another check")
            if command == "insert" and not takes_insert_text(s):
                owner = "editor.insert.accepts_insert_text"
            raise CheckSkipped(f"{what} is refused on a plain file too: {owner} reports that")
        fail(s, f"{what} was refused on a file it must handle (the same command works on a "
                "plain file)", received=r, documented="a successful tool_result")
    return refused(r)


def _works_on_plain_file(s: ToolSession, tool_input: dict[str, object]) -> bool:
    """Whether the command that was refused succeeds on a plain three-line text file (so that a
    setup step failing everywhere is reported by its own check, not by this one)."""
    command = str(tool_input["command"])
    path = plant(s, f"control-{command}.txt", b"one\nTOKEN\nthree\n")
    probe: dict[str, object] = {"command": command, "path": path}
    if "view_range" in tool_input:
        probe["view_range"] = [1, 2]
    if command == "str_replace":
        probe.update(old_str="TOKEN", new_str="EDITED")
    if command == "insert":
        probe = insert_input(s, path, 1, "INSERTED LINE\n")
    return not refused(s.call(probe))


def _after(s: ToolSession, path: str, what: str, was_refused: bool, before: bytes,
           allowed: set[bytes] | _Inserted) -> None:
    got = read(path)
    if was_refused:
        if got != before:
            fail(s, f"a refused {what} changed the file", received=got, documented=before)
        return
    if got not in allowed:
        want = next(iter(allowed))
        fail(s, f"after {what}, bytes outside the edited span changed ({_where(got, want)})",
             received=got, documented=want)


def _where(got: bytes | None, want: bytes) -> str:
    if got is None:
        return "the file is gone"
    i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
             min(len(got), len(want)))
    return (f"first difference at byte {i}: got {show(got[i:i + 16])}, expected "
            f"{show(want[i:i + 16])}; {len(got)} bytes vs {len(want)}")


@check("editor.bytes.tabs_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="tabs survive every command: never expanded to spaces.")
def tabs(s: ToolSession) -> None:
    _survives(s, "tabs.py", b"def f():\n\treturn 1\n\tTOKEN = 2\n\t\tx\t=\t3\n", "TOKEN")


@check("editor.bytes.crlf_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="CRLF line endings survive every command: no newline translation.")
def crlf(s: ToolSession) -> None:
    _survives(s, "dos.txt", b"first\r\nTOKEN line\r\nthird\r\nfourth\r\n", "TOKEN")
    _survives(s, "mixed.txt", b"unix\ndos\r\nTOKEN\nlone\rcarriage\r\n", "TOKEN")
    # a CRLF line inserted at the end of a CRLF file without a final newline (issue 36); only
    # the insert: what other commands do to the missing final newline is
    # trailing_newline_preserved's
    data = b"first\r\nTOKEN line\r\nlast"
    path = plant(s, "dos_open.txt", data)
    tool_input = insert_input(s, path, 3, "INSERTED LINE\r\n")
    what = "insert of a CRLF line at the end of a file without a final newline"
    was_refused = _refused(s, s.call(tool_input), what, False, tool_input)
    _after(s, path, what, was_refused, data, _Inserted(data, 3, b"INSERTED LINE\r\n"))


@check("editor.bytes.trailing_newline_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="a final newline, its absence, and trailing blank lines survive every command.")
def trailing_newline(s: ToolSession) -> None:
    _survives(s, "with.txt", b"one\nTOKEN\nthree\n", "TOKEN")
    _survives(s, "without.txt", b"one\nTOKEN\nthree", "TOKEN")
    _survives(s, "blank_tail.txt", b"one\nTOKEN\nthree\n\n\n", "TOKEN")


@check("editor.bytes.non_utf8_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="bytes that are not UTF-8 survive every command (editing or refusing, never "
                 "corrupting).")
def non_utf8(s: ToolSession) -> None:
    _survives(s, "latin1.txt", b"caf\xe9 cr\xe8me\nTOKEN here\n\xff\xfe raw bytes \x80\x81\nend\n",
              "TOKEN", may_refuse=True)


@check("editor.bytes.long_lines_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="very long lines (hundreds of kilobytes) survive every command, unwrapped and "
                 "untruncated; a command may be refused with an error (a size limit) if it "
                 "leaves the file untouched.")
def long_lines(s: ToolSession) -> str:
    long = b"x" * 150_000 + b" TOKEN " + b"y" * 150_000
    return _size_convention("long lines", _survives(
        s, "long.txt", b"short\n" + long + b"\nafter\n", "TOKEN", size_may_refuse=True))


@check("editor.bytes.large_file_preserved", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_BYTES,
       statement="a large file (about 1.6 MB, 25,000 lines) survives every command intact; a "
                 "command may be refused with an error (a size limit) if it leaves the file "
                 "untouched.")
def large_file(s: ToolSession) -> str:
    n = 25_000
    body = b"".join(b"%06d the quick brown fox jumps over the lazy dog, then again.\n" % i
                    for i in range(n))
    data = body + b"TOKEN near the end\n" + b"last line\n"
    return _size_convention("large file", _survives(
        s, "large.txt", data, "TOKEN", insert_line=n // 2,
        view_range=(n // 2 - 1, n // 2 + 1), size_may_refuse=True))
