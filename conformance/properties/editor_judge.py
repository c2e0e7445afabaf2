"""One tool input judged against the editor model, and what a disagreement is.

:func:`judge` sends one input to the subject and compares its answer and the file's bytes
afterwards with :meth:`~conformance.properties.editor_model.EditorModel.expect` (every
documented-compatible outcome), then makes the model follow the outcome the subject chose, noting
the convention where the docs leave a choice open. A mismatch raises a
:class:`ModelDisagreement`: the command and what went wrong, in the docs' terms (never an
escaping difference), with the steps so far (tool inputs, and :class:`Plant` s: files written
behind the editor's back).

The exploration that drives it is :mod:`conformance.properties.editor_machine`; the reproducers
made from its findings are :mod:`conformance.properties.editor_reproducers`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.properties.editor_model import (
    EditorModel,
    Expectation,
    Outcome,
    lines_of,
    occurrences,
)
from conformance.properties.editor_owners import (
    INSERT_PAST_END,
    MISSING_FILE,
    NO_MATCH,
    SEVERAL_MATCHES,
    VIEW,
    VIEW_RANGE,
    kind_of,
)
from conformance.properties.editor_view_forms import TAB_TOPIC, readable_texts, shown_as
from conformance.reproducers import setup_step
from conformance.session import ToolResult, ToolSession, faults_of
from conformance.wording import one_of, plural, quoted, shown_bytes, shown_text

#: A view result longer than this is only searched in its first part.
MAX_VIEW_SCAN = 1_000_000


class ModelDisagreement(AssertionError):
    """The subject answered a command differently from every documented-compatible outcome.

    ``key`` names the kind of disagreement (command and what went wrong); disagreements with
    different keys are distinct bugs. Each key has a subclass of its own (:func:`disagreement`),
    so that hypothesis shrinks each one separately."""

    key: str = "disagreement"

    def __init__(self, message: str, received: str, documented: str,
                 steps: list[Step] | None = None, base: Path | None = None) -> None:
        super().__init__(f"{message}\nReceived: {received}\nDocumented: {documented}")
        self.message, self.received, self.documented = message, received, documented
        self.steps: list[Step] = list(steps or [])
        #: The directory the steps' paths are in (the example's).
        self.base = base

    #: Whether the (shrunk) reproducer showed the disagreement again when replayed on a fresh
    #: subject: ``verified``, ``did not reproduce``, or empty (not replayed).
    reproduced: str = ""

    @property
    def reproducer(self) -> list[dict[str, Any]]:
        """The tool inputs, in order (planted files are :attr:`setup`, not tool calls)."""
        return [step for step in self.steps if not isinstance(step, Plant)]

    @property
    def setup(self) -> list[dict[str, Any]]:
        """The files planted behind the editor's back, each before the input it precedes
        (:func:`conformance.reproducers.setup_step`)."""
        out, n = [], 0
        for step in self.steps:
            if isinstance(step, Plant):
                out.append(setup_step(n + 1, step.path, data=step.data))
            else:
                n += 1
        return out

    def moved(self, onto: Path) -> ModelDisagreement:
        """The same disagreement with its paths in ``onto`` instead of :attr:`base`."""
        if self.base is None:
            return self
        def text(s: str) -> str:
            return s.replace(str(self.base), str(onto))

        out = type(self)(text(self.message), text(self.received), text(self.documented),
                         [moved_step(x, self.base, onto) for x in self.steps], onto)
        out.reproduced = self.reproduced
        out.__traceback__ = self.__traceback__
        return out


_KINDS: dict[str, type[ModelDisagreement]] = {}


def disagreement(key: str, message: str, received: str, documented: str,
                 steps: list[Step], base: Path | None = None) -> ModelDisagreement:
    """A :class:`ModelDisagreement` of the subclass for ``key``."""
    cls = _KINDS.get(key)
    if cls is None:
        cls = _KINDS.setdefault(key, type("ModelDisagreement", (ModelDisagreement,),
                                          {"key": key}))
    return cls(message, received, documented, list(steps), base)


@dataclass(frozen=True)
class Plant:
    """A file written behind the editor's back."""

    path: str
    data: bytes

    @property
    def text(self) -> str | None:
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None


Step = Plant | dict[str, Any]


def moved_step(step: Step, base: Path, onto: Path) -> Step:
    def moved(path: str) -> str:
        try:
            rel = os.path.relpath(path, base)
        except ValueError:
            return path
        return path if rel.startswith("..") else str(onto / rel)

    if isinstance(step, Plant):
        return Plant(moved(step.path), step.data)
    return {**step, "path": moved(str(step["path"]))}


def _refused(r: ToolResult) -> bool:
    return r.is_error or r.says_error()


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


#: What the run saw the subject do where the docs leave a choice: topic -> variants.
Conventions = dict[str, set[str]]


