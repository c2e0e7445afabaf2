"""Model-based stateful testing of an editor subject (hypothesis ``RuleBasedStateMachine``).

:func:`editor_machine` builds a state machine that drives an editor with generated commands
(create, view, view_range, str_replace, insert, undo_edit where the version has it, and files
planted behind the editor's back) and compares the subject, command by command, to
:class:`~conformance.properties.editor_model.EditorModel`, which accepts every documented-compatible
convention (and notes which one the subject followed).

:func:`explore_editor_model` runs it deterministically (the recipe of
:mod:`conformance.properties.exploration`):

- a **fixed number of examples** (``max_examples``; generation only, derandomized), never a time
  budget: the same subject gets the same examples, the same findings and the same reproducers on
  an idle or a loaded machine. Generation stops early, deterministically, once :data:`ENOUGH`
  distinct disagreements are known;
- examples run on **one subject** (a fresh directory each), replaced by a fresh one when it hung,
  exited or broke the protocol; a session that cannot spawn is reused (a fault of that one
  subject ends the run);
- every **distinct disagreement** (a :attr:`ModelDisagreement.key`: the command and what went
  wrong) is recorded with its first example and generation goes on; each is then shrunk by
  :func:`conformance.properties.exploration.shrink` (steps deleted, texts and planted bytes simplified, file
  names shortened; a count of tries, never a clock) and **verified**: replayed exactly as
  printed on a fresh subject in a fresh directory (``verified`` / ``did not reproduce``);
- findings that are defects fixed checks report are **set aside** (one defect, one check):
  each finding has a kind (:func:`~conformance.properties.editor_owners.kind_of`: several
  matches accepted, an insert at the start, a final newline added, ...), and a kind whose check
  (:data:`~conformance.properties.editor_owners.REPORTED_BY`) fails on the same subject owns the
  finding; a finding that needs tabs or CRs (gone when replayed without them) is
  ``editor.bytes.tabs_preserved``'s or ``crlf_preserved``'s (the undo checks' on those bytes
  when it ends in ``undo_edit``) when that check fails; invalid ``insert_line`` values are not
  generated at all (``editor.insert.rejects_past_end`` owns them);
- the :class:`~conformance.properties.exploration.Budget`'s time cap is a hard cap: a run that hits it is
  **incomplete** (:attr:`ModelReport.incomplete`), never a pass or a failure;
- what the subjects do when closed after the examples (a slow exit) is a note, not a finding:
  no finding without a reproducer;
- nothing reaches the terminal.

Reproducers are the tool inputs in order, with what was planted behind the editor's back stated
as setup steps (:attr:`ModelDisagreement.setup`: "before input 1, write ..."), paths in the
check's own working directory.
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import Phase
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
)

from conformance.properties.editor_model import (
    EditorModel,
    Expectation,
    Outcome,
    lines_of,
    occurrences,
)
from conformance.properties.editor_owners import (
    CRLF_CHECK,
    INSERT_PAST_END,
    MISSING_FILE,
    NEUTRAL,
    NO_MATCH,
    SEVERAL_MATCHES,
    VIEW,
    VIEW_RANGE,
    kind_of,
    owners,
)
from conformance.properties.editor_view_forms import (
    TAB_TOPIC,
    readable_texts,
    shown_as,
    tab_convention,
)
from conformance.properties.exploration import (
    EXPLORE_SHARE,
    Budget,
    Findings,
    StopExploring,
    deletions,
    explore,
    hypothesis_turn,
    quiet_settings,
    run_machine,
    shrink_finding,
    simpler_bytes,
    simpler_texts,
)
from conformance.properties.strategies import (
    edit_texts,
    file_contents,
    file_names,
    insert_texts,
    view_ranges,
)
from conformance.reproducers import setup_step
from conformance.results import NOT_REPRODUCED, VERIFIED
from conformance.session import ToolResult, ToolSession, faults_of, spawn
from simulator import registry

#: Rules per example (an edit rule sends the edit and a view): reproducers stay short.
DEFAULT_STEPS = 12
#: Examples per run: a count, never a clock.
MAX_EXAMPLES = 40
#: Distinct disagreements after which generation stops (the report shows the first ones).
ENOUGH = 3
#: Replays a finding's shrinking may use (cheap: the examples' subject, a fresh directory each).
SHRINK_TRIES = 300
#: ... for a finding that kills the subject (each try starts one, a hang costs a timeout).
SHRINK_TRIES_DEAD = 4
#: The hard time cap: :data:`~conformance.properties.exploration.BUDGET_TIMEOUTS` command timeouts, at
#: least this many seconds. Far above what the fixed work needs (a few seconds for a passing
#: editor); only a subject or machine far slower than that hits it (the run is incomplete).
MIN_CAP_SECONDS = 60.0
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
                         [_move(x, self.base, onto) for x in self.steps], onto)
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


def _move(step: Step, base: Path, onto: Path) -> Step:
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


def _judge(s: ToolSession, model: EditorModel, tool_input: dict[str, Any], steps: list[Step],
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
                                                    model.files.get(e.path), after, e),
            f"{'error' if refused else 'success'} {_decoded(r.text)[:200]!r}; file now "
            f"{after!r:.300}", f"one of {allowed!r:.600}", steps, base)
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
              before: bytes | None, after: bytes | None, e: Expectation) -> str:
    """What the subject did differently, in the docs' terms (never an escaping difference)."""
    if what == "left the wrong file content":
        wants = [o.after for o in e.outcomes if o.after is not None]
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
        return repr(ls[i].decode("utf-8", "backslashreplace")) if i < len(ls) else "no line"
    return (f"line {i + 1} is {line(a)} where the documented result has {line(b)} "
            f"({len(a)} lines vs {len(b)})")


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
        f"{missing!r} (in order)", repr(_decoded(text)[:300]), f"the lines {list(shows)!r:.300}",
        steps, base)


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


