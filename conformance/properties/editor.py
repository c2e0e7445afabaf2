"""Model-based stateful testing of an editor subject (hypothesis ``RuleBasedStateMachine``).

:func:`editor_machine` builds a state machine that drives an editor with generated commands
(create, view, view_range, str_replace, insert, undo_edit where the version has it, and files
planted behind the editor's back) and compares the subject, command by command, to
:class:`~conformance.properties.editor_model.EditorModel`, which accepts every documented-compatible
convention (and notes which one the subject followed).

:func:`explore_editor_model` runs it under the guarantees of
:mod:`conformance.properties.exploration` (see :mod:`conformance.checks.properties`):

- every example starts from a **fresh subject in a fresh directory**
  (:func:`conformance.session.spawn`; a session that cannot spawn is reused, one sub-directory
  per example, and a fault of that one subject ends the run);
- a subject that hangs, exits or breaks the protocol fails *that* example (its own finding);
- a :class:`~conformance.checks.properties.Budget` (wall time and calls, from the subject's
  timeout) ends generation cleanly, with what is known;
- every **distinct disagreement** (a :attr:`ModelDisagreement.key`: the command and what went
  wrong) is kept with its smallest example, then minimized by deleting steps on fresh subjects;
- examples are at most ``steps`` rules long (an edit is followed by a view), so a reproducer
  stays within a few dozen inputs even when the budget stops shrinking early;
- nothing reaches the terminal.

Reproducers are the replayable tool inputs (planted files appear as ``create`` inputs when their
bytes are UTF-8, otherwise in :attr:`ModelDisagreement.notes`), with paths in the check's own
working directory.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import re
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
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
    run_state_machine_as_test,
)

from conformance.properties.editor_model import EditorModel, Outcome, lines_of
from conformance.properties.exploration import (
    EXPLORE_SHARE,
    Budget,
    Findings,
    StopExploring,
    explore,
    hypothesis_turn,
    quiet_settings,
)
from conformance.properties.strategies import edit_texts, file_contents, file_names, view_ranges
from conformance.session import ToolResult, ToolSession, faults_of, spawn
from simulator import registry

#: Rules per example (an edit rule sends the edit and a view): reproducers stay short.
DEFAULT_STEPS = 12
#: Example subjects still closing (in the background) before the next example waits.
MAX_CLOSING = 3
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

    @property
    def reproducer(self) -> list[dict[str, Any]]:
        """The tool inputs, planted files included as ``create`` inputs where they are UTF-8."""
        out: list[dict[str, Any]] = []
        for step in self.steps:
            if isinstance(step, Plant):
                if step.text is not None:
                    out.append({"command": "create", "path": step.path, "file_text": step.text})
            else:
                out.append(step)
        return out

    @property
    def notes(self) -> list[str]:
        """Planted files that no ``create`` can express (bytes that are not UTF-8)."""
        notes, n = [], 0
        for step in self.steps:
            if isinstance(step, Plant) and step.text is None:
                notes.append(f"before input {n + 1}, write {step.path} directly with the bytes "
                             f"{step.data!r:.200}")
            elif not isinstance(step, Plant) or step.text is not None:
                n += 1
        return notes

    def moved(self, onto: Path) -> ModelDisagreement:
        """The same disagreement with its paths in ``onto`` instead of :attr:`base`."""
        if self.base is None:
            return self
        def text(s: str) -> str:
            return s.replace(str(self.base), str(onto))

        out = type(self)(text(self.message), text(self.received), text(self.documented),
                         [_move(x, self.base, onto) for x in self.steps], onto)
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
    return r.is_error or r.text.lstrip().lower().startswith("error")


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
            kind = "refused a valid command" if refused else "accepted an invalid command"
        else:
            kind = "left the wrong file content"
        raise disagreement(
            f"{command}: {kind}", f"{command} disagrees with the documented semantics ({kind})",
            f"{'error' if refused else 'success'} {r.text[:200]!r}; file now {after!r:.300}",
            f"one of {allowed!r:.600}", steps, base)
    outcome = min(fits, key=lambda o: o.after != after)  # an exact match first
    limit = getattr(s, "max_characters", None)
    if outcome.shows and not refused and not (limit and len(r.text) >= limit):
        _expect_shown(r.text, outcome.shows, steps, base)
    if seen is not None:
        _note(seen, fits)
    model.commit(e.path, outcome)
    return not refused


def _note(seen: Conventions, fits: list[Outcome]) -> None:
    notes = {o.note for o in fits}
    if len(notes) == 1 and (note := notes.pop()) is not None:
        seen.setdefault(note[0], set()).add(note[1])


def _prefixed(body: str) -> re.Pattern[str]:
    """An output line showing ``body``: as is or after a line-number prefix (``  12\\t``,
    ``12: ``, ``L12 | ``, ``12→``), tabs kept or expanded, trailing blanks free."""
    bodies = {re.escape(body.rstrip()), re.escape(body.expandtabs().rstrip())}
    return re.compile(r"(?:\s*L?\d+(?:[\t :|\u2192\-]{1,4}))?(?:" + "|".join(bodies) + r")\s*")


def _expect_shown(text: str, shows: tuple[str, ...], steps: list[Step],
                  base: Path | None = None) -> None:
    """Each line must be a whole output line (after an optional number prefix), in order."""
    out = [x.rstrip("\r") for x in text[:MAX_VIEW_SCAN].split("\n")]
    at = 0
    for line in shows:
        body = line.rstrip("\r")
        if not body.strip() or "\ufffd" in body or "\r" in body:
            continue
        pattern = _prefixed(body)
        found = next((i for i in range(at, len(out)) if pattern.fullmatch(out[i])), None)
        if found is None:
            raise disagreement(
                "view: did not show the file's lines", f"view did not show the line {body!r} "
                f"(in order)", repr(text[:300]), f"the lines {list(shows)!r:.300}", steps, base)
        at = found + 1


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
    closer: ThreadPoolExecutor | None = None
    closing: list[Future[tuple[list[str], list[str]]]] = field(default_factory=list)
    closed: int = 0
    #: How the hypothesis run ended (see :func:`conformance.properties.exploration.explore`).
    ended: str = ""

    def open(self, label: str = "example") -> tuple[ToolSession, Path]:
        """A live subject and an empty directory (:class:`StopExploring` when none can start:
        that is a finding too)."""
        where = Path(self.parent.workdir) / f"{label}-{self.dirs()}"
        where.mkdir(parents=True, exist_ok=True)
        try:
            s = spawn(self.parent, where)
        except Exception as e:  # SubjectStartError and kin: the subject's failure, not ours
            self.findings.add("start", disagreement(
                "start: the subject did not start", "a fresh subject for an example did not "
                "start", f"{type(e).__name__}: {e}", "a subject that starts", [], where), 0)
            raise StopExploring("start") from None
        if s is None:
            self.shared = True
            return self.parent, where
        return s, where

    def close(self, s: ToolSession, where: Path) -> None:
        """Stop an example's subject, in the background (closing sweeps the process table: as
        long as an example's calls); :meth:`finish` waits for every close."""
        if s is self.parent:
            return
        if self.closer is None:
            self.closer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-close")
        # In this case's context: a close past its deadline is recorded for the case (timing.py).
        self.closing.append(self.closer.submit(contextvars.copy_context().run, self._close, s,
                                               where))
        if len(self.closing) - self.closed > MAX_CLOSING:  # never many subjects alive at once
            self.closing[self.closed].exception()
            self.closed += 1

    def _close(self, s: ToolSession, where: Path) -> tuple[list[str], list[str]]:
        before = len(faults_of(s))
        try:
            s.close()
        finally:
            shutil.rmtree(where, ignore_errors=True)
        return faults_of(s)[before:], list(getattr(s, "notes", None) or [])

    def finish(self) -> None:
        """Wait for the closes; what the subjects did at close (a fault, a note) goes to the
        check's session, as if it had happened there."""
        for f in self.closing:
            faults, notes = f.result()
            for name, items in (("faults", faults), ("notes", notes)):
                into = getattr(self.parent, name, None)
                if isinstance(into, list):
                    into.extend(x for x in items if x not in into)
        self.closing.clear()
        self.closed = 0
        if self.closer is not None:
            self.closer.shutdown(wait=True)
            self.closer = None

    def record(self, e: ModelDisagreement) -> None:
        self.findings.add(e.key, e, len(e.steps))

    def observed(self) -> str:
        """The conventions seen, then how much was covered."""
        parts = [f"{topic}: {' and '.join(sorted(v))}"
                 for topic, v in sorted(self.conventions.items())]
        if self.ended == "flaky":
            parts.append("the subject answered differently when an example was replayed")
        return "; ".join([*parts, self.budget.note()])


