"""Shared vocabulary of the editor checks: tool types, sources, inputs, verdict helpers.

Checks decide *whether* the subject refused with :func:`refused` (``is_error`` or a text starting
with ``Error``), so that a subject flagging errors wrongly fails one check only
(``editor.errors.flagged_is_error``), not every check that provokes an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NoReturn

from conformance.catalog import CheckFailure, CheckSkipped
from conformance.checks.planted import plant as plant
from conformance.checks.planted import plant_directory as plant_directory
from conformance.checks.planted import plant_symlink as plant_symlink
from conformance.checks.planted import reproducer as reproducer
from conformance.properties.editor_model import insert_outcomes, lines_of
from conformance.reproducers import (
    Replayed,
    materialize,
    relativize_value,
    replay_fresh_subject,
    verdict_of,
)
from conformance.session import ToolResult, ToolSession
from simulator import registry
from simulator.sources import SEED_TEXT_EDITOR, protocol, seed

FAMILY = "editor"

EDITOR_TYPES: tuple[str, ...] = tuple(sorted(t.type for t in registry.of_family("text_editor")))
UNDO_TYPES = tuple(t for t in EDITOR_TYPES if "undo_edit" in registry.TOOLS[t].command_names)
NO_UNDO_TYPES = tuple(t for t in EDITOR_TYPES if t not in UNDO_TYPES)
MAX_CHARACTERS_TYPES = tuple(t for t in EDITOR_TYPES
                             if "max_characters" in registry.TOOLS[t].definition_fields)
INSERT_TEXT_TYPES = tuple(t for t in EDITOR_TYPES
                          if "insert_text" in registry.TOOLS[t].insert_text_fields)

# Sources: seed 001 section headings, PROTOCOL.md §3 entries.
SRC_COMMANDS = seed(SEED_TEXT_EDITOR, "Perintah tool editor teks")
SRC_VIEW = seed(SEED_TEXT_EDITOR, "view")
SRC_VIEW_RANGE_ENDS = seed(SEED_TEXT_EDITOR, "view", "I")
SRC_LINE_NUMBERS = seed(SEED_TEXT_EDITOR, "Nomor baris")
SRC_STR_REPLACE = seed(SEED_TEXT_EDITOR, "str_replace")
SRC_UNIQUE = seed(SEED_TEXT_EDITOR, "Tangani penggantian teks unik dengan hati-hati")
SRC_CREATE = seed(SEED_TEXT_EDITOR, "create")
SRC_INSERT = seed(SEED_TEXT_EDITOR, "insert")
SRC_UNDO = seed(SEED_TEXT_EDITOR, "undo_edit")
SRC_CHANGELOG = seed(SEED_TEXT_EDITOR, "Log perubahan")
SRC_ERRORS = seed(SEED_TEXT_EDITOR, "Tangani kesalahan")
SRC_SECURITY = seed(SEED_TEXT_EDITOR, "Implementasikan langkah-langkah keamanan")
SRC_VALIDATION = seed(SEED_TEXT_EDITOR, "Implementasikan tool editor teks")
SRC_ERROR_TEXTS = protocol("3. Text editor tool: Documented example texts")
SRC_MAX_CHARACTERS = protocol("3. Text editor tool: Type/name pairs (max_characters)")
SRC_INSERT_TEXT = protocol("3. Text editor tool: Commands (insert_text)")
SRC_BYTES = seed(SEED_TEXT_EDITOR, "str_replace", "I")


def p(s: ToolSession, *parts: str) -> str:
    """An absolute path inside the working directory (DESIGN.md: the suite sends absolute paths)."""
    return str(Path(s.workdir).joinpath(*parts))


def read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def refused(r: ToolResult) -> bool:
    """The subject declined the command: an error result, or text that says it is an error."""
    return r.is_error or r.timed_out or r.says_error()


def insert_field(tool_type: str) -> str:
    """The key an ``insert`` carries its text in: the one the version's docs name
    (``insert_text`` on text_editor_20250728, ``new_str`` before). Never both: a tool input
    holds only what the version's docs name (docs/checks.md)."""
    return (registry.TOOLS[tool_type].insert_text_fields or ("new_str",))[0]