def _worn(s: ToolSession) -> bool:
    """Has the subject used half of its case deadline (a session that lives across examples
    would otherwise meet it and answer "no answer within 0s")? Then it is replaced."""
    total = getattr(s, "_case_seconds", None)
    remaining = getattr(getattr(s, "_case", None), "remaining", None)
    if not isinstance(total, int | float) or not total or not callable(remaining):
        return False
    left = remaining()
    return isinstance(left, int | float) and left < total / 2


@dataclass
class Exploration:
    """One run of the model check: the check's session, the budget, what was found and seen."""

    parent: ToolSession
    budget: Budget
    findings: Findings[ModelDisagreement] = field(default_factory=Findings)
    conventions: Conventions = field(default_factory=dict)
    #: Set when the parent session had to be reused for every example (it cannot spawn).
    shared: bool = False
    dirs: Callable[[], int] = field(default_factory=lambda: itertools.count().__next__)
    #: The subject examples and shrinking run on (a fresh directory each), and its faults when
    #: it was handed out (more: it hung, exited or broke the protocol, and is replaced).
    worker: ToolSession | None = None
    worker_faults: int = 0
    #: What subjects did when they were closed (a fault, a note): reported as notes only.
    close_notes: list[str] = field(default_factory=list)
    #: How the hypothesis run ended (see :func:`conformance.properties.exploration.explore`).
    ended: str = ""

    def _subject(self) -> ToolSession:
        """The examples' subject; a fresh one when the last one faulted (:class:`StopExploring`
        when none can start, which is a finding too, or when the one shared session faulted)."""
        if (self.worker is not None and len(faults_of(self.worker)) == self.worker_faults
                and not _worn(self.worker)):
            return self.worker
        if self.worker is not None:
            if self.shared:
                raise StopExploring("subject faulted")  # no other subject
            self.retire(self.worker)
        where = Path(self.parent.workdir) / f"subject-{self.dirs()}"
        where.mkdir(parents=True, exist_ok=True)
        s = self._spawn(where)
        if s is None:
            self.shared = True
            s = self.parent
        self.worker, self.worker_faults = s, len(faults_of(s))
        return s

    def _spawn(self, where: Path) -> ToolSession | None:
        try:
            return spawn(self.parent, where)
        except Exception as e:  # SubjectStartError and kin: the subject's failure, not ours
            self.findings.add("start", disagreement(
                "start: the subject did not start", "a fresh subject for an example did not "
                "start", f"{type(e).__name__}: {e}", "a subject that starts", [], where), 0)
            raise StopExploring("start") from None

    def open(self, label: str = "example") -> tuple[ToolSession, Path]:
        """The examples' subject and an empty directory of its own inside its working
        directory."""
        s = self._subject()
        where = Path(s.workdir) / f"{label}-{self.dirs()}"
        where.mkdir(parents=True, exist_ok=True)
        return s, where

    def close(self, s: ToolSession, where: Path) -> None:
        """An example is done: its directory goes (the subject stays for the next one)."""
        shutil.rmtree(where, ignore_errors=True)

    def fresh(self, label: str) -> tuple[ToolSession, Path] | None:
        """A fresh subject in a fresh, empty directory (its working directory), or None when
        the session cannot start another one; the caller :meth:`retire` s it."""
        where = Path(self.parent.workdir) / f"{label}-{self.dirs()}"
        where.mkdir(parents=True, exist_ok=True)
        try:
            s = spawn(self.parent, where)
        except Exception:
            return None
        return None if s is None else (s, where)

    def retire(self, s: ToolSession) -> None:
        """Close a subject this run started; what it did at close is kept as a note (a close
        is no example: a fault there has no reproducer, so it is not a finding)."""
        if s is self.parent:
            return
        before = len(faults_of(s))
        try:
            s.close()
        except Exception as e:  # the harness's side of closing
            self.close_notes.append(f"closing a subject raised {type(e).__name__}: {e}")
        for fault in faults_of(s)[before:]:
            note = f"when closed after its examples: {fault}"
            if note not in self.close_notes:
                self.close_notes.append(note)
        for note in getattr(s, "notes", None) or []:
            into = getattr(self.parent, "notes", None)
            if isinstance(into, list) and note not in into:
                into.append(note)

    def finish(self) -> None:
        """Close the examples' subject."""
        if self.worker is not None:
            self.retire(self.worker)
            self.worker = None

    def record(self, e: ModelDisagreement) -> None:
        if e.key not in self.findings.by_key:  # the first example of each: a stable choice
            self.findings.add(e.key, e, len(e.steps))

    def observed(self) -> str:
        """The conventions seen, then how much was covered."""
        parts = [f"{topic}: {_variants(topic, v)}"
                 for topic, v in sorted(self.conventions.items())]
        if self.ended == "flaky":
            parts.append("the subject answered differently when an example was replayed")
        parts += [f"(not judged: {n})" for n in self.close_notes]
        return "; ".join([*parts, self.budget.note()])