def editor_machine(x: Exploration, steps_out: list[list[Step]] | None = None
                   ) -> type[RuleBasedStateMachine]:
    tool_type = x.parent.tool_type
    tool = registry.TOOLS[tool_type]
    has_undo = "undo_edit" in tool.command_names
    insert_fields = tool.insert_text_fields or ("new_str",)

    class EditorMachine(RuleBasedStateMachine):
        paths = Bundle("paths")

        def __init__(self) -> None:
            super().__init__()
            x.budget.charge(0)
            x.budget.examples += 1
            self.s, self.dir = x.open()
            self.model = EditorModel(tool_type)
            self.steps: list[Step] = []
            if steps_out is not None:
                steps_out.append(self.steps)

        def teardown(self) -> None:
            x.close(self.s, self.dir)

        # -- driving ----------------------------------------------------------------------

        def send(self, tool_input: dict[str, Any]) -> None:
            x.budget.charge()
            try:
                ok = _judge(self.s, self.model, tool_input, self.steps, base=self.dir,
                            seen=x.conventions)
            except ModelDisagreement as e:
                x.record(e)
                if x.shared and e.key.endswith(("hung", "faulted")):
                    raise StopExploring("subject faulted") from None  # no other subject
                raise
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

        @rule(path=paths, data=st.data(), text=edit_texts())
        def insert(self, path: str, data: st.DataObject, text: str) -> None:
            n = len(lines_of(self.model.files.get(path, b"")))
            line = data.draw(st.integers(-1, n + 1))
            # The text in every field the version's docs name (insert_text and new_str on
            # 20250728): which one an editor reads is not this check's business.
            self.send({"command": "insert", "path": path, "insert_line": line,
                       **{f: text for f in insert_fields}})

        @precondition(lambda self: has_undo)
        @rule(path=paths)
        def undo_edit(self, path: str) -> None:
            self.send({"command": "undo_edit", "path": path})

    return EditorMachine


