"""The documented text editor semantics as a pure in-memory model.

State is ``files`` (path → bytes) and, for the versions with ``undo_edit``, a per-path undo stack.
:meth:`EditorModel.expect` says what a conformant editor may answer to one tool input: a list of
acceptable :class:`Outcome` (error or success, and the file's bytes afterwards). Where the docs
leave a choice open (``create`` over an existing file, a ``view_range`` end past the last line,
overlapping matches, the terminator added around an inserted text), every documented-compatible
outcome is listed; :meth:`EditorModel.commit` then follows the one the subject chose.

Sources: seed 001 "Perintah tool editor teks", "Tangani kesalahan"; PROTOCOL.md §3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator import registry

#: Marks a file that does not exist (after an outcome).
MISSING = None


@dataclass(frozen=True)
class Outcome:
    """One acceptable answer: ``error`` or not, and the path's bytes afterwards (None: absent)."""

    error: bool
    after: bytes | None
    #: For a view: the lines (decoded for display) the result must show, in order.
    shows: tuple[str, ...] = ()
    #: Undo bookkeeping: push the previous content (True) or pop (``"pop"``) on success.
    undo: str = ""


@dataclass
class Expectation:
    path: str
    outcomes: list[Outcome]

    def matching(self, error: bool, after: bytes | None) -> Outcome | None:
        for o in self.outcomes:
            if o.error == error and (o.after == after or (o.after is None and after == b""
                                                          and o.undo == "pop")):
                return o
        return None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def lines_of(data: bytes) -> list[bytes]:
    """Lines with their terminators; a line ends only at ``\\n``."""
    parts = data.split(b"\n")
    out = [x + b"\n" for x in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def occurrences(data: bytes, needle: bytes, *, overlapping: bool) -> int:
    n, at = 0, data.find(needle)
    while at != -1:
        n += 1
        at = data.find(needle, at + (1 if overlapping else len(needle)))
    return n


def insert_outcomes(data: bytes, line: int, text: bytes) -> set[bytes]:
    """Every documented-compatible result of inserting ``text`` after line ``line``.

    The bytes before and after the insertion point never change; the editor may add one line
    terminator (``\\n`` or ``\\r\\n``) so the inserted text forms whole lines.
    """
    lines = lines_of(data)
    offset = sum(len(x) for x in lines[:line])
    before, after = data[:offset], data[offset:]
    eols = (b"\n", b"\r\n")
    results: set[bytes] = set()
    if before and not before.endswith(b"\n"):  # end of a file without a final newline
        for e in eols:
            results.add(before + e + text)
            if not text.endswith(b"\n"):
                results.update(before + e + text + e2 for e2 in eols)
            else:
                stripped = text[:-2] if text.endswith(b"\r\n") else text[:-1]
                results.add(before + e + stripped)
        return results
    if text.endswith(b"\n") or not after:
        results.add(before + text + after)
    if not text.endswith(b"\n"):
        results.update(before + text + e + after for e in eols)
    return results


@dataclass
class EditorModel:
    tool_type: str
    files: dict[str, bytes] = field(default_factory=dict)
    undo: dict[str, list[bytes | None]] = field(default_factory=dict)

    @property
    def has_undo(self) -> bool:
        return "undo_edit" in registry.TOOLS[self.tool_type].command_names

    def expect(self, tool_input: dict[str, Any]) -> Expectation:
        e = self._expect(tool_input)
        cur = self.files.get(e.path)
        if cur is not None and not _is_utf8(cur) and not any(o.error for o in e.outcomes):
            # A file that is not UTF-8 may be refused (never corrupted): PROTOCOL.md §3 says
            # nothing about encodings, and the SDK's own tools refuse such files.
            e.outcomes.append(Outcome(True, cur))
        return e

    def _expect(self, tool_input: dict[str, Any]) -> Expectation:
        path = str(tool_input["path"])
        cur = self.files.get(path)
        err = Outcome(True, cur)
        command = tool_input["command"]
        if command == "view":
            if cur is None:
                return Expectation(path, [err])
            return Expectation(path, self._view(cur, tool_input.get("view_range")))
        if command == "create":
            new = Outcome(False, str(tool_input["file_text"]).encode(), undo="push")
            return Expectation(path, [new] if cur is None else [new, err])
        if command == "undo_edit":
            stack = self.undo.get(path)
            if not self.has_undo or not stack:
                return Expectation(path, [err])
            return Expectation(path, [Outcome(False, stack[-1], undo="pop")])
        if cur is None:
            return Expectation(path, [err])
        if command == "str_replace":
            return Expectation(path, self._str_replace(cur, tool_input) or [err])
        if command == "insert":
            return Expectation(path, self._insert(cur, tool_input))
        return Expectation(path, [err])

    def _view(self, cur: bytes, view_range: Any) -> list[Outcome]:
        lines = [x.rstrip(b"\n").decode("utf-8", "replace") for x in lines_of(cur)]
        if view_range is None:
            return [Outcome(False, cur, tuple(lines))]
        start, end = view_range
        n = len(lines)
        if n == 0 and start == 1 and end in (-1, 0, 1):
            # A range over an empty file: an empty view or an error are both seen in the field.
            return [Outcome(True, cur), Outcome(False, cur, ())]
        if not 1 <= start <= n or (end != -1 and end < start):
            return [Outcome(True, cur)]
        if end == -1 or end <= n:
            return [Outcome(False, cur, tuple(lines[start - 1:None if end == -1 else end]))]
        # An end past the last line: refusing and clamping are both seen in the field.
        return [Outcome(True, cur), Outcome(False, cur, tuple(lines[start - 1:]))]

    def _str_replace(self, cur: bytes, tool_input: dict[str, Any]) -> list[Outcome]:
        old = str(tool_input["old_str"]).encode()
        new = str(tool_input.get("new_str") or "").encode()
        if not old or occurrences(cur, old, overlapping=False) != 1:
            return []
        at = cur.find(old)
        replaced = Outcome(False, cur[:at] + new + cur[at + len(old):], undo="push")
        if occurrences(cur, old, overlapping=True) > 1:
            # Overlapping occurrences ("aa" in "aaa") are several locations: refusing is
            # conformant too.
            return [replaced, Outcome(True, cur)]
        return [replaced]

    def _insert(self, cur: bytes, tool_input: dict[str, Any]) -> list[Outcome]:
        line = tool_input["insert_line"]
        fields = registry.TOOLS[self.tool_type].insert_text_fields
        text = next((tool_input[f] for f in fields if f in tool_input), None)
        if text is None or not isinstance(line, int) or not 0 <= line <= len(lines_of(cur)):
            return [Outcome(True, cur)]
        raw = str(text).encode()
        results = insert_outcomes(cur, line, raw)
        if b"\r\n" in cur:
            # An editor may give the inserted lines the file's own CRLF endings.
            crlf = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            results |= insert_outcomes(cur, line, crlf)
        outcomes = [Outcome(False, b, undo="push") for b in sorted(results)]
        # Nothing to insert: refusing is conformant too.
        return outcomes + [Outcome(True, cur)] if not raw else outcomes

    def commit(self, path: str, outcome: Outcome) -> None:
        """Move the model to ``outcome`` (one of the expectation's outcomes)."""
        previous = self.files.get(path)
        if outcome.after is None:
            self.files.pop(path, None)
        else:
            self.files[path] = outcome.after
        if outcome.error or not self.has_undo:
            return
        if outcome.undo == "push":
            self.undo.setdefault(path, []).append(previous)
        elif outcome.undo == "pop":
            self.undo[path].pop()

    def plant(self, path: str, data: bytes) -> None:
        """A file written behind the editor's back (no undo entry)."""
        self.files[path] = data
