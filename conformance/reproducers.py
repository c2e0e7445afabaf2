"""Reproducers that outlive their case: paths relative to the case's working directory.

Every case runs in a fresh temporary directory that is removed when the case ends, so an absolute
path such as ``/tmp/tooluse-run-x/tooluse-editor.view.x-abc/notes.txt`` in a reproducer or a
message names nothing by the time anyone reads the report. :func:`relativize` rewrites such paths
with placeholders:

- ``$TOOLUSE_WORKDIR``: the case's working directory (the subject's cwd; command subjects get the
  same name as an environment variable);
- ``$HOME`` and ``$TMPDIR``: the throwaway home and temporary directories the subject was given.

The placeholders stay in absolute form (``$TOOLUSE_WORKDIR/notes.txt``, not ``./notes.txt``) on
purpose: the suite sends absolute paths, and some text editor tools accept nothing else (seed
001's examples use relative ones; ``editor.paths.relative_paths`` reports which). To replay
a reproducer, make an empty directory and substitute it for the placeholder in every string
(:func:`materialize` does that), then send the inputs in order; files a check planted are part
of the reproducer as ``create`` inputs (see ``conformance.checks.editor_support.reproducer``).
In a bash reproducer ``$TOOLUSE_WORKDIR`` also works unsubstituted when the tool exports it.

What a check planted behind the subject's back is a ``setup`` step ("before input 1, write ..."),
never a tool call (:func:`setup_step`, :func:`describe_setup`, :func:`apply_setup`).

Verification (any tool family): :func:`replay_fresh_subject` replays a reproducer exactly as
printed on a fresh subject and asks a judge whether the failure showed again; :func:`verdict_of`
turns that into the result's ``reproduced`` (``verified`` / ``did not reproduce``). The model
checks (:mod:`conformance.properties.editor`, :mod:`conformance.properties.bash_machine`: with a
``drive`` that judges each answer as it comes) and the editor and bash checks' ``fail`` use it.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.results import NOT_REPRODUCED, VERIFIED, CheckResult
from conformance.wording import shown_bytes

#: The placeholder for the case's working directory.
WORKDIR = "$TOOLUSE_WORKDIR"
HOME = "$HOME"
TMPDIR = "$TMPDIR"

#: A path ends where no path-name character follows (``/``, quotes, spaces, ``.`` at the end of a
#: sentence and punctuation all end it).
_END = r"(?![A-Za-z0-9_\-])"


def _patterns(workdir: Path) -> list[tuple[re.Pattern[str], str]]:
    forms = {str(workdir)}
    try:
        forms.add(str(workdir.resolve()))
    except OSError:  # pragma: no cover - resolve() of a removed directory does not fail on POSIX
        pass
    out: list[tuple[re.Pattern[str], str]] = []
    for form in sorted(forms, key=len, reverse=True):
        parent = re.escape(str(Path(form).parent).rstrip("/"))
        # The subject's HOME and TMPDIR live next to the working directory (process.py).
        out.append((re.compile(parent + r"/tooluse-home-[A-Za-z0-9_]+/home" + _END), HOME))
        out.append((re.compile(parent + r"/tooluse-home-[A-Za-z0-9_]+/tmp" + _END), TMPDIR))
        out.append((re.compile(re.escape(form.rstrip("/")) + _END), WORKDIR))
    return out


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(_map_strings(v, fn) for v in value)
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    return value


def relativize_value(value: Any, workdir: Path) -> Any:
    """``value`` (any JSON-like value) with the case's directories replaced by placeholders."""
    pats = _patterns(Path(workdir))

    def fn(text: str) -> str:
        if "/" not in text:
            return text
        for pat, repl in pats:
            text = pat.sub(repl, text)  # placeholders hold no backslash: used literally
        return text

    return _map_strings(value, fn)


# --- bash commands: placeholders a shell expands ------------------------------------------------
#
# A bash reproducer's commands are shell text, and a placeholder is also the name of an
# environment variable of the subject (``$TOOLUSE_WORKDIR``, ``$HOME``, ``$TMPDIR``). Written
# into single quotes as plain text (``cd '$TOOLUSE_WORKDIR/gamma dir'``) a shell would not expand
# it: the command replays only when the placeholder is replaced as text. So inside single quotes
# a placeholder is printed as a double-quoted expansion between the quotes
# (``cd ''"$TOOLUSE_WORKDIR"'/gamma dir'``; in ``$'...'``: ``'"$TOOLUSE_WORKDIR"$'``), and the
# command runs as printed in bash with the variable set, or with the placeholder replaced as text
# (:func:`materialize` turns those forms back into the very text the check sent). Elsewhere
# (unquoted, in double quotes) ``$TOOLUSE_WORKDIR`` already expands and is left as it is.

