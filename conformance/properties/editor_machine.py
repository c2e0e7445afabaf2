"""The exploration of an editor subject: the hypothesis state machine and the subjects it runs on.

:func:`editor_machine` builds a ``RuleBasedStateMachine`` that drives an editor with generated
commands (create, view, view_range, str_replace, insert, undo_edit where the version has it, and
files planted behind the editor's back) and judges each answer
(:func:`conformance.properties.editor_judge.judge`). A disagreement is recorded in the
:class:`Exploration` and generation goes on (hypothesis never sees it); generation stops once
:data:`ENOUGH` distinct disagreements are known, or at the first that kills the subject.

:class:`Exploration` is one run's state: the check's session and budget, the examples' subject
(replaced by a fresh one when it hung, exited, broke the protocol or used half its case
deadline), the findings and the conventions seen.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, precondition, rule

from conformance.properties.editor_judge import (
    Conventions,
    ModelDisagreement,
    Plant,
    Step,
    judge,
)
from conformance.properties.editor_model import EditorModel, lines_of
from conformance.properties.editor_view_forms import TAB_TOPIC, tab_convention
from conformance.properties.exploration import Budget, Findings, StopExploring
from conformance.properties.strategies import (
    edit_texts,
    file_contents,
    file_names,
    insert_texts,
    view_ranges,
)
from conformance.session import ToolSession, faults_of, spawn
from simulator import registry

#: Distinct disagreements after which generation stops (the report shows the first ones).
ENOUGH = 3


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
    #: Why no fresh subject started for an example, twice ("": each one did): the run is
    #: incomplete, never a finding (a start that fails under load is no verdict on the tool).
    start_failed: str = ""

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
        """A fresh subject, tried twice (one start can be unlucky on a loaded machine); twice
        not started stops the run, incomplete (:attr:`start_failed`). A subject that cannot
        start at all has failed its own case's start before this runs."""
        for attempt in (1, 2):
            try:
                return spawn(self.parent, where)
            except Exception as e:  # SubjectStartError and kin
                if attempt == 2:
                    self.start_failed = f"{type(e).__name__}: {e}"
        raise StopExploring("start")

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
                ok = judge(self.s, self.model, tool_input, self.steps, base=self.dir,
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