def _variants(topic: str, seen: set[str]) -> str:
    # The tab rendering is what every view agreed with; the other topics, every variant seen.
    return tab_convention(seen) if topic == TAB_TOPIC else " and ".join(sorted(seen))


def editor_machine(x: Exploration, steps_out: list[list[Step]] | None = None
                   ) -> type[RuleBasedStateMachine]:
    tool_type = x.parent.tool_type
    tool = registry.TOOLS[tool_type]
    has_undo = "undo_edit" in tool.command_names
    # The one key the version's docs name (insert_text on 20250728): a tool input holds only
    # what the docs name; a subject that reads another key fails accepts_insert_text, and its
    # insert findings are set aside here.
    insert_key = (tool.insert_text_fields or ("new_str",))[0]

    class EditorMachine(RuleBasedStateMachine):
        paths = Bundle("paths")

        def __init__(self) -> None:
            super().__init__()
            x.budget.charge(0)
            x.budget.examples += 1
            self.s, self.dir = x.open()
            self.model = EditorModel(tool_type)
            self.steps: list[Step] = []
            #: Set at this example's disagreement: the rest of its rules send nothing.
            self.done = False
            if steps_out is not None:
                steps_out.append(self.steps)

        def teardown(self) -> None:
            x.close(self.s, self.dir)

        # -- driving ----------------------------------------------------------------------

        def send(self, tool_input: dict[str, Any]) -> None:
            if self.done:
                return
            x.budget.charge()
            try:
                ok = _judge(self.s, self.model, tool_input, self.steps, base=self.dir,
                            seen=x.conventions)
            except ModelDisagreement as e:
                # Recorded, and generation goes on (hypothesis never sees it: no shrinking
                # whose result depends on time, no flaky replays).
                x.record(e)
                self.done = True
                if len(x.findings) >= ENOUGH or e.key.endswith(("hung", "faulted")):
                    # Enough to report; or a subject that dies (every further example that
                    # meets the same defect would cost a timeout and a new subject).
                    raise StopExploring("enough") from None
                return
            path = str(tool_input["path"])
            if tool_input["command"] != "view" and ok and path in self.model.files:
                # Every successful edit is followed by a view: what the editor shows must agree.
                self.send({"command": "view", "path": path})

        def fresh(self, name: str) -> str:
            path = self.dir / name
            i = 0
            while str(path) in self.model.files or path.exists():
                i += 1
                path = self.dir / f"{i}-{name}"
            return str(path)

        # -- rules ------------------------------------------------------------------------

        @initialize(target=paths, name=file_names(), data=file_contents())
        def plant_first(self, name: str, data: bytes) -> str:
            return self.plant(name, data)

        @rule(target=paths, name=file_names(), data=file_contents())
        def plant_file(self, name: str, data: bytes) -> str:
            return self.plant(name, data)

        def plant(self, name: str, data: bytes) -> str:
            path = self.fresh(name)
            if self.done:
                return path
            Path(path).write_bytes(data)
            self.model.plant(path, data)
            self.steps.append(Plant(path, data))
            return path

        @rule(target=paths, name=file_names(), text=edit_texts())
        def create_new(self, name: str, text: str) -> str:
            path = self.fresh(name)
            self.send({"command": "create", "path": path, "file_text": text})
            return path

        @rule(path=paths, text=edit_texts())
        def create_over(self, path: str, text: str) -> None:
            self.send({"command": "create", "path": path, "file_text": text})

        @rule(path=paths)
        def view(self, path: str) -> None:
            self.send({"command": "view", "path": path})

        @rule(path=paths, data=st.data())
        def view_range(self, path: str, data: st.DataObject) -> None:
            n = len(lines_of(self.model.files.get(path, b"")))
            self.send({"command": "view", "path": path, "view_range": data.draw(view_ranges(n))})

        @rule(path=paths, data=st.data(), new=edit_texts())
        def str_replace(self, path: str, data: st.DataObject, new: str) -> None:
            text = self.model.files.get(path, b"").decode("utf-8", "replace")
            old = data.draw(_substrings(text))
            self.send({"command": "str_replace", "path": path, "old_str": old, "new_str": new})

        @rule(path=paths, data=st.data(), text=insert_texts())
        def insert(self, path: str, data: st.DataObject, text: str) -> None:
            n = len(lines_of(self.model.files.get(path, b"")))
            # 0 .. line count + 1 (a phantom last line is a convention the model knows); values
            # clearly out of range are editor.insert.rejects_past_end's, not generated here.
            # The boundaries (start, end, one past the end) as often as the lines between.
            line = data.draw(st.one_of(st.sampled_from([0, n, n + 1]), st.integers(0, n + 1)))
            self.send({"command": "insert", "path": path, "insert_line": line, insert_key: text})

        @precondition(lambda self: has_undo)
        @rule(path=paths)
        def undo_edit(self, path: str) -> None:
            self.send({"command": "undo_edit", "path": path})

    return EditorMachine