#: How a placeholder is printed inside single quotes and inside ``$'...'``.
_IN_QUOTES = "'\"{}\"'"
_IN_ANSI_C = "'\"{}\"$'"


def shell_relativize(command: str, workdir: Path) -> str:
    """``command`` (bash text) with the case's directories replaced by placeholders a shell
    expands wherever they stand (see above)."""
    if "/" not in command:
        return command
    pats = _patterns(Path(workdir))
    out: list[str] = []
    state = ""  # "", "'" (single quotes), '"' (double quotes), "$'" (ANSI-C quotes)
    i, n = 0, len(command)
    while i < n:
        for pat, repl in pats:
            m = pat.match(command, i)
            if m:
                out.append(_IN_QUOTES.format(repl) if state == "'"
                           else _IN_ANSI_C.format(repl) if state == "$'" else repl)
                i = m.end()
                break
        else:
            c = command[i]
            step = 1
            if state == "":
                if c == "\\":
                    step = 2
                elif c == "'":
                    state = "'"
                elif c == '"':
                    state = '"'
                elif c == "$" and command.startswith("$'", i):
                    state, step = "$'", 2
                elif c == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
                    end = command.find("\n", i)
                    step = (n if end < 0 else end) - i  # a comment: quotes in it are text
            elif state == "'":
                state = "" if c == "'" else state
            elif c == "\\":
                step = 2
            elif (state == '"' and c == '"') or (state == "$'" and c == "'"):
                state = ""
            text = command[i:i + step]
            out.append(relativize_value(text, workdir) if step > 2 else text)  # a comment
            i += step
    return "".join(out)


def relativize_inputs(inputs: Any, workdir: Path) -> Any:
    """A bash reproducer's inputs (a list of tool inputs) relativized: each ``command`` by
    :func:`shell_relativize`, everything else by :func:`relativize_value`."""
    if not isinstance(inputs, list):
        return relativize_value(inputs, workdir)
    return [relativize_value(x, workdir) if not isinstance(x, dict) else
            {k: (shell_relativize(v, workdir) if k == "command" and isinstance(v, str)
                 else relativize_value(v, workdir)) for k, v in x.items()}
            for x in inputs]


def relativize(result: CheckResult, workdir: Path) -> CheckResult:
    """A copy of ``result`` whose message, received and documented values, reproducer and
    observed text name the case's directory as ``$TOOLUSE_WORKDIR`` (and the subject's throwaway
    home and temporary directories as ``$HOME`` and ``$TMPDIR``); a bash reproducer's commands
    so that a shell expands them (:func:`shell_relativize`)."""
    def rel(v: Any) -> Any:
        return relativize_value(v, workdir)

    inputs = (relativize_inputs(list(result.reproducer), workdir) if result.family == "bash"
              else rel(list(result.reproducer)))
    return dataclasses.replace(
        result, message=rel(result.message), received=rel(result.received),
        documented=rel(result.documented), reproducer=inputs,
        setup=rel(list(result.setup)),
        observed=rel(result.observed), rejudged=rel(result.rejudged))


def materialize(value: Any, workdir: str | Path) -> Any:
    """The inverse, to replay a reproducer: every ``$TOOLUSE_WORKDIR`` in ``value``'s strings
    replaced by ``workdir`` (an absolute path to a directory of your own), the quoted forms of a
    bash command (:func:`shell_relativize`) included, so the command is again the one sent::

        inputs = materialize(result["reproducer"], Path("/tmp/replay").resolve())
    """
    target = str(workdir).rstrip("/") or "/"
    quoted = (_IN_QUOTES.format(WORKDIR), _IN_ANSI_C.format(WORKDIR))

    def fn(s: str) -> str:
        if WORKDIR not in s:
            return s
        for form in quoted:  # a bash command's placeholder in quotes (shell_relativize)
            s = s.replace(form, target)
        return s.replace(WORKDIR, target)

    return _map_strings(value, fn)


# --- what a reproducer plants, stated as such --------------------------------------------------
#
# Files, directories and symlinks a check puts in place behind the subject's back are part of the
# reproducer, but they are not tool calls: each is a ``setup`` step naming the input it comes
# before (1-based; ``len(inputs) + 1``: after the last one), e.g.
# ``{"before_input": 1, "path": "$TOOLUSE_WORKDIR/a.txt", "text": "one\n"}``. Exactly one of
# ``text`` (UTF-8 contents), ``bytes`` (a Python bytes literal), ``directory`` (true) or
# ``symlink_to`` (the link's target) says what to make. A path outside the case's directory is
# still written relative to it (``$TOOLUSE_WORKDIR.outside/secret.txt``: a sibling), so that the
# reproducer plants it itself.