def judge(s: ToolSession, model: EditorModel, tool_input: dict[str, Any], steps: list[Step],
           *, base: Path | None = None, seen: Conventions | None = None) -> bool:
    """Send one input and compare with the model (which follows); True when it succeeded."""
    command = str(tool_input["command"])
    e = model.expect(tool_input)
    steps.append(tool_input)
    before = len(faults_of(s))
    r = s.call(tool_input)
    faults = faults_of(s)[before:]
    if r.timed_out or faults:
        what = "hung" if r.timed_out else "faulted"
        raise disagreement(f"{command}: the subject {what}",
                           f"the subject {what} answering {command}: {'; '.join(faults)}",
                           "; ".join(faults) or "no answer in time", "an answer",
                           steps, base)
    refused = _refused(r)
    after = _read(e.path)
    fits = e.all_matching(refused, after)
    if not fits:
        allowed = [("error" if o.error else "success", o.after) for o in e.outcomes]
        statuses = {o.error for o in e.outcomes}
        if refused not in statuses:
            what = "refused a valid command" if refused else "accepted an invalid command"
        else:
            what = "left the wrong file content"
        kind = kind_of(tool_input, model.files.get(e.path), refused, after,
                       [o.after for o in e.outcomes if o.error == refused])
        raise disagreement(
            f"{command}: {what}: {kind}", _headline(command, what, kind, tool_input,
                                                    model.files.get(e.path), after, e, refused),
            f"{'error' if refused else 'success'} {shown_text(_decoded(r.text), 200)}; file now "
            f"{shown_bytes(after)}",
            one_of([f"{status}, file {shown_bytes(data, 150)}" for status, data in allowed]),
            steps, base)
    outcome = min(fits, key=lambda o: o.after != after)  # an exact match first
    limit = getattr(s, "max_characters", None)
    tabs = None
    if outcome.shows and not refused and not (limit and len(r.text) >= limit):
        tabs = _expect_shown(r.text, outcome.shows, steps, base,
                             VIEW_RANGE if tool_input.get("view_range") is not None else VIEW)
    if seen is not None:
        _note(seen, fits)
        if tabs is not None:  # the renderings every view so far agrees with
            seen[TAB_TOPIC] = tabs if TAB_TOPIC not in seen else seen[TAB_TOPIC] & tabs
    model.commit(e.path, outcome)
    return not refused


def _decoded(text: str) -> str:
    """The result's text as the model reads it: a JSON document's strings decoded."""
    texts = readable_texts(text)
    return "\n".join(texts[1:]) if len(texts) > 1 else text


def _headline(command: str, what: str, kind: str, tool_input: dict[str, Any],
              before: bytes | None, after: bytes | None, e: Expectation,
              refused: bool | None = None) -> str:
    """What the subject did differently, in the docs' terms (never an escaping difference).
    The wrong content is compared with a documented result of the status the subject answered
    with (``refused``): a success that left the file as only an error would is a wrong file."""
    if what == "left the wrong file content":
        wants = [o.after for o in e.outcomes
                 if o.after is not None and (refused is None or o.error == refused)]
        want = max(wants, key=lambda w: _common_prefix(w, after or b"")) if wants else None
        return f"{command} left the wrong file content: {line_difference(after, want)}"
    if what == "refused a valid command":
        return f"{command} refused a valid command (the docs ask it to succeed)"
    old = str(tool_input.get("old_str") or "").encode()
    reason = {
        SEVERAL_MATCHES: lambda: f"old_str occurs {occurrences(before or b'', old, overlapping=False)} "
                                 "times",
        NO_MATCH: lambda: "old_str does not occur in the file",
        MISSING_FILE: lambda: "the file does not exist",
        INSERT_PAST_END: lambda: f"insert_line {tool_input.get('insert_line')} is past the end "
                                 f"({len(lines_of(before or b''))} lines)",
    }.get(kind)
    return (f"{command} accepted an invalid command (the docs ask for an error"
            + (f": {reason()})" if reason else ")"))


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def line_difference(got: bytes | None, want: bytes | None) -> str:
    """The first line where the file differs from the documented result, both decoded."""
    if got is None or want is None:
        return "the file is gone" if got is None else "the file should not exist"
    a, b = lines_of(got), lines_of(want)
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
             min(len(a), len(b)))
    def line(ls: list[bytes]) -> str:
        return quoted(ls[i].decode("utf-8", "surrogateescape")) if i < len(ls) else "no line"
    return (f"line {i + 1} is {line(a)} where the documented result has {line(b)} "
            f"({plural(len(a), 'line')} vs {len(b)})")


def _note(seen: Conventions, fits: list[Outcome]) -> None:
    notes = {o.note for o in fits}
    if len(notes) == 1 and (note := notes.pop()) is not None:
        seen.setdefault(note[0], set()).add(note[1])


def _expect_shown(text: str, shows: tuple[str, ...], steps: list[Step],
                  base: Path | None = None, kind: str = VIEW) -> set[str] | None:
    """Each line must be a whole output line (after an optional number prefix), in order; the
    result may be plain text or a JSON document whose strings hold the lines
    (:func:`~conformance.properties.editor_view_forms.readable_texts`). Returns the tab
    renderings every shown line holding a tab agrees with (None: no such line)."""
    wanted = [line.rstrip("\r") for line in shows]
    wanted = [b for b in wanted if b.strip() and "\ufffd" not in b and "\r" not in b]
    first: tuple[str, str] | None = None
    for candidate in readable_texts(text[:MAX_VIEW_SCAN]):
        missing, tabs = _find_in_order(candidate, wanted)
        if missing is None:
            return tabs
        first = first or (missing, candidate)
    assert first is not None
    missing, _ = first
    raise disagreement(
        f"view: did not show the file's lines: {kind}", f"view did not show the file's line "
        f"{quoted(missing)} (in order)", shown_text(_decoded(text), 300),
        f"the lines {', '.join(quoted(x) for x in shows)[:300]}", steps, base)


def _find_in_order(text: str, wanted: list[str]) -> tuple[str | None, set[str] | None]:
    """(The first line of ``wanted`` not shown in order, or None; the tab conventions the
    tab-holding lines agree with.)"""
    out = [x.rstrip("\r") for x in text.split("\n")]
    at = 0
    tabs: set[str] | None = None
    for body in wanted:
        found = None
        for i in range(at, len(out)):
            labels = shown_as(out[i], body)
            if labels is not None:
                found = i
                break
        if found is None:
            return body, None
        if "\t" in body and labels is not None:
            tabs = set(labels) if tabs is None else tabs & set(labels)
        at = found + 1
    return None, tabs