@st.composite
def _substrings(draw: st.DrawFn, text: str) -> str:
    """A piece of the file (a likely unique or repeated match), or a string not in it; in an
    empty file sometimes the empty string (seed 001's sample replaces it there)."""
    if not text and not draw(st.integers(0, 3)):
        return ""
    if text and draw(st.integers(0, 3)):
        a = draw(st.integers(0, len(text) - 1))
        b = draw(st.integers(a + 1, min(len(text), a + 12)))
        piece = text[a:b]
        if "\ufffd" not in piece:
            return piece
    return draw(st.text(st.sampled_from(list("abxyz \t\n")), min_size=1, max_size=6))


def replay(s: ToolSession, steps: list[Step], into: Path) -> ModelDisagreement | None:
    """Run recorded steps again with ``s`` in a fresh directory ``into``; the disagreement, or
    None. (The steps' paths are moved from their common directory into ``into``.)"""
    into.mkdir(parents=True, exist_ok=True)
    prefix = _common_dir(steps)
    model = EditorModel(s.tool_type)
    done: list[Step] = []
    try:
        for step in steps:
            step = _move(step, Path(prefix), into) if prefix else step
            if isinstance(step, Plant):
                Path(step.path).parent.mkdir(parents=True, exist_ok=True)
                Path(step.path).write_bytes(step.data)
                model.plant(step.path, step.data)
                done.append(step)
            else:
                _judge(s, model, step, done, base=into)
    except ModelDisagreement as e:
        return e
    return None