def insert_input(s: ToolSession, path: str, line: int, text: str) -> dict[str, Any]:
    """An ``insert`` carrying the text in the field the version's docs name (:func:`insert_field`)."""
    return {"command": "insert", "path": path, "insert_line": line,
            insert_field(s.tool_type): text}


#: The insert conventions the docs leave open (seed 001 "insert" says only "the text to insert";
#: its own example's ``new_str`` ends in ``\n``). Reported by ``editor.insert.newline_convention``.
AS_WRITTEN = "new_str inserted as written"
SPLIT_LINES = "split on \\n: an extra empty line after new_str ending in \\n"


def split_lines_insert(data: bytes, line: int, text: bytes) -> bytes:
    """What the vendor's reference editor leaves: ``"\\n".join(lines[:line] + text.split("\\n")
    + lines[line:])`` with the file's lines split on ``"\\n"``."""
    lines = data.split(b"\n")
    return b"\n".join(lines[:line] + text.split(b"\n") + lines[line:])


def insert_conventions(data: bytes, line: int, text: bytes) -> dict[bytes, str]:
    """Every documented-compatible result of inserting ``text`` after line ``line`` of ``data``,
    with the convention it follows: the text as written (the editor may add a terminator so it
    forms whole lines), or split into lines and joined (an extra empty line after a text that ends
    in ``\\n``; the terminator may be the file's own, ``\\r\\n``). Nothing else may change."""
    outcomes: Any = insert_outcomes(data, line, text)
    labels = outcomes if isinstance(outcomes, dict) else dict.fromkeys(outcomes)
    out: dict[bytes, str] = {}
    for result, label in sorted(labels.items()):  # label: (topic, convention) or None
        is_split = label is not None and str(label[-1]).lower().startswith("split")
        out[result] = SPLIT_LINES if is_split else AS_WRITTEN
    out.setdefault(split_lines_insert(data, line, text), SPLIT_LINES)
    if b"\r\n" in data and text.endswith(b"\n") and 0 <= line < len(lines_of(data)):
        offset = sum(len(x) for x in lines_of(data)[:line])
        out.setdefault(data[:offset] + text + b"\r\n" + data[offset:], SPLIT_LINES)
    return out


def insert_convention(s: ToolSession, path: str, before: bytes, line: int, text: str,
                      what: str) -> str:
    """Fail unless ``path`` holds one of the :func:`insert_conventions` results; return which."""
    allowed = insert_conventions(before, line, text.encode())
    got = read(path)
    if got not in allowed:
        fail(s, f"{what} left the file wrong ({_diff(got, next(iter(allowed)))})", received=got,
             documented=next(iter(allowed)))
    assert got is not None
    return allowed[got]


def show(value: Any, limit: int = 400) -> Any:
    """A JSON-friendly, size-bounded rendering for ``received`` / ``documented``: tool results as
    ``{"content", "is_error"}``, bytes as their ``repr``, long text cut with its length noted."""
    if isinstance(value, ToolResult):
        return {"content": _cut(value.text, limit), "is_error": value.is_error,
                **({"raised": value.raised} if value.raised else {}),
                **({"timed_out": True} if value.timed_out else {})}
    if isinstance(value, bytes):
        return _cut(repr(value), limit)
    if isinstance(value, str):
        return _cut(value, limit)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= limit else _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def fail(s: ToolSession, message: str, *, received: Any, documented: Any,
         watch: tuple[str, ...] = ()) -> NoReturn:
    """Raise the check failure: what was received, what the docs say, and the reproducer,
    verified first (:func:`verify`; ``watch``: more paths whose state is part of the failure).

    The runner prints ``received`` and ``documented`` under the message (Received / Documented).
    """
    inputs, setup = reproducer(s)
    raise CheckFailure(message, received=show(received), documented=show(documented),
                       reproducer=inputs, setup=setup,
                       reproduced=verify(s, inputs, setup, received, watch))


def _state(workdir: Path, paths: list[str]) -> dict[str, Any]:
    """What the named paths hold, relative to the working directory: bytes, a directory's
    entries, a symlink's target, or None (absent)."""
    out: dict[str, Any] = {}
    for path in paths:
        p = Path(path)
        key = relativize_value(path, workdir)
        if p.is_symlink():
            out[key] = ("symlink", relativize_value(os.readlink(p), workdir))
        elif p.is_dir():
            out[key] = ("dir", sorted(x.name for x in p.iterdir()))
        else:
            out[key] = read(path)
    return out


