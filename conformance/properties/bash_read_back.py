"""The bash read-back step: one command printing every piece of session state as ``@key=value``
lines, compared with the model (each value must be one the model allows), and the files the
commands wrote read from disk."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.properties.bash_commands import check_files
from conformance.properties.bash_model import (
    INITIAL,
    Mismatch,
    compare,
    parse_read_back,
    read_back_command,
)
from conformance.properties.bash_step import Ctx, Disagreement, Op, lines_of, short
from conformance.session import ToolResult


@dataclass
class ReadBack(Op):
    """One command printing every piece of state; each must be in the model's set."""

    kind = "read-back"

    def run(self, ctx: Ctx) -> None:
        r = ctx.send({"command": read_back_command(ctx.m)}, self.kind)
        judge_read_back(ctx, r)


def judge_read_back(ctx: Ctx, r: ToolResult, *, or_fresh: bool = False) -> None:
    """Judge the answer ``r`` to a read-back against the model (narrowing it on agreement).
    ``or_fresh``: the state may also be a fresh session's, as a whole (the shell ended and a new
    one took its place: seed 003 "Handle errors", "when ... the session breaks"); when only
    that agrees, the model becomes the restarted one from here on."""
    m = ctx.m
    shown = parse_read_back(lines_of(r))
    before = m.copy()
    mismatches = compare(m, shown)
    if mismatches and or_fresh and "cwd" in shown:
        fresh = before.copy()
        fresh.restart()
        if not compare(fresh, shown):
            ctx.m, m, mismatches = fresh, fresh, []
    if r.is_error and not any(x.component == "missing" for x in mismatches):
        ctx.expect_status(r, "ok", "the read-back command")
    check_files(ctx, r)
    if not mismatches:
        ctx.settled = True
        ctx.cleared.clear()
        return
    first = mismatches[0]
    if first.component == "missing":
        key = f"missing-after:{ctx.after}" if not ctx.settled else "missing"
        message = (f"the read-back's output is not in its result (after a {ctx.after} "
                   "step): the session lost or shifted output")
    elif first.name in ctx.cleared or (first.component == "cwd" and "cwd" in ctx.cleared
                                        and before.cwd == {INITIAL}):
        key = f"restart-kept:{first.component}"
        message = f"{first.name} kept its value across a restart ({first.shown})"
    else:
        key = f"state:{first.component}"
        message = (f"the session does not hold {_named(first.component, first.name)} "
                   f"the commands set: shows {first.shown}, expected {first.allowed}"
                   + (" (nor a fresh session's)" if or_fresh else ""))
    raise Disagreement(key, message, short(r), documented_state(mismatches))


def documented_state(mismatches: list[Mismatch]) -> str:
    """What the model allows for each part of the state that disagreed, in words: ``the umask:
    "0027"; the function tu_fn_one: "x19"`` (never a Python repr)."""
    return "; ".join(f"{x.name}: {x.allowed}" if x.component == "missing"
                     else f"{_named(x.component, x.name)}: {x.allowed}" for x in mismatches)


def _named(component: str, name: str) -> str:
    """``the shell variable TU_A``, ``the umask`` (no noun of its own: not ``the  umask``)."""
    return " ".join(w for w in ("the", _noun(component), name) if w)


def _noun(component: str) -> str:
    return {"cwd": "current", "var": "shell variable", "env": "exported variable", "fn": "function",
            "alias": "alias", "umask": "", "shopt": "shell option"}.get(component, component)
