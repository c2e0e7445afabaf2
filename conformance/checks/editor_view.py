"""Editor checks of ``view``: file content, line numbers, ``view_range``, directories,
``max_characters``."""

from __future__ import annotations

import random
import re
import struct
import zlib

from conformance.catalog import CheckSkipped, Severity, check
from conformance.properties.editor_view_forms import LINE_NUMBER_PREFIX
from conformance.session import ToolSession

from .editor_support import (
    EDITOR_TYPES,
    FAMILY,
    MAX_CHARACTERS_TYPES,
    SRC_LINE_NUMBERS,
    SRC_MAX_CHARACTERS,
    SRC_VIEW,
    SRC_VIEW_RANGE_ENDS,
    expect_refused,
    expect_success,
    fail,
    numbered_lines,
    plant,
    read,
    refused,
    shown_markers,
)

N = 12


@check("editor.view.returns_file_content", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="view of a file returns every line of the file, in order.")
def view_returns_file_content(s: ToolSession) -> None:
    path = plant(s, "lines.txt", numbered_lines(N))
    r = s.call({"command": "view", "path": path})
    expect_success(s, r, "view of an existing file")
    if shown_markers(r.text, N) != list(range(1, N + 1)) or not _in_order(r.text, N):
        fail(s, "view did not show every line of the file in order", received=r,
             documented=f"all {N} lines, line-001 ... line-{N:03d}")


def _in_order(text: str, n: int) -> bool:
    at = [text.find(f"line-{i:03d} alpha") for i in range(1, n + 1)]
    return all(a < b for a, b in zip(at, at[1:], strict=False))


#: A numbered line in any common form (``1: ``, ``     1\t``, ``1 | ``, ``L1: ``, ``1→``, ...:
#: :data:`~conformance.properties.editor_view_forms.LINE_NUMBER_PREFIX`); seed 001 "Nomor baris"
#: shows one form and fixes none.
_NUMBERED = re.compile(r"^" + LINE_NUMBER_PREFIX + r"line-(\d{3}) alpha", re.M)


@check("editor.view.line_numbers", family=FAMILY, severity=Severity.SHOULD,
       applies_to=EDITOR_TYPES, source=SRC_LINE_NUMBERS,
       statement="view prefixes each line with its 1-based line number, in any common form "
                 "(\"1: ...\", cat -n's tab form, \"1 | ...\", \"L1: ...\", \"1→...\").")
def view_line_numbers(s: ToolSession) -> None:
    path = plant(s, "lines.txt", numbered_lines(N))
    r = s.call({"command": "view", "path": path})
    expect_success(s, r, "view of an existing file")
    pairs = [(int(a), int(b)) for a, b in _NUMBERED.findall(r.text)]
    if not pairs or any(a != b for a, b in pairs):
        fail(s, "view did not number each line with its own 1-based line number", received=r,
             documented="1: line-001 alpha\\n2: line-002 alpha\\n... (the text editor docs, Line numbers)")


@check("editor.view.view_range_one_based_inclusive", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="view_range [start, end] is 1-based and includes both ends.")
def view_range_one_based(s: ToolSession) -> None:
    path = plant(s, "lines.txt", numbered_lines(N))
    for start, end in ((3, 5), (1, 1), (N, N)):
        r = s.call({"command": "view", "path": path, "view_range": [start, end]})
        expect_success(s, r, f"view with view_range [{start}, {end}]")
        got = shown_markers(r.text, N)
        if got != list(range(start, end + 1)):
            fail(s, f"view_range [{start}, {end}] showed lines {got}", received=r,
                 documented=f"lines {list(range(start, end + 1))} (1-based, inclusive)")


@check("editor.view.view_range_minus_one_reads_to_end", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="view_range [start, -1] shows from start through the last line of the file.")
def view_range_minus_one(s: ToolSession) -> None:
    path = plant(s, "lines.txt", numbered_lines(N))
    for start in (4, 1, N):
        r = s.call({"command": "view", "path": path, "view_range": [start, -1]})
        expect_success(s, r, f"view with view_range [{start}, -1]")
        got = shown_markers(r.text, N)
        if got != list(range(start, N + 1)):
            fail(s, f"view_range [{start}, -1] showed lines {got}", received=r,
                 documented=f"lines {start}..{N}: -1 means read to the end of the file")


@check("editor.view.view_range_out_of_range_is_error", family=FAMILY, severity=Severity.SHOULD,
       applies_to=EDITOR_TYPES, source=SRC_VIEW_RANGE_ENDS,
       statement="a view_range that starts past the end of the file, or ends before it starts, "
                 "is refused with an error.")
