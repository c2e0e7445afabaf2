"""The documented text editor semantics as a pure in-memory model.

State is ``files`` (path → bytes) and, for the versions with ``undo_edit``, a per-path undo stack.
:meth:`EditorModel.expect` says what a conformant editor may answer to one tool input: a list of
acceptable :class:`Outcome` (error or success, and the file's bytes afterwards). Where the docs
leave a choice open, every documented-compatible outcome is listed and
:meth:`EditorModel.commit` follows the one the subject chose:

- ``create`` over an existing file: overwrite or refuse;
- ``view_range`` outside the file: refuse, or answer (refusing is what
  ``editor.view.view_range_out_of_range_is_error``, a SHOULD, asks); an end past the last line
  may also be clamped;
- overlapping matches of ``old_str``, or a ``new_str`` equal to it: replace or refuse;
- ``insert``: the editor may add a line terminator (``\n`` or ``\r\n``) so the inserted text
  forms whole lines, and a ``new_str`` ending in ``\n`` may be inserted as written or split on
  ``\n`` (an extra empty line: the vendor's reference); ``insert_line`` = line count + 1 on a
  file ending in ``\n`` may be refused or accepted (a phantom empty last line);
- ``undo_edit`` of a ``create``: restore what was there before, leave the file as created (editors
  that record the created text as the first version), or refuse;
- ``undo_edit`` right after an ``undo_edit``: restore the edit before (several levels), or refuse
  (one level: seed 001's own design keeps one ``{file_path}.backup``, and "undo_edit" reverts
  "pengeditan terakhir", the last edit);
- ``str_replace`` with an empty ``old_str`` on an empty file: replace (seed 001's sample counts
  matches with ``content.count(old_text)``, which is 1 there) or refuse.

Outcomes that tell these conventions apart carry a ``note`` (topic, variant): the model check
reports the conventions the subject followed.

Sources: seed 001 "Perintah tool editor teks" (Text editor tool commands), "Tangani kesalahan"
(Handle errors); PROTOCOL.md §3.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
    #: Undo bookkeeping: push the previous content on success (``"push"``; ``"push-create"``
    #: for a ``create``) or pop (``"pop"``).
    undo: str = ""
    #: The convention this outcome follows, where the docs leave a choice: (topic, variant).
    note: tuple[str, str] | None = None


@dataclass
class Expectation:
    path: str
    outcomes: list[Outcome]

    def matching(self, error: bool, after: bytes | None) -> Outcome | None:
        """The first outcome the answer fits (None: it fits none)."""
        found = self.all_matching(error, after)
        return found[0] if found else None

    def all_matching(self, error: bool, after: bytes | None) -> list[Outcome]:
        return [o for o in self.outcomes
                if o.error == error and (o.after == after or (o.after is None and after == b""
                                                              and o.undo == "pop"))]


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


#: Convention topics (see the module docstring).
INSERT_NEWLINE = "insert of a new_str ending in \\n"
AS_WRITTEN = "inserted as written"
SPLIT = "split on \\n (an extra empty line follows)"
PHANTOM = "insert_line = line count + 1 on a file ending in \\n (or an empty file)"
VIEW_PAST_END = "view_range ending past the last line"
UNDO_CREATE = "undo_edit of a create"
CREATE_EXISTING = "create over an existing file"
UNDO_DEPTH = "undo_edit after an undo_edit"
EMPTY_OLD_STR = "str_replace of an empty old_str on an empty file"


def insert_outcomes(data: bytes, line: int, text: bytes) -> dict[bytes, tuple[str, str] | None]:
    """Every documented-compatible result of inserting ``text`` after line ``line``, with the
    convention it shows (None where the conventions agree).

    The bytes before and after the insertion point never change; the editor may add one line
    terminator (``\\n`` or ``\\r\\n``) so the inserted text forms whole lines, and a text
    ending in ``\\n`` may be split on ``\\n`` (the vendor's reference), which leaves an extra
    line break after it.
    """
    lines = lines_of(data)
    offset = sum(len(x) for x in lines[:line])
    before, after = data[:offset], data[offset:]
    eols = (b"\n", b"\r\n")
    results: dict[bytes, tuple[str, str] | None] = {}
    if before and not before.endswith(b"\n"):  # end of a file without a final newline
        for e in eols:
            results[before + e + text] = None
            if not text.endswith(b"\n"):
                results.update((before + e + text + e2, None) for e2 in eols)
            else:
                stripped = text[:-2] if text.endswith(b"\r\n") else text[:-1]
                results[before + e + stripped] = None
        return results
    if not text.endswith(b"\n"):
        if not after:
            results[before + text + after] = None
        results.update((before + text + e + after, None) for e in eols)
        return results
    split = {before + text + e + after for e in eols}
    results.update((b, (INSERT_NEWLINE, SPLIT)) for b in split)
    written = before + text + after
    results[written] = None if written in split else (INSERT_NEWLINE, AS_WRITTEN)
    return results


@dataclass
class EditorModel:
    tool_type: str
    files: dict[str, bytes] = field(default_factory=dict)
    #: Per path: (the content before an edit, the text a ``create`` wrote or None for any other
    #: edit), oldest first.
    undo: dict[str, list[tuple[bytes | None, bytes | None]]] = field(default_factory=dict)
    #: Per path: undo_edits since its last edit (a second one may be refused: one level).
    undone: dict[str, int] = field(default_factory=dict)

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
            new = Outcome(False, str(tool_input["file_text"]).encode(), undo="push-create")
            if cur is None:
                return Expectation(path, [new])
            return Expectation(path, [replace(new, note=(CREATE_EXISTING, "overwrites")),
                                      replace(err, note=(CREATE_EXISTING, "refused"))])
        if command == "undo_edit":
            stack = self.undo.get(path)
            if not self.has_undo or not stack:
                return Expectation(path, [err])
            if self.undone.get(path, 0):
                # Several levels, or one (the seed's own .backup design): a deeper undo refused.
                e = self._undo(path, cur, stack)
                return Expectation(path, [replace(o, note=o.note or (UNDO_DEPTH, "restores the "
                                                                     "edit before (several "
                                                                     "levels)"))
                                          for o in e.outcomes] + [
                    Outcome(True, cur, undo="clear", note=(UNDO_DEPTH, "refused (one level)"))])
            return self._undo(path, cur, stack)
        if cur is None:
            return Expectation(path, [err])
        if command == "str_replace":
            return Expectation(path, self._str_replace(cur, tool_input) or [err])
        if command == "insert":
            return Expectation(path, self._insert(cur, tool_input))
        return Expectation(path, [err])

    def _undo(self, path: str, cur: bytes | None,
              stack: list[tuple[bytes | None, bytes | None]]) -> Expectation:
        previous, created = stack[-1]
        if created is None:
            return Expectation(path, [Outcome(False, previous, undo="pop")])
        # "As created" is the text that create wrote, not the file as it is now: after a
        # later create over it was undone the same way, they differ (the vendor's reference
        # keeps each created text as a version and writes it back).
        return Expectation(path, [
                Outcome(False, previous, undo="pop", note=(UNDO_CREATE, "restores the state "
                                                                        "before it")),
                Outcome(False, created, undo="pop", note=(UNDO_CREATE,
                                                          "leaves the file as created")),
            Outcome(True, cur, undo="pop", note=(UNDO_CREATE, "refused"))])

    def _view(self, cur: bytes, view_range: Any) -> list[Outcome]:
        lines = [x.rstrip(b"\n").decode("utf-8", "replace") for x in lines_of(cur)]
        if view_range is None:
            return [Outcome(False, cur, tuple(lines))]
        start, end = view_range
        n = len(lines)
        if 1 <= start <= n and (end == -1 or start <= end <= n):
            return [Outcome(False, cur, tuple(lines[start - 1:None if end == -1 else end]))]
        if 1 <= start <= n and end > n:
            # An end past the last line: refusing and clamping are both seen in the field.
            return [Outcome(True, cur, note=(VIEW_PAST_END, "refused")),
                    Outcome(False, cur, tuple(lines[start - 1:]),
                            note=(VIEW_PAST_END, "clamped to the last line"))]
        # Outside the file or reversed: refusing is a SHOULD (its own check); an answer is not
        # judged here, as long as the file is left alone.
        return [Outcome(True, cur), Outcome(False, cur)]

    def _str_replace(self, cur: bytes, tool_input: dict[str, Any]) -> list[Outcome]:
        old = str(tool_input["old_str"]).encode()
        new = str(tool_input.get("new_str") or "").encode()
        if not old and not cur:
            # content.count("") is 1 in an empty file: the seed's sample replaces; refusing an
            # empty old_str is conformant too.
            return [Outcome(False, new, undo="push", note=(EMPTY_OLD_STR, "replaced")),
                    Outcome(True, cur, note=(EMPTY_OLD_STR, "refused"))]
        if not old or occurrences(cur, old, overlapping=False) != 1:
            return []
        at = cur.find(old)
        replaced = Outcome(False, cur[:at] + new + cur[at + len(old):], undo="push")
        if occurrences(cur, old, overlapping=True) > 1 or old == new:
            # Overlapping occurrences ("aa" in "aaa") are several locations, and replacing a
            # text by itself changes nothing: refusing is conformant too.
            return [replaced, Outcome(True, cur)]
        return [replaced]

    def _insert(self, cur: bytes, tool_input: dict[str, Any]) -> list[Outcome]:
        line = tool_input["insert_line"]
        fields = registry.TOOLS[self.tool_type].insert_text_fields or ("new_str",)
        text = next((tool_input[f] for f in fields if f in tool_input), None)
        n = len(lines_of(cur))
        if text is None or not isinstance(line, int) or isinstance(line, bool):
            return [Outcome(True, cur)]
        raw = str(text).encode()
        variants = [raw]
        if b"\r\n" in cur:
            # An editor may give the inserted lines the file's own CRLF endings.
            variants.append(raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        results: dict[bytes, tuple[str, str] | None] = {}
        refusal = Outcome(True, cur)
        if 0 <= line <= n:
            for v in variants:
                _merge(results, insert_outcomes(cur, line, v))
        elif line == n + 1 and (cur.endswith(b"\n") or not cur):
            # A phantom empty last line (``text.split("\\n")`` counts one, and one line in an
            # empty file): appending after it, or after the last real line, loses nothing;
            # refusing is conformant too.
            for v in variants:
                _merge(results, insert_outcomes(cur, n, v))
                for e in (b"\n", b"\r\n"):
                    _merge(results, insert_outcomes(cur + e, n + 1, v))
            results = {b: (PHANTOM, "accepted (a phantom empty last line)")
                       for b in results}
            refusal = Outcome(True, cur, note=(PHANTOM, "refused"))
        else:
            return [refusal]
        outcomes = [Outcome(False, b, undo="push", note=note)
                    for b, note in sorted(results.items())]
        # Nothing to insert: refusing is conformant too.
        return outcomes + [refusal] if not raw or refusal.note else outcomes

    def commit(self, path: str, outcome: Outcome) -> None:
        """Move the model to ``outcome`` (one of the expectation's outcomes)."""
        previous = self.files.get(path)
        if outcome.after is None:
            self.files.pop(path, None)
        else:
            self.files[path] = outcome.after
        if not self.has_undo:
            return
        if outcome.undo.startswith("push") and not outcome.error:
            created = outcome.after if outcome.undo == "push-create" else None
            self.undo.setdefault(path, []).append((previous, created))
            self.undone[path] = 0
        elif outcome.undo == "pop":  # a refused undo of a create drops it too
            self.undo[path].pop()
            self.undone[path] = self.undone.get(path, 0) + 1
        elif outcome.undo == "clear":  # one level: nothing older is kept
            self.undo[path] = []

    def plant(self, path: str, data: bytes) -> None:
        """A file written behind the editor's back (no undo entry)."""
        self.files[path] = data


def _merge(into: dict[bytes, tuple[str, str] | None],
           more: dict[bytes, tuple[str, str] | None]) -> None:
    """Add ``more``; bytes two conventions both produce tell them apart no more (note None)."""
    for b, note in more.items():
        if b in into and into[b] != note:
            into[b] = None
        else:
            into.setdefault(b, note)