def replay_on(x: Exploration, steps: list[Step], label: str) -> ModelDisagreement | None:
    """:func:`replay` on the examples' subject in a fresh directory, charged to the budget;
    :class:`StopExploring` when the budget is spent or no subject starts."""
    x.budget.charge(sum(1 for c in steps if not isinstance(c, Plant)), share=1.0)
    s, where = x.open(label)
    try:
        return replay(s, steps, where)
    finally:
        x.close(s, where)


#: The name this module's callers knew :func:`replay_on` by.
replay_fresh = replay_on


def verify(x: Exploration, found: ModelDisagreement) -> str:
    """Replay ``found``'s steps exactly as they will be printed on a fresh subject in a fresh
    directory: ``verified`` when the same disagreement (its :attr:`~ModelDisagreement.key`)
    shows again, ``did not reproduce`` when not, empty when no fresh subject can be started."""
    try:
        x.budget.charge(sum(1 for c in found.steps if not isinstance(c, Plant)), share=1.0)
    except StopExploring:
        return ""
    got = x.fresh("verify")
    if got is None:
        return ""
    s, where = got
    try:
        again = replay(s, found.steps, where)
    finally:
        x.retire(s)
        shutil.rmtree(where, ignore_errors=True)
    return VERIFIED if again is not None and again.key == found.key else NOT_REPRODUCED


def _common_dir(steps: list[Step]) -> str:
    paths = [x.path if isinstance(x, Plant) else str(x["path"]) for x in steps]
    return os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""


#: Text fields of an editor input that shrinking simplifies.
_TEXT_FIELDS = ("file_text", "old_str", "new_str", "insert_text")


def variants(steps: list[Step]) -> Iterator[list[Step]]:
    """Simpler versions of an example, in the order shrinking tries them: steps deleted, then
    each planted file's bytes and each input's texts simplified
    (:func:`~conformance.properties.exploration.simpler_bytes`, ``simpler_texts``), ``insert_line`` made
    0, then file names shortened."""
    if steps and not isinstance(steps[-1], Plant):  # the last input and what made its file
        last = str(steps[-1]["path"])
        focused = [x for x in steps[:-1] if _is_making(x, last)] + [steps[-1]]
        if len(focused) < len(steps):
            yield focused
    yield from deletions(steps)
    for i, step in enumerate(steps):
        head, tail = steps[:i], steps[i + 1:]
        if isinstance(step, Plant):
            for data in simpler_bytes(step.data):
                yield [*head, Plant(step.path, data), *tail]
            continue
        for key in _TEXT_FIELDS:
            value = step.get(key)
            if isinstance(value, str):
                for text in simpler_texts(value):
                    yield [*head, {**step, key: text}, *tail]
        line = step.get("insert_line")
        if isinstance(line, int) and not isinstance(line, bool) and line > 0:
            yield [*head, {**step, "insert_line": 0}, *tail]
    names = list(dict.fromkeys(x.path if isinstance(x, Plant) else str(x["path"])
                               for x in steps))
    for k, path in enumerate(names):
        short = str(Path(path).with_name(f"{'abcdefghijklmnopqrstuvwxyz'[k % 26]}.txt"))
        if short != path and short not in names:
            yield [_renamed(x, path, short) for x in steps]


def _is_making(step: Step, path: str) -> bool:
    if isinstance(step, Plant):
        return step.path == path
    return step.get("path") == path and step.get("command") == "create"


