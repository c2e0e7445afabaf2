"""One step of the bash state machine: what a step is and what it is judged with.

- :class:`Ctx`: one example's session, the :class:`~conformance.properties.bash_model.SessionModel`
  of what it must hold, and the tool inputs sent so far; :meth:`Ctx.send` turns a hang or a fault
  into a disagreement, :meth:`Ctx.expect_status` judges ``is_error``;
- :class:`Disagreement`: the subject answered or held state outside what the model allows (its
  :attr:`~Disagreement.key` names the kind of state or answer that was wrong);
- :class:`Op`: a step (sends one or more inputs and judges them); :class:`Part`: one simple
  command of a chained command line.

The steps themselves: :mod:`~conformance.properties.bash_commands` (state-changing commands and
failing ones), :mod:`~conformance.properties.bash_outputs`, :mod:`~conformance.properties.bash_errors`
(syntax errors, commands past the timeout), :mod:`~conformance.properties.bash_background`,
:mod:`~conformance.properties.bash_restart`, :mod:`~conformance.properties.bash_read_back`.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from conformance.properties.bash_model import SessionModel, readable
from conformance.reproducers import setup_step
from conformance.session import ToolResult, ToolSession, faults_of
from conformance.subjects.isolation import grace_for


def lines_of(r: ToolResult) -> list[str]:
    return readable(r.text).split("\n")


# --- disagreements ------------------------------------------------------------------------------

class Disagreement(Exception):
    """The subject answered or held state outside what the model allows."""

    def __init__(self, key: str, message: str, received: Any, documented: Any) -> None:
        super().__init__(message)
        self.key, self.message = key, message
        self.received, self.documented = received, documented
        #: The steps of the example up to this one, and the tool inputs they sent.
        self.ops: list[Op] = []
        self.inputs: list[dict[str, Any]] = []
        #: The example's directory (the inputs' paths are in it).
        self.base = ""
        #: Directories the example made behind the subject's back before its first input.
        self.planted: list[str] = []
        #: Whether the reproducer, replayed as printed on a fresh subject, showed this
        #: disagreement again (:func:`conformance.reproducers.verdict_of`; empty: not replayed).
        self.reproduced = ""

    def _onto(self, text: str, onto: str | None) -> str:
        return text.replace(self.base, onto) if onto is not None and self.base else text

    def moved(self, onto: str) -> Disagreement:
        """This disagreement with the example's directory replaced by ``onto`` in its message,
        received and documented values (the reproducer: :meth:`reproducer`, :meth:`setup`)."""
        def move(value: Any) -> Any:
            if isinstance(value, str):
                return self._onto(value, onto)
            if isinstance(value, list):
                return [move(v) for v in value]
            if isinstance(value, dict):
                return {k: move(v) for k, v in value.items()}
            return value

        out = Disagreement(self.key, move(self.message), move(self.received),
                           move(self.documented))
        out.ops, out.inputs, out.planted = self.ops, self.reproducer(onto), self.setup_paths(onto)
        out.base, out.reproduced = onto, self.reproduced
        return out

    def setup_paths(self, onto: str | None = None) -> list[str]:
        return [self._onto(d, onto) for d in self.planted]

    def reproducer(self, onto: str | None = None) -> list[dict[str, Any]]:
        """The tool inputs, with the example's directory replaced by ``onto``."""
        return [{k: (self._onto(v, onto) if isinstance(v, str) else v) for k, v in i.items()}
                for i in self.inputs]

    def setup(self, onto: str | None = None) -> list[dict[str, Any]]:
        """What the example planted, as setup steps before input 1
        (:func:`conformance.reproducers.setup_step`), moved like :meth:`reproducer`."""
        return [setup_step(1, d, directory=True) for d in self.setup_paths(onto)]


@dataclass
class Ctx:
    """One example's subject, model and the inputs sent so far."""

    s: ToolSession
    m: SessionModel
    inputs: list[dict[str, Any]] = field(default_factory=list)
    #: The kind of the last step that can disturb a session (timeout, output, background...).
    after: str = "start"
    #: Names whose value a restart cleared (a later read-back showing the old value: not
    #: cleared).
    cleared: set[str] = field(default_factory=set)
    #: False after a step that can disturb a session until a later step was answered as
    #: expected: a wrong answer then is that step's doing.
    settled: bool = True
    #: Directories made behind the subject's back (setup steps of the reproducer).
    planted: list[str] = field(default_factory=list)

    def disturbed(self, kind: str) -> None:
        self.after, self.settled = kind, False

    @property
    def deadline(self) -> float:
        timeout = float(getattr(self.s, "timeout", 3.0) or 3.0)
        return timeout + grace_for(timeout)

    def send(self, tool_input: dict[str, Any], kind: str) -> ToolResult:
        self.inputs.append(tool_input)
        before = len(faults_of(self.s))
        r = self.s.call(tool_input, deadline=self.deadline)
        faults = faults_of(self.s)[before:]
        if r.timed_out:
            raise Disagreement(f"hang:{kind}", f"{shown_input(tool_input)} was not answered within "
                               f"{self.deadline:g}s (the command timeout and a grace period)",
                               r.to_json(), "an answer in time")
        if faults:
            raise Disagreement(f"fault:{kind}", f"{shown_input(tool_input)}: the subject faulted "
                               f"({'; '.join(faults)[:200]})", r.to_json(), "an answer")
        return r

    def expect_status(self, r: ToolResult, status: str, what: str) -> None:
        """``status``: ok (is_error false), fail (is_error true) or either."""
        if status == "either" or r.is_error == (status == "fail"):
            return
        if not self.settled and status == "ok":
            raise Disagreement(f"missing-after:{self.after}", f"after a {self.after} step, "
                               f"{what} was answered with an error: the session does not work",
                               r.to_json(), {"is_error": status == "fail"})
        if status == "fail":
            raise Disagreement("flag:failure-not-flagged", f"{what} failed (non-zero exit "
                               "status) but the result is not flagged is_error",
                               r.to_json(), {"is_error": True})
        raise Disagreement("flag:success-flagged", f"{what} succeeded (exit status 0) but was "
                           "answered with is_error: true", r.to_json(), {"is_error": False})


def shown_input(tool_input: dict[str, Any]) -> str:
    if tool_input.get("restart") is True:
        return "restart"
    command = str(tool_input.get("command", ""))
    return f"`{command[:80]}{'…' if len(command) > 80 else ''}`"


def path_text(m: SessionModel, path: str) -> str:
    """A path as a model writes it: relative to a known working directory, else absolute."""
    cwd = m.known_cwd()
    if cwd is not None:
        rel = os.path.relpath(path, cwd)
        if not rel.startswith(".."):
            return shlex.quote(rel)
    return shlex.quote(path)


def target_path(m: SessionModel, name: str) -> str:
    """Where a file named ``name`` goes: the known working directory, else the example's."""
    return os.path.join(m.known_cwd() or m.base, name)


class Part:
    """One simple command of a chained command line."""

    status = "ok"

    def text(self, m: SessionModel) -> str:
        raise NotImplementedError

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        pass


class Op:
    """One step of an example: sends one or more inputs and judges them against the model."""

    kind = "command"

    def run(self, ctx: Ctx) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


def short(r: ToolResult) -> dict[str, Any]:
    text = r.text
    shown = text if len(text) <= 400 else f"{text[:250]}…[{len(text)} characters]…{text[-100:]}"
    return {"content": shown, "is_error": r.is_error}