@st.composite
def _substrings(draw: st.DrawFn, text: str) -> str:
    """A piece of the file (a likely unique or repeated match), or a string not in it."""
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


def replay_fresh(x: Exploration, steps: list[Step], label: str) -> ModelDisagreement | None:
    """:func:`replay` on a fresh subject in a fresh directory, charged to the budget;
    :class:`StopExploring` when the budget is spent or no subject starts."""
    x.budget.charge(sum(1 for c in steps if not isinstance(c, Plant)), share=1.0)
    s, where = x.open(label)
    try:
        return replay(s, steps, where)
    finally:
        x.close(s, where)


def _common_dir(steps: list[Step]) -> str:
    paths = [x.path if isinstance(x, Plant) else str(x["path"]) for x in steps]
    return os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""


def minimize(x: Exploration, found: ModelDisagreement, *, tries: int = 60) -> ModelDisagreement:
    """Drop steps one at a time (last first) while the same disagreement persists, each try on a
    fresh subject in a fresh directory (hypothesis' shrinking does not delete the view an edit
    rule sends, nor always a redundant step); stops when the budget is spent."""
    best = found
    i = len(best.steps) - 2
    for _ in range(tries):
        if i < 0 or x.budget.spent():
            break
        candidate = best.steps[:i] + best.steps[i + 1:]
        try:
            again = replay_fresh(x, candidate, "minimize")
        except StopExploring:
            break
        if again is not None and again.key == best.key:
            best = again
        i = min(i - 1, len(best.steps) - 2)
    return best


@dataclass
class ModelReport:
    """What a run of the model check found (:attr:`findings`, smallest first) and saw."""

    findings: list[ModelDisagreement]
    #: The conventions seen and how much was covered (the check's observed string).
    observed: str
    #: How hypothesis ended: passed, failed, stopped (the budget or a dead subject), flaky.
    ended: str
    budget: Budget
    #: Findings that are the newline translation ``editor.bytes.crlf_preserved`` reports (they
    #: need a CR in their steps and the subject turns CRLF into LF): not counted again.
    newline_translation: list[ModelDisagreement] = field(default_factory=list)