def setup_step(before_input: int, path: str, *, data: bytes | None = None,
               directory: bool = False, symlink_to: str | None = None) -> dict[str, Any]:
    """One setup step (see above): a file with ``data``, a ``directory`` or a symlink."""
    step: dict[str, Any] = {"before_input": before_input, "path": path}
    if directory:
        step["directory"] = True
    elif symlink_to is not None:
        step["symlink_to"] = symlink_to
    else:
        raw = data or b""
        try:
            step["text"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            step["bytes"] = repr(raw)
    return step


def setup_data(step: dict[str, Any]) -> bytes | None:
    """The bytes a file step writes (None for a directory or a symlink)."""
    if "text" in step:
        return str(step["text"]).encode("utf-8")
    if "bytes" in step:
        value = ast.literal_eval(str(step["bytes"]))
        if not isinstance(value, bytes):
            raise ValueError(f"setup step {step!r}: 'bytes' is not a bytes literal")
        return value
    return None


def describe_setup(step: dict[str, Any], limit: int = 200) -> str:
    """``before input 1, write $TOOLUSE_WORKDIR/a.txt with "one\\n"`` (how reports print it:
    the content quoted, escapes only for what does not print, ``\\xNN`` for a byte that is not
    UTF-8; never a Python repr)."""
    where = f"before input {step['before_input']}"
    if step.get("directory"):
        return f"{where}, make the directory {step['path']}"
    if "symlink_to" in step:
        return f"{where}, make {step['path']} a symbolic link to {step['symlink_to']}"
    data = setup_data(step)
    shown = shown_bytes(data, limit) if data else "nothing (an empty file)"
    return f"{where}, write {step['path']} (parent directories included) with {shown}"


#: How each family's reproducer is verified, as the reports say it, and a note: a loop's or a
#: worker's reproducer is the requests it sent, its output, so what is run again is the check.
_REPLAYED: dict[str, tuple[str, str]] = {
    "loop": ("the check's conversations, driven again by a fresh loop against a fresh "
             "simulation", " (the requests shown are what the loop sent: a loop is replayed by "
             "its scenario, as the rerun line does)"),
    "worker": ("the check, run again with a fresh worker against a fresh simulation",
               " (the requests shown are what the worker sent: a worker is replayed by the "
               "check's scenario, as the rerun line does)"),
}
_REPLAYED_DEFAULT = ("replayed exactly as written on a fresh subject", "")


def describe_reproduced(status: str, family: str = "") -> str:
    """How reports say whether the reproducer was verified (``family``: the check's, which
    says how it was replayed)."""
    how, note = _REPLAYED.get(family, _REPLAYED_DEFAULT)
    if status == "verified":
        return f"verified: {how}, it showed the failure again{note}"
    if status == "did not reproduce":
        return (f"did not reproduce: {how}, it did not show the failure (it may depend on "
                f"timing or on state it does not set up){note}")
    return "not verified (not replayed on a fresh subject)"


def apply_setup(steps: list[dict[str, Any]], before_input: int, workdir: Path,
                made: list[Path] | None = None) -> None:
    """Carry out the setup steps that come before input ``before_input``, with
    ``$TOOLUSE_WORKDIR`` standing for ``workdir``. Top-level folders created outside ``workdir``
    are appended to ``made`` (for :func:`remove_outside`)."""
    for step in steps:
        if int(step["before_input"]) != before_input:
            continue
        path = Path(materialize(str(step["path"]), workdir))
        if made is not None and not _inside(path, workdir):
            top = _outside_top(path, workdir)
            if top not in made and not top.exists():
                made.append(top)
        if step.get("directory"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if "symlink_to" in step:
            path.symlink_to(materialize(str(step["symlink_to"]), workdir))
        else:
            path.write_bytes(setup_data(step) or b"")


def remove_outside(made: list[Path]) -> None:
    """Remove what :func:`apply_setup` created outside the case's directory."""
    for top in made:
        shutil.rmtree(top, ignore_errors=True)


def _inside(path: Path, workdir: Path) -> bool:
    rel = os.path.relpath(os.path.normpath(path), os.path.normpath(workdir))
    return not rel.startswith("..")


def _outside_top(path: Path, workdir: Path) -> Path:
    """The first folder (or file) of ``path`` that does not exist yet, near the workdir."""
    p = Path(os.path.normpath(path))
    while not p.parent.exists() and p.parent != p:
        p = p.parent
    return p


# --- verifying a reproducer before it is printed ------------------------------------------------

@dataclass
class Replayed:
    """What a reproducer did when replayed (:func:`replay_fresh_subject`)."""

    #: The fresh directory it ran in (``$TOOLUSE_WORKDIR`` of the replay); removed afterwards,
    #: so a judge reads what it needs while it runs.
    workdir: Path
    #: One result per input, in order.
    results: list[Any] = field(default_factory=list)
    #: Faults the fresh subject's session recorded (hang, exit, bad answer).
    faults: list[str] = field(default_factory=list)
    #: The fresh subject's session (still open while the judge runs: a judge may look at its
    #: processes, e.g. ``host_pid``).
    session: Any = None


class ReplayMismatch(Exception):
    """A replay's driver sent an input other than the next one printed (a harness bug: the
    printed reproducer is not what the check ran)."""


class _AsPrinted:
    """The fresh session as a driver sees it: each call must be the next printed input (its
    setup steps are carried out before it); everything else is the fresh session's."""

    def __init__(self, fresh: Any, inputs: list[dict[str, Any]], setup: list[dict[str, Any]],
                 out: Replayed, made: list[Path]) -> None:
        self._fresh, self._inputs, self._setup, self._out, self._made = (
            fresh, inputs, setup, out, made)

    @property
    def sent(self) -> int:
        return len(self._out.results)

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> Any:
        i = self.sent
        if i >= len(self._inputs) or tool_input != self._inputs[i]:
            printed = self._inputs[i] if i < len(self._inputs) else "(none: the reproducer ended)"
            raise ReplayMismatch(f"replay input {i + 1} is {tool_input!r}, printed: {printed!r}")
        apply_setup(self._setup, i + 1, self._out.workdir, self._made)
        result = self._fresh.call(tool_input, deadline=deadline)
        self._out.results.append(result)
        return result

    def __getattr__(self, name: str) -> Any:  # timeout, workdir, faults, host_pid, ...
        return getattr(self._fresh, name)


_REPLAYS = itertools.count()


def replay_fresh_subject(session: Any, inputs: list[dict[str, Any]],
                         setup: list[dict[str, Any]], judge: Callable[[Replayed], bool | None],
                         *, drive: Callable[[Any, Path], None] | None = None,
                         ) -> bool | None:
    """Replay a reproducer exactly as written, on a fresh instance of ``session``'s subject
    (:func:`conformance.session.spawn`) in a fresh, empty directory: ``setup`` steps before the
    inputs they name, ``$TOOLUSE_WORKDIR`` standing for that directory (inputs and setup in the
    printed, placeholder form: :func:`relativize_value`). ``judge`` says, while the directory
    and the fresh subject still exist, whether the replay showed the failure; None when no
    fresh subject could be started (the caller reports the reproducer as not verified).
    Everything the replay made, inside the directory or outside it, is removed.

    ``drive(session, workdir)``, when given, sends the inputs itself (a model check judging each
    answer as it comes, with the replay's directory as its base): every call it makes must be
    the next printed input (:class:`ReplayMismatch` otherwise), so what is judged is still the
    reproducer as printed; inputs it did not send are sent after it returns."""
    from conformance.session import spawn

    # Named like the case's directory (in a folder of its own): a reproducer that reaches a
    # sibling of the case's directory by name (``$TOOLUSE_WORKDIR/../<its name>.outside``)
    # replays as printed.
    box = Path(session.workdir) / f".tooluse-replay-{next(_REPLAYS)}"
    where = box / Path(session.workdir).name
    where.mkdir(parents=True)
    made: list[Path] = []
    try:
        try:
            fresh = spawn(session, where)
        except Exception:  # a subject that does not start again: nothing verified
            return None
        if fresh is None:
            return None
        try:
            out = Replayed(where, session=fresh)
            printed = materialize(inputs, where)
            steps = materialize(setup, where)
            driven = _AsPrinted(fresh, printed, steps, out, made)
            if drive is not None:
                drive(driven, where)
            for tool_input in printed[driven.sent:]:
                driven.call(tool_input)
            apply_setup(steps, len(inputs) + 1, where, made)
            faults = getattr(fresh, "faults", None)
            out.faults = list(faults) if isinstance(faults, list) else []
            return judge(out)
        finally:
            fresh.close()
    finally:
        remove_outside(made)
        shutil.rmtree(box, ignore_errors=True)


def verdict_of(reproduced: bool | None) -> str:
    """:data:`~conformance.results.VERIFIED`, :data:`~conformance.results.NOT_REPRODUCED` or
    ``""`` (not replayed) for what :func:`replay_fresh_subject` returned."""
    if reproduced is None:
        return ""
    return VERIFIED if reproduced else NOT_REPRODUCED
