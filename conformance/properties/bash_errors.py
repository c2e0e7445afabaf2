"""Bash steps that go wrong on purpose: a syntax error (seed 003 "Handle errors": answered with an
error; the session keeps working, holding its state or as a fresh session, or a restart brings it
back) and a command past the command timeout (seed 003 "Use command timeouts": an error answer in
time; afterwards every piece of state is what it was or what a fresh session has)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.properties.bash_model import parse_read_back, read_back_command, readable
from conformance.properties.bash_read_back import judge_read_back
from conformance.properties.bash_step import Ctx, Disagreement, Op, lines_of

#: Syntax errors (bash exits 2 on each).
SYNTAX_ERRORS = ("echo 'unclosed", "if true; then echo x", "echo )", "for x in; do")


@dataclass
class SyntaxError_(Op):
    """A command with a syntax error: answered with an error; then the session works, either
    holding its state or as a fresh session, or ``restart: true`` brings it back.

    Judged by what the session does, not by what the answers say. Seed 003's own
    ``BashSession`` feeds commands to a non-interactive bash through a pipe, and a syntax error
    (``echo )``) ends such a shell; completed as the seed asks ("When a command fails or the
    session breaks, tell Claude what happened", "Handle errors"), the tool restarts it and the
    next command runs in a fresh session. So the probe after the error is a read-back, and the
    state it shows may be the one kept (the shell lived) or, as a whole, a fresh session's (the
    shell ended and was replaced, said or not): from there the model is the one that agreed.
    Whether a broken session's answers said a restart is needed is
    ``bash.errors.syntax_error_recovers``' question, a SHOULD: when the probe does not work the
    machine restarts as a model would, asked or not, and asserts only that the restart brings
    the session back (a shell that a syntax error ends for good, as the SDK agent toolset's does
    for ``if true; then``)."""

    index: int
    kind = "syntax"

    def run(self, ctx: Ctx) -> None:
        command = SYNTAX_ERRORS[self.index]
        r = ctx.send({"command": command}, self.kind)
        ctx.expect_status(r, "fail", f"`{command}` (a syntax error)")
        ctx.disturbed(self.kind)
        probe = ctx.send({"command": read_back_command(ctx.m)}, self.kind)
        if not probe.is_error and "cwd" in parse_read_back(lines_of(probe)):
            judge_read_back(ctx, probe, or_fresh=True)  # the session works: kept or fresh
            return
        asked = any(x.is_error and "restart" in readable(x.text).lower() for x in (r, probe))
        rr = ctx.send({"restart": True}, self.kind)
        ctx.m.restart()
        again = ctx.send({"command": "echo tu-probe-ok"}, self.kind)
        if not rr.is_error and any(x.strip() == "tu-probe-ok" for x in lines_of(again)):
            return
        raise Disagreement("syntax:broken", f"after `{command}` the session does not work, not "
                           "even after `restart: true`"
                           + ("" if asked else " (and no answer asked for a restart)"),
                           [r.to_json(), probe.to_json(), rr.to_json(), again.to_json()],
                           "tu-probe-ok")


@dataclass
class Timeout(Op):
    """A command past the command timeout: an error answer in time; the session works."""

    kind = "timeout"

    def run(self, ctx: Ctx) -> None:
        timeout = float(getattr(ctx.s, "timeout", 3.0) or 3.0)
        command = f"sleep {max(120, int(timeout * 4))}"
        r = ctx.send({"command": command}, self.kind)
        ctx.disturbed(self.kind)
        if not r.is_error:
            raise Disagreement("timeout:not-flagged", f"`{command}` ran past the {timeout:g}s "
                               "timeout and was not answered with an error", r.to_json(),
                               {"is_error": True})
        ctx.m.after_timeout()
