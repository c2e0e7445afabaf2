"""Model-based stateful testing of an editor subject (hypothesis ``RuleBasedStateMachine``).

:func:`editor_machine` builds a state machine that drives one :class:`ToolSession` with generated
commands (create, view, view_range, str_replace, insert, undo_edit where the version has it, and
files planted behind the editor's back) and compares the subject, command by command, to
:class:`~conformance.model.editor_model.EditorModel`. Each hypothesis example works in a fresh
sub-directory of the session's working directory, so examples do not see each other's files.

:func:`run_editor_model` runs the machine and returns ``None`` or a :class:`ModelDisagreement`
carrying the shrunk reproducer: the replayable list of tool inputs (planted files appear as
``create`` inputs when their bytes are UTF-8, otherwise in the message).
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance.model.editor_model import EditorModel, lines_of
from conformance.session import ToolResult, ToolSession
from conformance.strategies import edit_texts, file_contents, file_names, view_ranges
from simulator import registry


class ModelDisagreement(AssertionError):
    """The subject answered a command differently from every documented-compatible outcome."""

    def __init__(self, message: str, received: str, documented: str,
                 steps: list[Step] | None = None) -> None:
        super().__init__(f"{message}\nReceived: {received}\nDocumented: {documented}")
        self.message, self.received, self.documented = message, received, documented
        self.steps: list[Step] = list(steps or [])

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


@dataclass
class _Trace:
    """The steps of the running example (the failing one's travel in its exception)."""

    steps: list[Step] = field(default_factory=list)


def _refused(r: ToolResult) -> bool:
    return r.is_error or r.timed_out or r.text.lstrip().lower().startswith("error")


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _judge(s: ToolSession, model: EditorModel, tool_input: dict[str, Any], steps: list[Step]
           ) -> bool:
    """Send one input and compare with the model (which follows); True when it succeeded."""
    e = model.expect(tool_input)
    steps.append(tool_input)
    r = s.call(tool_input)
    after = _read(e.path)
    outcome = e.matching(_refused(r), after)
    if outcome is None:
        allowed = [("error" if o.error else "success", o.after) for o in e.outcomes]
        raise ModelDisagreement(
            f"{tool_input['command']} disagrees with the documented semantics",
            f"{'error' if _refused(r) else 'success'} {r.text[:200]!r}; file now {after!r:.300}",
            f"one of {allowed!r:.600}", steps)
    limit = getattr(s, "max_characters", None)
    if outcome.shows and not _refused(r) and not (limit and len(r.text) >= limit):
        _expect_shown(r.text, outcome.shows, steps)
    model.commit(e.path, outcome)
    return not _refused(r)


def editor_machine(s: ToolSession, trace: _Trace) -> type[RuleBasedStateMachine]:
    counter = itertools.count()
    tool = registry.TOOLS[s.tool_type]
    has_undo = "undo_edit" in tool.command_names
    insert_fields = tool.insert_text_fields or ("new_str",)

    class EditorMachine(RuleBasedStateMachine):
        paths = Bundle("paths")

        def __init__(self) -> None:
            super().__init__()
            self.dir = Path(s.workdir) / f"case-{next(counter)}"
            self.dir.mkdir(parents=True, exist_ok=True)
            self.model = EditorModel(s.tool_type)
            trace.steps = []

        # -- driving ----------------------------------------------------------------------

        def send(self, tool_input: dict[str, Any]) -> None:
            ok = _judge(s, self.model, tool_input, trace.steps)
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
            trace.steps.append(Plant(path, data))
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
            field_name = data.draw(st.sampled_from(insert_fields))
            self.send({"command": "insert", "path": path, "insert_line": line, field_name: text})

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


def _expect_shown(text: str, shows: tuple[str, ...], steps: list[Step]) -> None:
    """Each line must be a whole output line (after an optional number prefix), in order."""
    out = [x.rstrip("\r") for x in text.split("\n")]
    at = 0
    for line in shows:
        body = line.rstrip("\r")
        if not body.strip() or "\ufffd" in body:
            continue
        found = next((i for i in range(at, len(out)) if out[i] == body or
                      re.fullmatch(r"\s*\d+(?::\s?|\t|\s+\|?\s?)" + re.escape(body), out[i])),
                     None)
        if found is None:
            raise ModelDisagreement(
                f"view did not show the line {body!r} (in order)", repr(text[:300]),
                f"the lines {list(shows)!r:.300}", steps)
        at = found + 1


def replay(s: ToolSession, steps: list[Step], into: Path) -> ModelDisagreement | None:
    """Run recorded steps again in a fresh directory ``into``; the disagreement, or None."""
    into.mkdir(parents=True, exist_ok=True)
    prefix = _common_dir(steps)
    model = EditorModel(s.tool_type)
    done: list[Step] = []

    def moved(path: str) -> str:
        return str(into / os.path.relpath(path, prefix)) if prefix else path

    try:
        for step in steps:
            if isinstance(step, Plant):
                plant = Plant(moved(step.path), step.data)
                Path(plant.path).parent.mkdir(parents=True, exist_ok=True)
                Path(plant.path).write_bytes(plant.data)
                model.plant(plant.path, plant.data)
                done.append(plant)
            else:
                _judge(s, model, {**step, "path": moved(str(step["path"]))}, done)
    except ModelDisagreement as e:
        return e
    return None


def _common_dir(steps: list[Step]) -> str:
    paths = [st.path if isinstance(st, Plant) else str(st["path"]) for st in steps]
    return os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""


def minimize(s: ToolSession, found: ModelDisagreement, *, budget: int = 60
             ) -> ModelDisagreement:
    """Drop steps one at a time (last first) while the disagreement persists, in fresh
    directories; hypothesis' own shrinking does not always delete redundant steps."""
    best = found
    tries = itertools.count()
    i = len(best.steps) - 2
    while i >= 0 and next(tries) < budget:
        candidate = best.steps[:i] + best.steps[i + 1:]
        again = replay(s, candidate, Path(s.workdir) / f"minimize-{next(_DIRS)}")
        if again is not None:
            best = again
        i = min(i - 1, len(best.steps) - 2)
    return best


_DIRS = itertools.count()


def run_editor_model(s: ToolSession, *, max_examples: int = 30, steps: int = 12,
                     seed: int | None = 0) -> ModelDisagreement | None:
    """Run the machine against the session; the shrunk, minimized disagreement, or None."""
    trace = _Trace()
    machine = editor_machine(s, trace)
    config = settings(max_examples=max_examples, stateful_step_count=steps, deadline=None,
                      database=None, derandomize=seed is not None, print_blob=False,
                      phases=(Phase.generate, Phase.shrink),
                      suppress_health_check=list(HealthCheck))
    try:
        from conformance.checks.properties import HYPOTHESIS_TURNS

        with HYPOTHESIS_TURNS:
            run_state_machine_as_test(machine, settings=config)
    except ModelDisagreement as e:
        # Hypothesis re-raises the error of its final replay of the shrunk example.
        return minimize(s, e)
    return None