def _renamed(step: Step, old: str, new: str) -> Step:
    if isinstance(step, Plant):
        return Plant(new, step.data) if step.path == old else step
    return {**step, "path": new} if step.get("path") == old else step


def minimize(x: Exploration, found: ModelDisagreement, *, tries: int | None = None
             ) -> ModelDisagreement:
    """The smallest example showing the same disagreement that :func:`variants` and
    :func:`~conformance.properties.exploration.shrink_finding` find, each try a replay on the examples' subject in
    a fresh directory; at most ``tries`` replays (:data:`SHRINK_TRIES`, or
    :data:`SHRINK_TRIES_DEAD` for a disagreement that kills the subject): a count, so the same
    subject always gets the same reproducer."""
    if tries is None:
        tries = SHRINK_TRIES_DEAD if found.key.endswith(("hung", "faulted")) else SHRINK_TRIES

    def again(steps: list[Step]) -> ModelDisagreement | None:
        if not any(not isinstance(c, Plant) for c in steps):
            return None
        return replay_on(x, steps, "minimize")

    return shrink_finding(found, found.steps, again, variants, tries=tries)


@dataclass
class ModelReport:
    """What a run of the model check found (:attr:`findings`, smallest first) and saw."""

    findings: list[ModelDisagreement]
    #: The conventions seen and how much was covered (the check's observed string).
    observed: str
    #: How hypothesis ended: passed (every example ran), stopped (enough findings, the budget,
    #: or a dead subject), unsatisfiable.
    ended: str
    budget: Budget
    #: Findings that are defects other checks report, with that check's id: not counted again.
    set_aside: list[tuple[ModelDisagreement, str]] = field(default_factory=list)
    #: The hard time cap ended the run before its fixed work was done: neither a pass nor a
    #: failure (the check is ``incomplete``).
    incomplete: bool = False
    #: Seconds the run took, and the final replays of its findings (:func:`verify`).
    seconds: float = 0.0
    replay_seconds: float = 0.0

    @property
    def newline_translation(self) -> list[ModelDisagreement]:
        """The set-aside findings that are ``editor.bytes.crlf_preserved``'s."""
        return [f for f, owner in self.set_aside if owner == CRLF_CHECK]

    @property
    def owners(self) -> dict[str, int]:
        """Check id → how many findings were set aside as that check's defect."""
        out: dict[str, int] = {}
        for _, owner in self.set_aside:
            out[owner] = out.get(owner, 0) + 1
        return out


def explore_editor_model(s: ToolSession, *, max_examples: int = MAX_EXAMPLES,
                         steps: int = DEFAULT_STEPS, budget: Budget | None = None,
                         fails: FixedCheckFails | None = None) -> ModelReport:
    """Run the machine against the session's subject; see the module docstring. Findings are
    shrunk, verified, and their paths moved into ``s.workdir``. ``fails(check_id, session)``
    runs a fixed check on a fresh session and says whether it failed: the findings such a
    check owns are set aside (without it, none is)."""
    if budget is None:
        budget = Budget.for_session(s)
        budget.seconds = max(budget.seconds, MIN_CAP_SECONDS)
    x = Exploration(s, budget)
    machine = editor_machine(x)
    config = quiet_settings(max_examples=max_examples, stateful_step_count=steps,
                            phases=(Phase.generate,))
    found: list[ModelDisagreement] = []
    aside: list[tuple[ModelDisagreement, str]] = []
    started, replayed = time.monotonic(), 0.0
    try:
        with hypothesis_turn(x.budget):
            x.ended = explore(lambda: run_machine(machine, config),
                              (ModelDisagreement,))
        if x.ended == "flaky" and x.budget.ran_out:
            x.ended = "stopped"  # hypothesis saw the budget's stop as a changed example
        try:
            for f in sorted(x.findings.by_key.values(), key=lambda f: f.order):
                small = f.error
                if small.steps:
                    small = minimize(x, small)
                    t0 = time.monotonic()
                    small.reproduced = verify(x, small)
                    replayed += time.monotonic() - t0
                found.append(small.moved(Path(s.workdir)))
            aside = _set_aside(x, found, _Owners(x, fails))
        except StopExploring:
            pass  # the time cap (or a subject that no longer starts): reported below
    finally:
        x.finish()
    done = {id(f) for f, _ in aside}
    found = [f for f in found if id(f) not in done]
    found.sort(key=lambda d: len(d.steps))
    return ModelReport(found, x.observed(), x.ended, x.budget, aside,
                       incomplete=x.budget.timed_out, seconds=time.monotonic() - started,
                       replay_seconds=replayed)