def view_range_out_of_range(s: ToolSession) -> None:
    path = plant(s, "lines.txt", numbered_lines(N))
    # Clearly invalid ranges only: like editor.insert.rejects_past_end, line count + 1 of a file
    # ending in "\n" is left alone (editors that split on "\n" count an empty last line there).
    for vr in ([N + 5, -1], [N + 5, N + 9], [6, 3]):
        r = s.call({"command": "view", "path": path, "view_range": vr})
        expect_refused(s, r, f"view with the out-of-range view_range {vr}",
                       f"an error: the file has {N} lines")


@check("editor.view.directory_lists_entries", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="view of a directory lists its files and subdirectories (at least the first "
                 "level).")
def view_directory(s: ToolSession) -> None:
    plant(s, "src/main.py", b"print(1)\n")
    plant(s, "src/pkg/util.py", b"x = 1\n")
    plant(s, "src/notes.md", b"# notes\n")
    r = s.call({"command": "view", "path": str(s.workdir / "src")})
    expect_success(s, r, "view of a directory")
    # Depth 2 (pkg/util.py) is what published editors list, but the docs only say "list".
    missing = [n for n in ("main.py", "pkg", "notes.md") if n not in r.text]
    if missing:
        fail(s, f"the directory listing misses {missing}", received=r,
             documented="a listing of the directory's entries (the text editor docs, view: it lists "
                        "the contents of a directory)")


@check("editor.view.max_characters_truncates", family=FAMILY, severity=Severity.MUST,
       applies_to=MAX_CHARACTERS_TYPES, source=SRC_MAX_CHARACTERS,
       statement="with max_characters set, view output is cut to that length (a short "
                 "truncation notice may follow).")
def view_max_characters(s: ToolSession) -> None:
    limit = getattr(s, "max_characters", None)
    if not limit:
        raise CheckSkipped("the subject declares no max_characters; declare the value its tool "
                           "definition uses to run this check")
    lines = max(40, limit // 10)
    path = plant(s, "big.txt", numbered_lines(lines, "row") + b"THE-LAST-LINE\n")
    r = s.call({"command": "view", "path": path})
    expect_success(s, r, "view of a file longer than max_characters")
    if "THE-LAST-LINE" in r.text or len(r.text) > limit + 300:
        fail(s, f"view output is {len(r.text)} characters with max_characters={limit}",
             received=r, documented=f"at most {limit} characters of file content (docs/protocol-notes.md § 3)")
    if "row-001 alpha" not in r.text:
        fail(s, "the truncated view does not start with the beginning of the file", received=r,
             documented="the first max_characters characters of the view output")


def _png() -> bytes:
    """A valid 1x1 RGB PNG (NUL bytes in its chunk lengths, compressed data after)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00")) + chunk(b"IEND", b""))


BINARY_FILES: tuple[tuple[str, bytes], ...] = (
    ("nul.bin", b"text\x00with\x00NUL\x00bytes\n\x00\x00\x00\nend\n"),
    ("random.bin", random.Random(13).randbytes(4096)),
    ("pixel.png", _png()),
)


@check("editor.view.binary_file_answered", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="view of a binary file (NUL bytes, random bytes, a PNG) is answered with a "
                 "result (its content or an error), without crashing or hanging the tool; the "
                 "file is untouched and the next command still works.")
def view_binary_file(s: ToolSession) -> str:
    # Claude views whatever a directory listing shows, images and build outputs included. Showing
    # it (escaped, replaced) or refusing it are both fine; crashing, hanging or rewriting it is not.
    ok = plant(s, "ok.txt", numbered_lines(3))
    seen = []
    for name, data in BINARY_FILES:
        path = plant(s, name, data)
        faults_before = len(getattr(s, "faults", None) or [])
        r = s.call({"command": "view", "path": path})
        faults = (getattr(s, "faults", None) or [])[faults_before:]
        if r.timed_out:
            fail(s, f"view of the binary file {name} did not answer in time (the tool hung)",
                 received=r, documented="a result: the content or an error")
        if faults:
            fail(s, f"view of the binary file {name} crashed the tool: {'; '.join(faults)}",
                 received=r, documented="a result: the content or an error")
        if read(path) != data:
            fail(s, f"view of the binary file {name} changed it", received=read(path),
                 documented=data)
        seen.append("refused" if refused(r) else "shown")
        r = s.call({"command": "view", "path": ok})
        if refused(r) or shown_markers(r.text, 3) != [1, 2, 3]:
            fail(s, f"after viewing the binary file {name}, view of a text file no longer works",
                 received=r, documented="the text file's 3 lines")
    kinds = sorted(set(seen))
    return "binary files: " + (kinds[0] if len(kinds) == 1 else "some shown, some refused")
