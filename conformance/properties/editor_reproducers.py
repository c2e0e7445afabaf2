"""The reproducers of the editor model check: its findings replayed, shrunk and verified.

:func:`replay` runs recorded steps again in a fresh directory; :func:`minimize` shrinks a finding
(:func:`variants`: steps deleted, texts and planted bytes simplified, file names shortened; a
count of tries, never a clock) with :func:`~conformance.properties.exploration.shrink_finding`;
:func:`verify` replays the shrunk steps exactly as printed on a fresh subject in a fresh
directory (``verified`` / ``did not reproduce``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from conformance.properties.editor_judge import ModelDisagreement, Plant, Step, judge, moved_step
from conformance.properties.editor_machine import Exploration
from conformance.properties.editor_model import EditorModel
from conformance.properties.exploration import (
    StopExploring,
    deletions,
    shrink_finding,
    simpler_bytes,
    simpler_texts,
)
from conformance.results import NOT_REPRODUCED, VERIFIED
from conformance.session import ToolSession

#: Replays a finding's shrinking may use (cheap: the examples' subject, a fresh directory each).
SHRINK_TRIES = 300
#: ... for a finding that kills the subject (each try starts one, a hang costs a timeout).
SHRINK_TRIES_DEAD = 4


def replay(s: ToolSession, steps: list[Step], into: Path) -> ModelDisagreement | None:
    """Run recorded steps again with ``s`` in a fresh directory ``into``; the disagreement, or
    None. (The steps' paths are moved from their common directory into ``into``.)"""
    into.mkdir(parents=True, exist_ok=True)
    prefix = _common_dir(steps)
    model = EditorModel(s.tool_type)
    done: list[Step] = []
    try:
        for step in steps:
            step = moved_step(step, Path(prefix), into) if prefix else step
            if isinstance(step, Plant):
                Path(step.path).parent.mkdir(parents=True, exist_ok=True)
                Path(step.path).write_bytes(step.data)
                model.plant(step.path, step.data)
                done.append(step)
            else:
                judge(s, model, step, done, base=into)
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