def explore_editor_model(s: ToolSession, *, max_examples: int = 30, steps: int = DEFAULT_STEPS,
                         budget: Budget | None = None) -> ModelReport:
    """Run the machine against fresh instances of the session's subject; see the module
    docstring. Findings are minimized and their paths moved into ``s.workdir``."""
    x = Exploration(s, budget or Budget.for_session(s))
    machine = editor_machine(x)
    config = quiet_settings(max_examples=max_examples, stateful_step_count=steps,
                            phases=(Phase.generate, Phase.shrink))
    found = []
    try:
        with hypothesis_turn(x.budget):
            ended = explore(lambda: run_state_machine_as_test(machine, settings=config),
                            (ModelDisagreement,))
        x.ended = ended
        for f in x.findings.ordered():
            small = minimize(x, f.error) if f.error.steps else f.error
            found.append(small.moved(Path(s.workdir)))
        aside = _newline_translation_findings(x, found)
    finally:
        x.finish()
    found = [f for f in found if f not in aside]
    found.sort(key=lambda d: len(d.steps))
    return ModelReport(found, x.observed(), ended, x.budget, aside)


# --- one defect, one check: newline translation --------------------------------------------------

def _lf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _without_cr(steps: list[Step]) -> list[Step]:
    """The same steps with every CRLF and CR in their texts and planted bytes turned into LF."""
    out: list[Step] = []
    for step in steps:
        if isinstance(step, Plant):
            out.append(Plant(step.path, _lf(step.data)))
        else:
            out.append({k: (v.replace("\r\n", "\n").replace("\r", "\n")
                            if isinstance(v, str) and k != "path" else v)
                        for k, v in step.items()})
    return out


def _has_cr(steps: list[Step]) -> bool:
    return any(b"\r" in step.data if isinstance(step, Plant)
               else any(isinstance(v, str) and "\r" in v for v in step.values())
               for step in steps)


def _translates_newlines(x: Exploration) -> bool:
    """Does the subject turn CRLF into LF on a plain edit (the defect
    ``editor.bytes.crlf_preserved`` reports)? One fresh subject, one ``str_replace``."""
    try:
        x.budget.charge(1, share=1.0)
        sub, where = x.open("line-endings")
    except StopExploring:
        return False
    try:
        path = where / "crlf.txt"
        path.write_bytes(b"alpha\r\nbeta\r\n")
        sub.call({"command": "str_replace", "path": str(path), "old_str": "alpha",
                  "new_str": "gamma"})
        after = _read(str(path))
    finally:
        x.close(sub, where)
    return after is not None and after != b"gamma\r\nbeta\r\n" and _lf(after) == b"gamma\nbeta\n"


def _newline_translation_findings(x: Exploration, found: list[ModelDisagreement]
                                  ) -> list[ModelDisagreement]:
    """The findings that are the newline translation ``editor.bytes.crlf_preserved`` reports,
    set aside so that one defect fails one check: only when the subject translates CRLF on a
    plain edit, and only those findings whose steps hold a CR and that are gone when the same
    steps are replayed with every CR turned into LF."""
    suspects = [f for f in found if f.steps and _has_cr(f.steps)]
    if not suspects or not _translates_newlines(x):
        return []
    aside = []
    for f in suspects:
        try:
            if replay_fresh(x, _without_cr(f.steps), "line-endings") is None:
                aside.append(f)
        except StopExploring:
            break
    return aside


def run_editor_model(s: ToolSession, *, max_examples: int = 30, steps: int = DEFAULT_STEPS,
                     seed: int | None = 0, budget: Budget | None = None
                     ) -> ModelDisagreement | None:
    """The smallest disagreement :func:`explore_editor_model` finds, or None. (``seed`` is kept
    for callers; runs are always derandomized.)"""
    report = explore_editor_model(s, max_examples=max_examples, steps=steps, budget=budget)
    return report.findings[0] if report.findings else None


__all__ = ["EXPLORE_SHARE", "Exploration", "ModelDisagreement", "ModelReport", "Plant",
           "disagreement", "editor_machine", "explore_editor_model", "minimize", "replay", "replay_fresh",
           "run_editor_model"]