# --- one defect, one check ------------------------------------------------------------------------

#: Runs a fixed check on a session and says whether it failed (the check module passes the
#: catalog's; without it nothing is set aside).
FixedCheckFails = Callable[[str, ToolSession], bool]


class _Owners:
    """Runs each fixed check at most once, on a fresh subject (the examples' subject in a fresh
    directory when none can be started): does it fail on this subject?"""

    def __init__(self, x: Exploration, fails: FixedCheckFails | None) -> None:
        self.x, self.fails = x, fails
        self.seen: dict[str, bool] = {}

    def __call__(self, check_id: str) -> bool:
        if self.fails is None:
            return False
        if check_id not in self.seen:
            self.seen[check_id] = self._run(check_id, self.fails)
        return self.seen[check_id]

    def _run(self, check_id: str, fails: FixedCheckFails) -> bool:
        self.x.budget.charge(4, share=1.0)
        got = self.x.fresh("owner")
        if got is not None:
            s, where = got
            try:
                return fails(check_id, s)
            finally:
                self.x.retire(s)
                shutil.rmtree(where, ignore_errors=True)
        s = self.x.parent  # no fresh subject: the one session, as the check itself runs
        return fails(check_id, s)


def _kind(f: ModelDisagreement) -> str:
    """The finding kind its key ends in (:func:`~conformance.properties.editor_owners.kind_of`)."""
    parts = f.key.split(": ")
    return parts[2] if len(parts) > 2 else ""


def _last_command(f: ModelDisagreement) -> str:
    inputs = f.reproducer
    return str(inputs[-1]["command"]) if inputs else ""


def _set_aside(x: Exploration, found: list[ModelDisagreement], failing: _Owners
               ) -> list[tuple[ModelDisagreement, str]]:
    """The findings that are defects fixed checks report, each with the check that owns it
    (:data:`~conformance.properties.editor_owners.REPORTED_BY`): a finding of a kind whose
    check fails on this subject; or one that needs tabs or CRs (gone when the same steps are
    replayed without them) on a subject whose tab or CRLF check fails (one defect, one check)."""
    aside: list[tuple[ModelDisagreement, str]] = []
    for f in found:
        owner = next((c for c in owners(_kind(f), _last_command(f)) if failing(c)), None)
        if owner is None and not f.key.endswith(("hung", "faulted")):
            # (A hang or a crash is no byte property, and each replay of it costs a timeout.)
            for byte_kind, (holds, without) in NEUTRAL.items():
                checks = [c for c in owners(byte_kind, _last_command(f))
                          if f.steps and holds(f.steps) and failing(c)]
                if checks and replay_on(x, without(f.steps), "owner") is None:
                    owner = checks[0]
                    break
        if owner is not None:
            aside.append((f, owner))
    return aside


def run_editor_model(s: ToolSession, *, max_examples: int = MAX_EXAMPLES,
                     steps: int = DEFAULT_STEPS,
                     seed: int | None = 0, budget: Budget | None = None
                     ) -> ModelDisagreement | None:
    """The smallest disagreement :func:`explore_editor_model` finds, or None. (``seed`` is kept
    for callers; runs are always derandomized.)"""
    report = explore_editor_model(s, max_examples=max_examples, steps=steps, budget=budget)
    return report.findings[0] if report.findings else None


__all__ = ["ENOUGH", "EXPLORE_SHARE", "MAX_EXAMPLES", "Exploration", "ModelDisagreement",
           "ModelReport", "Plant", "disagreement", "editor_machine", "explore_editor_model",
           "minimize", "replay", "replay_fresh", "replay_on", "run_editor_model", "variants",
           "verify"]