def _shown(r: ToolResult, workdir: Path) -> tuple[bool, str]:
    return refused(r), str(relativize_value(r.text, workdir))


def verify(s: ToolSession, inputs: list[dict[str, Any]], setup: list[dict[str, Any]],
           received: Any = None, watch: tuple[str, ...] = ()) -> str:
    """Replay the reproducer exactly as printed on a fresh subject
    (:func:`conformance.reproducers.replay_fresh_subject`): it reproduced when every path it
    names (and those in ``watch``) ends up as it was at the failure, and, when the failure
    is an answer (``received`` a :class:`ToolResult`), the last answer is the same (error or
    not, and its text, directories written as placeholders). Returns the result's
    ``reproduced`` value."""
    workdir = Path(s.workdir)
    paths = sorted({str(x["path"]) for x in [*inputs, *setup] if "path" in x} | set(watch))
    printed_inputs = relativize_value(inputs, workdir)
    printed_setup = relativize_value(setup, workdir)
    printed_paths = relativize_value(paths, workdir)
    before = _state(workdir, paths)
    answer = _shown(received, workdir) if isinstance(received, ToolResult) else None

    def judge(replayed: Replayed) -> bool:
        again = _state(replayed.workdir, materialize(printed_paths, replayed.workdir))
        if {relativize_value(k, replayed.workdir): v for k, v in again.items()} != before:
            return False
        if answer is None:
            return True
        return bool(replayed.results) and _shown(replayed.results[-1],
                                                 replayed.workdir) == answer

    return verdict_of(replay_fresh_subject(s, printed_inputs, printed_setup, judge))


def expect_success(s: ToolSession, r: ToolResult, what: str) -> None:
    if refused(r):
        if s.history and s.history[-1].get("command") == "insert" and not takes_insert_text(s):
            raise CheckSkipped(f"{what} was refused, and so is every insert carrying "
                               f"{insert_field(s.tool_type)}: editor.insert.accepts_insert_text "
                               "reports that")
        fail(s, f"{what} was refused", received=r, documented="a successful tool_result")


def takes_insert_text(s: ToolSession) -> bool:
    """Whether an ``insert`` in the key the version names works on a plain file (False: the
    subject knows another key only, which ``editor.insert.accepts_insert_text`` reports)."""
    if insert_field(s.tool_type) != "insert_text":
        return True
    path = plant(s, "control-insert.txt", b"one\ntwo\n")
    return not refused(s.call(insert_input(s, path, 1, "INSERTED\n")))


def setup_success(r: ToolResult, what: str, owner: str) -> None:
    """A setup step this check does not own must succeed; if it does not, the check skips and
    names the check that reports it (one defect, one failing check)."""
    if refused(r):
        raise CheckSkipped(f"{what} was refused ({_cut(r.text, 200)!r}); {owner} reports that")


def expect_refused(s: ToolSession, r: ToolResult, what: str, documented: str) -> None:
    if not refused(r):
        fail(s, f"{what} was accepted", received=r, documented=documented)


def expect_bytes(s: ToolSession, path: str, expected: bytes | None, after: str) -> None:
    got = read(path)
    if got != expected:
        fail(s, f"after {after}, {Path(path).name} is not what the edit should leave "
                f"({_diff(got, expected)})",
             received=got, documented=expected)


def _diff(got: bytes | None, want: bytes | None) -> str:
    if got is None or want is None:
        return "file missing" if got is None else "file should not exist"
    i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
             min(len(got), len(want)))
    return (f"first difference at byte {i}: got {got[i:i + 12]!r}, expected {want[i:i + 12]!r}; "
            f"{len(got)} bytes vs {len(want)}")


def numbered_lines(n: int, prefix: str = "line") -> bytes:
    """``n`` distinct lines: ``line-001 alpha\\n`` ..., easy to find in any view format."""
    return b"".join(f"{prefix}-{i:03d} alpha\n".encode() for i in range(1, n + 1))


def shown_markers(text: str, n: int, prefix: str = "line") -> list[int]:
    """Which of the :func:`numbered_lines` markers appear in a view result."""
    return [i for i in range(1, n + 1) if f"{prefix}-{i:03d} alpha" in text]
