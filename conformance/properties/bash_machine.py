"""The bash state machine: generated command sequences against fresh bash subjects, compared with
:class:`~conformance.properties.bash_model.SessionModel` (what the session must hold).

Steps (:class:`Op`) are what a model writes: state-changing commands (``cd``, exported and plain
variables, ``VAR=x cmd`` prefixes, functions, aliases, ``umask``, ``shopt``, files written with
``>``, ``>>`` and here-documents, ``rm``), chained with ``;``, ``&&`` or newlines and mixed with
commands that fail in different ways (non-zero exit, command not found, a failing command in a
pipeline, a missing file), syntax errors, output of every size (none, a few lines, past any
truncation, one long line, stderr, no final newline), background jobs in the forms models write
(:data:`BACKGROUND_FORMS`), a command past the timeout, restarts and read-backs (one command
printing every piece of state as ``@key=value`` lines).

How a run goes (:func:`explore_bash_model`):

- **Deterministic.** A fixed number of examples (``max_examples``) of at most ``steps`` steps,
  derandomized; every example is generated whatever the subject answers (a disagreement ends
  its example, never the run), so the examples are the same on every run. The wall-time cap
  (:data:`CAP_TIMEOUTS` command timeouts) does not decide how many examples run: a run that hits
  it is **incomplete** (:attr:`BashModelReport.incomplete`), neither a pass nor a failure.
- **A fresh subject per example** in a fresh directory (:func:`conformance.session.spawn`),
  started one example ahead so start-up overlaps the previous example.
- **Every distinct disagreement** (:attr:`Disagreement.key`: what kind of state or answer was
  wrong) is kept with its smallest example, minimized by deleting steps (each try replayed on a
  fresh subject), then **verified**: the minimal reproducer is replayed once more on a fresh
  subject and marked verified or not reproduced.
- **One defect, one check.** Each key names the fixed bash checks that report the same defect
  (:data:`REPORTED_BY`); when one of them fails on this subject (run once, on a fresh subject),
  the finding is set aside (:attr:`BashModelReport.set_aside`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import Phase
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from conformance.properties.bash_model import (
    ALIASES,
    FUNCTIONS,
    INITIAL,
    SHOPTS,
    SUBDIRS,
    VARIABLES,
    Job,
    SessionModel,
    compare,
    parse_read_back,
    read_back_command,
    readable,
)
from conformance.properties.exploration import (
    Budget,
    StopExploring,
    explore,
    hypothesis_turn,
    quiet_settings,
)
from conformance.session import ToolResult, ToolSession, faults_of, spawn
from conformance.subjects.isolation import alive, grace_for, processes_supported

#: Examples per run and steps per example (fixed: the run is the same on every subject).
DEFAULT_EXAMPLES = 20
DEFAULT_STEPS = 8
#: The run's wall-time cap, in command timeouts (at least :data:`MIN_CAP_SECONDS`); hitting it
#: makes the run incomplete.
CAP_TIMEOUTS = 30
MIN_CAP_SECONDS = 60.0
#: Share of the cap for generating; the rest is for minimizing, verifying and setting aside.
EXPLORE_SHARE = 0.7
#: The examples (by number, from 1) that send a command past the timeout: the first time the
#: machine draws one, or else just before their final read-back.
TIMEOUT_EXAMPLES = (6,)
#: The kinds of step a rule draws from (repeats weigh a kind).
KINDS = ("command", "command", "command", "read-back", "read-back", "output", "syntax",
         "background", "background", "restart", "restart", "timeout")
#: Example subjects started ahead (start-up overlaps the examples before them).
PREFETCH = 2
#: Tries to delete a step while minimizing one finding.
MINIMIZE_TRIES = 40


def _lines(r: ToolResult) -> list[str]:
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
        #: None: not replayed; True: the reproducer showed it again on a fresh subject.
        self.verified: bool | None = None

    def reproducer(self, onto: str | None = None) -> list[dict[str, Any]]:
        """The tool inputs, with the example's directory replaced by ``onto``."""
        if onto is None or not self.base:
            return [dict(i) for i in self.inputs]
        return [{k: (v.replace(self.base, onto) if isinstance(v, str) else v)
                 for k, v in i.items()} for i in self.inputs]


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
            raise Disagreement(f"hang:{kind}", f"{_what(tool_input)} was not answered within "
                               f"{self.deadline:g}s (the command timeout and a grace period)",
                               r.to_json(), "an answer in time")
        if faults:
            raise Disagreement(f"fault:{kind}", f"{_what(tool_input)}: the subject faulted "
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


def _what(tool_input: dict[str, Any]) -> str:
    if tool_input.get("restart") is True:
        return "restart"
    command = str(tool_input.get("command", ""))
    return f"`{command[:80]}{'…' if len(command) > 80 else ''}`"


# --- the steps ------------------------------------------------------------------------------------

def _path_text(m: SessionModel, path: str) -> str:
    """A path as a model writes it: relative to a known working directory, else absolute."""
    cwd = m.known_cwd()
    if cwd is not None:
        rel = os.path.relpath(path, cwd)
        if not rel.startswith(".."):
            return shlex.quote(rel)
    return shlex.quote(path)


def _target(m: SessionModel, name: str) -> str:
    """Where a file named ``name`` goes: the known working directory, else the example's."""
    return os.path.join(m.known_cwd() or m.base, name)


class Part:
    """One simple command of a chained command line."""

    status = "ok"

    def text(self, m: SessionModel) -> str:
        raise NotImplementedError

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        pass


@dataclass
class Cd(Part):
    target: str  # one of SUBDIRS, or ".."

    def resolve(self, m: SessionModel) -> str:
        cwd = m.known_cwd()
        if self.target == "..":
            if cwd is None or os.path.dirname(cwd) in ("", "/"):
                return m.base
            return os.path.dirname(cwd) if cwd != m.base else m.base
        return os.path.join(m.base, self.target)

    def text(self, m: SessionModel) -> str:
        if self.target == ".." and m.known_cwd() not in (None, m.base):
            return "cd .."
        return f"cd {_path_text(m, self.resolve(m))}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.cwd = {self.resolve(m)}
        ctx.cleared.discard("cwd")


@dataclass
class SetVar(Part):
    name: str
    value: str
    form: str  # export, plain, declare, prefix

    def text(self, m: SessionModel) -> str:
        v = shlex.quote(self.value)
        return {"export": f"export {self.name}={v}", "plain": f"{self.name}={v}",
                "declare": f"declare -x {self.name}={v}",
                "prefix": f"{self.name}={v} true"}[self.form]

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        if self.form == "prefix":  # an assignment before a command is for that command only
            return
        m.set_var(self.name, self.value, None if self.form == "plain" else True)
        ctx.cleared.discard(self.name)


@dataclass
class Unset(Part):
    name: str

    def text(self, m: SessionModel) -> str:
        return f"unset {self.name}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.unset_var(self.name)


@dataclass
class DefFn(Part):
    name: str
    word: str | None  # None: unset -f
    keyword: bool = False

    def text(self, m: SessionModel) -> str:
        if self.word is None:
            return f"unset -f {self.name}"
        body = f"{{ echo {shlex.quote(self.word)}; }}"
        return f"function {self.name} {body}" if self.keyword else f"{self.name}() {body}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.functions[self.name] = {self.word}


@dataclass
class DefAlias(Part):
    name: str
    word: str | None  # None: unalias

    def text(self, m: SessionModel) -> str:
        if self.word is None:
            return f"{{ unalias {self.name} 2>/dev/null; true; }}"
        return (f"{{ shopt -s expand_aliases; alias "
                f"{self.name}={shlex.quote('echo ' + shlex.quote(self.word))}; }}")

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.aliases[self.name] = {self.word}


#: umask arguments and what ``umask`` then prints.
UMASKS = {"022": "0022", "027": "0027", "0077": "0077", "002": "0002", "u=rwx,g=rx,o=": "0027"}


@dataclass
class Umask(Part):
    value: str

    def text(self, m: SessionModel) -> str:
        return f"umask {self.value}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.umask = {UMASKS[self.value]}


@dataclass
class Shopt(Part):
    name: str
    on: bool

    def text(self, m: SessionModel) -> str:
        return f"shopt {'-s' if self.on else '-u'} {self.name}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        m.shopts[self.name] = {"on" if self.on else "off"}


@dataclass
class WriteFile(Part):
    name: str
    content: str | None  # None: rm -f
    form: str = ">"  # >, >>, heredoc

    def text(self, m: SessionModel, alone: bool = True) -> str:
        path = _path_text(m, _target(m, self.name))
        if self.content is None:
            return f"rm -f {path}"
        if self.form == "heredoc" and alone:  # a here-document ends its command line
            return f"cat > {path} <<'EOF'\n{self.content}\nEOF"
        return f"printf '%s\\n' {shlex.quote(self.content)} {'>>' if self.form == '>>' else '>'} {path}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        path = _target(m, self.name)
        if self.content is None:
            m.files[path] = None
        elif self.form == ">>":
            m.files[path] = (m.files.get(path) or "") + self.content + "\n"
        else:
            m.files[path] = self.content + "\n"


#: Failing commands: (command, status: fail or either).
FAILURES = (
    ("false", "fail"),
    ("(exit 3)", "fail"),
    ("tooluse_no_such_command_x", "fail"),
    ("ls /tooluse-no-such-path", "fail"),
    ("[ -f /tooluse-no-such-path ]", "fail"),
    ("true | false", "fail"),
    ("false | true", "either"),  # 0 in bash; a tool that sets pipefail says 1
    ("cat /tooluse-no-such-path | wc -l", "either"),
)


@dataclass
class Fail(Part):
    index: int

    @property
    def status(self) -> str:  # type: ignore[override]
        return FAILURES[self.index][1]

    def text(self, m: SessionModel) -> str:
        return FAILURES[self.index][0]


class Op:
    """One step of an example: sends one or more inputs and judges them against the model."""

    kind = "command"

    def run(self, ctx: Ctx) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


@dataclass
class Setup(Op):
    """Creates the example's directories. The harness makes them (no call to the subject); the
    reproducer starts with the ``mkdir -p`` input that does the same."""

    kind = "setup"

    def run(self, ctx: Ctx) -> None:
        for d in ctx.m.subdirs():
            os.makedirs(d, exist_ok=True)
        dirs = " ".join(shlex.quote(d) for d in ctx.m.subdirs())
        ctx.inputs.append({"command": f"mkdir -p {dirs}"})


@dataclass
class Command(Op):
    """Simple commands chained with ``;``, ``&&`` or newlines."""

    parts: list[Part]
    joiner: str

    def run(self, ctx: Ctx) -> None:
        scratch = ctx.m.copy()
        texts, applied, status = [], [], "ok"
        alone = len(self.parts) == 1
        for p in self.parts:
            texts.append(p.text(scratch) if not isinstance(p, WriteFile) else p.text(scratch, alone))
            if self.joiner == " && " and status == "fail":
                continue  # not run: the chain stopped at the failure
            p.apply(scratch, ctx)
            applied.append(p)
            status = p.status
        command = self.joiner.join(texts)
        r = ctx.send({"command": command}, "command")
        ctx.expect_status(r, status, f"`{command[:80]}`")
        ctx.m = scratch
        if any(isinstance(p, WriteFile) for p in applied):
            check_files(ctx, r)
        if status == "fail":
            ctx.disturbed("failure")
        else:
            ctx.settled = True


def check_files(ctx: Ctx, r: ToolResult | None = None) -> None:
    """The files the steps wrote hold what they wrote (read from disk)."""
    for path, want in sorted(ctx.m.files.items()):
        try:
            got: str | None = Path(path).read_text(errors="replace")
        except FileNotFoundError:
            got = None
        except OSError as e:
            got = f"<unreadable: {e}>"
        if got != want:
            raise Disagreement(
                "file", f"the file {path} does not hold what the commands wrote"
                f"{' (it is missing)' if got is None else ''}",
                {"file": path, "content": got, **({"result": r.to_json()} if r else {})},
                {"file": path, "content": want})


#: (command, kind); ``{n}`` is the size.
OUTPUTS = {
    "seq": "seq 1 {n}",
    "stderr": "seq 1 {n} >&2",
    "line": "head -c {n} /dev/zero | tr '\\0' x; echo",
    "partial": "printf %s tu-partial-{n}",
}


@dataclass
class Output(Op):
    """Output of some size; the answer must hold (some of) it and keep the session in step."""

    how: str
    n: int
    kind = "output"

    def run(self, ctx: Ctx) -> None:
        command = OUTPUTS[self.how].format(n=self.n)
        r = ctx.send({"command": command}, self.kind)
        if r.is_error:
            raise Disagreement(f"output:{self.how}", f"`{command}` was answered with an error",
                               _short(r), f"(some of) the output of `{command}`")
        ctx.expect_status(r, "ok", f"`{command}`")
        ctx.disturbed(self.kind)
        text = readable(r.text)
        if self.how == "partial":
            ok = f"tu-partial-{self.n}" in text
        elif self.how == "line":
            ok = "x" * min(self.n, 64) in "".join(text.split())
        else:
            numbers = [int(x.strip()) for x in text.split("\n")
                       if x.strip().isdigit() and 1 <= int(x.strip()) <= self.n]
            if self.n <= 3:
                ok = numbers == list(range(1, self.n + 1)) or set(range(1, self.n + 1)) <= set(numbers)
            else:
                ok = any(b == a + 1 == c - 1 for a, b, c in zip(numbers, numbers[1:], numbers[2:], strict=False))
        if not ok:
            key = f"output:{self.how}"
            raise Disagreement(key, f"`{command}` was answered without its output (not even "
                               "part of it, truncated in any way)", _short(r),
                               f"(some of) the output of `{command}`")


def _short(r: ToolResult) -> dict[str, Any]:
    text = r.text
    shown = text if len(text) <= 400 else f"{text[:250]}…[{len(text)} characters]…{text[-100:]}"
    return {"content": shown, "is_error": r.is_error}


#: Syntax errors (bash exits 2 on each).
SYNTAX_ERRORS = ("echo 'unclosed", "if true; then echo x", "echo )", "for x in; do")


@dataclass
class SyntaxError_(Op):
    """A command with a syntax error: answered with an error; the session keeps working, or
    ``restart: true`` brings it back. Whether a broken session's answers said a restart is
    needed is ``bash.errors.syntax_error_recovers``' question, a SHOULD: the machine restarts
    as a model would, asked or not, and asserts only that the restart brings the session back
    (a shell that a syntax error ends, as the SDK agent toolset's does for ``if true; then``)."""

    index: int
    kind = "syntax"

    def run(self, ctx: Ctx) -> None:
        command = SYNTAX_ERRORS[self.index]
        r = ctx.send({"command": command}, self.kind)
        ctx.expect_status(r, "fail", f"`{command}` (a syntax error)")
        ctx.disturbed(self.kind)
        probe = ctx.send({"command": "echo tu-probe-ok"}, self.kind)
        if not probe.is_error and any(x.strip() == "tu-probe-ok" for x in _lines(probe)):
            return
        asked = any(x.is_error and "restart" in readable(x.text).lower() for x in (r, probe))
        rr = ctx.send({"restart": True}, self.kind)
        ctx.m.restart()
        again = ctx.send({"command": "echo tu-probe-ok"}, self.kind)
        if not rr.is_error and any(x.strip() == "tu-probe-ok" for x in _lines(again)):
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


#: Background jobs as models write them: (form, stays in the shell's process group). ``{job}``
#: is a job that appends to a heartbeat file while it runs, ``{log}`` a log file, ``{dir}`` a
#: directory.
BACKGROUND_FORMS = (
    ("{job} &", True),
    ("nohup {job} > /dev/null 2>&1 &", True),
    ("{job} > {log} 2>&1 &", True),
    ("({job} &)", True),
    ("{job} & disown", True),
    ("nohup {job} &", True),
    ("(cd {dir} && {job}) &", True),
    ("setsid {job} > /dev/null 2>&1 &", False),
    ("python3 -m http.server 0 --bind 127.0.0.1 > {log} 2>&1 &", False),
    ("{job} & echo started", True),
)


@dataclass
class Background(Op):
    """Starts a background job: answered in time, without an error, the session in step."""

    form: int
    kind = "background"

    def run(self, ctx: Ctx) -> None:
        m = ctx.m
        n = len(ctx.inputs)
        heartbeat = os.path.join(m.base, f"heartbeat-{n}")
        # The job writes its pid, then a heartbeat while it runs (for 60 s at most: a job that
        # leaves the shell's group, as setsid's does, ends by itself wherever no sweep stops it).
        job = (f"sh -c 'echo $$ > {shlex.quote(heartbeat + '.pid')}; "
               f"for i in $(seq 300); do echo . >> {shlex.quote(heartbeat)}; sleep 0.2; done'")
        template, in_group = BACKGROUND_FORMS[self.form]
        command = template.format(job=job, log=shlex.quote(os.path.join(m.base, f"job-{n}.log")),
                                  dir=shlex.quote(m.subdirs()[0]))
        r = ctx.send({"command": command}, self.kind)
        if r.is_error and ctx.settled:
            raise Disagreement("hang:background", f"`{command[:80]}` (a background job) was "
                               "answered with an error (held until the tool's timeout?)",
                               _short(r), {"is_error": False})
        ctx.expect_status(r, "ok", f"`{command[:80]}`")
        ctx.disturbed(self.kind)
        watched = "{job}" in template and in_group and _appears(heartbeat + ".pid")
        m.jobs.append(Job(template.format(job="JOB", log="LOG", dir="DIR"),
                          heartbeat if watched else None, in_group))


@dataclass
class Restart(Op):
    """``restart: true``: confirmed; directory, environment and the jobs of the shell gone."""

    kind = "restart"

    def run(self, ctx: Ctx) -> None:
        pids = _job_pids(ctx.s, [j.heartbeat for j in ctx.m.jobs if j.heartbeat])
        r = ctx.send({"restart": True}, self.kind)
        ctx.disturbed(self.kind)
        if r.is_error:
            raise Disagreement("restart:error", "restart was answered with an error",
                               r.to_json(), {"is_error": False})
        jobs = list(ctx.m.jobs)
        for name in VARIABLES:
            if any(e for _, e in ctx.m.variables[name]):
                ctx.cleared.add(name)
        if ctx.m.known_cwd() is not None:
            ctx.cleared.add("cwd")
        ctx.m.restart()
        beating = _still_running(pids)
        if beating:
            job = next(j for j in jobs if j.heartbeat == beating[0])
            raise Disagreement(
                "restart:process", f"a background job started with `{job.form}` is still "
                "running after restart", {"restart": r.to_json(), "job": job.form},
                "running processes are gone after a restart")


def _job_pids(s: ToolSession, heartbeats: list[str]) -> dict[str, int | None]:
    """Each job's pid on the host (mapped from a sandboxed subject's own), None where unknown.
    Taken before the restart: a process already gone has no mapping."""
    host_pid = getattr(s, "host_pid", None)
    out: dict[str, int | None] = {}
    for hb in heartbeats:
        try:
            pid: int | None = int(Path(hb + ".pid").read_text().strip())
            if callable(host_pid):
                pid = host_pid(pid)  # None: not among the subject's processes
        except (OSError, ValueError, TypeError):
            pid = None
        out[hb] = pid if processes_supported() else None
    return out


def _still_running(pids: dict[str, int | None]) -> list[str]:
    """The jobs (by heartbeat file) still running: by their pid where known, else by whether
    their heartbeat keeps growing."""
    known = {hb: p for hb, p in pids.items() if p}
    end = time.monotonic() + 2.0
    while time.monotonic() < end and any(alive(p) for p in known.values()):
        time.sleep(0.02)
    running = [hb for hb, p in known.items() if alive(p)]
    unknown = [hb for hb, p in pids.items() if not p]
    return sorted(running + (_still_beating(unknown) if unknown else []))


def _still_beating(paths: list[str], quiet: float = 0.5, within: float = 3.0) -> list[str]:
    """The heartbeat files that keep growing (``quiet`` seconds without growth: stopped)."""
    end = time.monotonic() + within
    last = {p: (_size(p), time.monotonic()) for p in paths}
    while last and time.monotonic() < end:
        time.sleep(0.1)
        now = time.monotonic()
        for p, (size, since) in list(last.items()):
            if _size(p) != size:
                last[p] = (_size(p), now)
            elif now - since >= quiet:
                del last[p]
    return sorted(last)


def _appears(path: str, within: float = 1.0) -> bool:
    """Wait for a job to write its pid file (it starts after the command is answered)."""
    end = time.monotonic() + within
    while not _read(path).endswith("\n"):  # created, then written: wait for the whole line
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1


@dataclass
class ReadBack(Op):
    """One command printing every piece of state; each must be in the model's set."""

    kind = "read-back"

    def run(self, ctx: Ctx) -> None:
        m = ctx.m
        command = read_back_command(m)
        r = ctx.send({"command": command}, self.kind)
        shown = parse_read_back(_lines(r))
        before = m.copy()
        mismatches = compare(m, shown)
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
            message = (f"the session does not hold the {_noun(first.component)} {first.name} "
                       f"the commands set: shows {first.shown}, expected {first.allowed}")
        raise Disagreement(key, message, _short(r),
                           {x.name: x.allowed for x in mismatches})


def _noun(component: str) -> str:
    return {"cwd": "current", "var": "shell variable", "env": "exported variable", "fn": "function",
            "alias": "alias", "umask": "", "shopt": "shell option"}.get(component, component)


# --- strategies ----------------------------------------------------------------------------------

_WORD = st.text(st.sampled_from("abcxyz0129-_"), min_size=1, max_size=8)
_VALUE = st.text(st.sampled_from("abz09-_./: "), max_size=8).map(str.strip)

PARTS: st.SearchStrategy[Part] = st.one_of(
    st.builds(Cd, st.sampled_from((*SUBDIRS, ".."))),
    st.builds(SetVar, st.sampled_from(VARIABLES), _VALUE,
              st.sampled_from(("export", "plain", "declare", "prefix"))),
    st.builds(Unset, st.sampled_from(VARIABLES)),
    st.builds(DefFn, st.sampled_from(FUNCTIONS), st.none() | _WORD, st.booleans()),
    st.builds(DefAlias, st.sampled_from(ALIASES), st.none() | _WORD),
    st.builds(Umask, st.sampled_from(tuple(UMASKS))),
    st.builds(Shopt, st.sampled_from(SHOPTS), st.booleans()),
    st.builds(WriteFile, st.sampled_from(("notes.txt", "data.csv", "out log")),
              st.none() | _WORD, st.sampled_from((">", ">>", "heredoc"))),
    st.builds(Fail, st.integers(0, len(FAILURES) - 1)),
)
SIZES = {"seq": (0, 1, 3, 100, 101, 2_000, 30_000), "stderr": (2, 150, 5_000),
         "line": (1, 4_096, 65_537, 200_000), "partial": (1, 2)}


# --- the run -------------------------------------------------------------------------------------

class Pool:
    """Fresh subjects in fresh directories, each started one example ahead and closed in the
    background."""

    def __init__(self, parent: ToolSession) -> None:
        self.parent = parent
        self.count = 0
        self.starter = ThreadPoolExecutor(max_workers=PREFETCH,
                                          thread_name_prefix="bash-model-start")
        self.closer = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bash-model-close")
        self.next: list[Future[tuple[ToolSession | None, Path]]] = []
        self.waited = 0.0
        self.budget: Budget | None = None
        self.closing: list[Future[None]] = []
        self.lock = threading.Lock()
        #: Set when the parent session had to serve every example (it cannot spawn).
        self.shared = False

    def _start(self, label: str) -> tuple[ToolSession | None, Path]:
        with self.lock:
            self.count += 1
            where = Path(self.parent.workdir) / f"{label}-{self.count}"
        where.mkdir(parents=True, exist_ok=True)
        return spawn(self.parent, where), where

    def open(self, label: str = "example", ahead: int = 0) -> tuple[ToolSession, Path]:
        """A live subject (:class:`Disagreement` keyed ``start`` when none starts); ``ahead``
        more example subjects are started in the background. The time spent waiting for a
        subject to start is :attr:`waited` (start-up is not tool time)."""
        future = self.next.pop(0) if label == "example" and self.next else None
        t0 = time.monotonic()
        try:
            s, where = future.result() if future is not None else self._start(label)
        except Exception as e:  # the subject's failure to start: a finding of its own
            raise Disagreement("start", "a fresh subject did not start",
                               f"{type(e).__name__}: {e}", "a subject that starts") from None
        finally:
            waited = time.monotonic() - t0
            self.waited += waited
            if self.budget is not None:  # the cap counts tool time, not start-up
                self.budget.started += waited
        while label == "example" and len(self.next) < ahead:
            self.next.append(self.starter.submit(self._start, "example"))
        if s is None:
            self.shared = True
            return self.parent, where
        return s, where

    def close(self, s: ToolSession, where: Path) -> None:
        if s is self.parent:
            return
        def stop() -> None:
            try:
                s.close()
            finally:
                shutil.rmtree(where, ignore_errors=True)
        self.closing.append(self.closer.submit(stop))

    def finish(self) -> None:
        for future in self.next:
            try:
                s, where = future.result()
                if s is not None:
                    self.close(s, where)
            except Exception:
                pass
        self.next = []
        for f in self.closing:
            f.exception()
        self.starter.shutdown(wait=True)
        self.closer.shutdown(wait=True)


def run_ops(s: ToolSession, ops: list[Op], base: Path) -> Disagreement | None:
    """Run ``ops`` on ``s`` in ``base`` with a fresh model; the first disagreement, or None."""
    return run_counted(s, ops, base)[0]


def run_counted(s: ToolSession, ops: list[Op], base: Path) -> tuple[Disagreement | None, int]:
    """:func:`run_ops`, and how many tool inputs were sent."""
    ctx = Ctx(s, SessionModel(str(base)))
    done: list[Op] = []
    try:
        for op in ops:
            done.append(op)
            op.run(ctx)
    except Disagreement as d:
        d.ops, d.inputs, d.base = list(done), list(ctx.inputs), str(base)
        return d, len(ctx.inputs)
    return None, len(ctx.inputs)


@dataclass
class BashModelReport:
    """What a run found (smallest first), what it set aside, and how it went."""

    findings: list[Disagreement]
    set_aside: dict[str, list[Disagreement]]
    examples: int
    calls: int
    seconds: float
    incomplete: bool
    #: How the hypothesis run ended (:func:`conformance.properties.exploration.explore`).
    ended: str = "passed"

    def note(self) -> str:
        # No time in it: the observed string of a complete run is the same on every run.
        text = f"{self.calls} calls in {self.examples} examples"
        if self.ended not in ("passed", "stopped") and not self.incomplete:
            text += f", generation ended: {self.ended}"
        return text + (f" before the time cap ({self.seconds:.1f} s): incomplete"
                       if self.incomplete else "")


#: Finding keys and the fixed bash checks that report the same defect: when one of them fails on
#: the subject, the finding is theirs (one defect, one check).
REPORTED_BY: dict[str, tuple[str, ...]] = {
    "hang:timeout": ("bash.timeout.returns_error_in_time",),
    "timeout:not-flagged": ("bash.timeout.returns_error_in_time",),
    "missing-after:timeout": ("bash.timeout.session_usable_after",
                              "bash.timeout.returns_error_in_time"),
    "hang:background": ("bash.session.background_job_does_not_hang",),
    "missing-after:background": ("bash.session.background_job_does_not_hang",),
    "hang:output": ("bash.output.large_output_returns",),
    # An output lost or refused: whichever output check fails on the subject reports it.
    **{f"output:{how}": ("bash.output.large_output_returns", "bash.output.stdout_and_stderr",
                         "bash.output.partial_last_line") for how in OUTPUTS},
    "missing-after:output": ("bash.output.partial_last_line", "bash.output.large_output_returns",
                             "bash.session.sentinel_lookalike_output"),
    "flag:failure-not-flagged": ("bash.errors.failure_flagged",),
    "flag:success-flagged": ("bash.errors.failure_flagged",),
    "syntax:broken": ("bash.errors.syntax_error_recovers",),
    "hang:syntax": ("bash.errors.syntax_error_recovers",),
    "missing-after:syntax": ("bash.errors.syntax_error_recovers",),
    "restart:error": ("bash.restart.confirms",),
    "hang:restart": ("bash.restart.confirms",),
    "missing-after:restart": ("bash.restart.confirms",),
    "restart:process": ("bash.restart.clears_state",),
    "restart-kept:cwd": ("bash.restart.clears_state",),
    "restart-kept:var": ("bash.restart.clears_state",),
    "restart-kept:env": ("bash.restart.clears_state",),
    "state:cwd": ("bash.session.cwd_persists",),
    "state:env": ("bash.session.env_persists",),
    "file": ("bash.session.files_persist",),
    "missing": ("bash.output.stdout_and_stderr", "bash.output.roundtrip"),
    # Shell state kept only by one live shell: a subject that loses the directory or the
    # environment between plain calls does not keep one shell, and those checks report it.
    **{f"state:{c}": ("bash.session.env_persists", "bash.session.cwd_persists")
       for c in ("var", "fn", "alias", "umask", "shopt")},
}


class _Run:
    def __init__(self, parent: ToolSession, cap: float) -> None:
        self.pool = Pool(parent)
        self.budget = Budget(cap, calls=10**9)
        self.pool.budget = self.budget
        self.found: dict[str, Disagreement] = {}
        self.examples = 0
        self.calls = 0
        self.incomplete = False
        self.max_examples = DEFAULT_EXAMPLES
        #: The examples' steps, as the machine generated them.
        self.generated: list[list[Op]] = []

    def record(self, d: Disagreement) -> None:
        old = self.found.get(d.key)
        if old is None or len(d.inputs) < len(old.inputs):
            self.found[d.key] = d

    def replay(self, ops: list[Op], label: str) -> Disagreement | None:
        self.budget.charge(len(ops), share=1.0)
        try:
            s, where = self.pool.open(label)
        except Disagreement as failed:
            return failed
        try:
            d, calls = run_counted(s, ops, where)
            self.calls += calls
            return d
        finally:
            self.pool.close(s, where)

    def execute(self) -> None:
        """Each generated example on a fresh subject; every disagreement recorded."""
        for i, ops in enumerate(self.generated):
            self.budget.charge(0, share=EXPLORE_SHARE)
            self.examples += 1
            try:
                s, where = self.pool.open("example",
                                          ahead=min(PREFETCH, len(self.generated) - i - 1))
            except Disagreement as failed:
                self.record(failed)
                return
            try:
                d, calls = run_counted(s, ops, where)
            finally:
                self.pool.close(s, where)
            self.calls += calls
            if d is not None:
                self.record(d)
                if self.pool.shared and d.key.startswith(("hang", "fault")):
                    return  # no other subject to go on with


def _machine(run: _Run, steps: int) -> type[RuleBasedStateMachine]:
    class BashMachine(RuleBasedStateMachine):
        """Generates the examples' steps (nothing is sent here: see :func:`explore_bash_model`)."""

        def __init__(self) -> None:
            super().__init__()
            self.ops: list[Op] = []
            self.timeouts = 0
            self.allow_timeout = len(run.generated) + 1 in TIMEOUT_EXAMPLES

        def step(self, op: Op) -> None:
            self.ops.append(op)
            # A step that can disturb the session is followed by a read-back (as an edit is by a
            # view in the editor machine): what it did to the state is seen at once.
            if isinstance(op, Output | SyntaxError_ | Background | Timeout | Restart) or (
                    isinstance(op, Command) and any(isinstance(p, Fail) for p in op.parts)):
                self.ops.append(ReadBack())

        def teardown(self) -> None:
            if self.allow_timeout and not self.timeouts:  # its example always has one
                self.timeout()
            self.step(ReadBack())
            run.generated.append(self.ops)

        @initialize()
        def setup(self) -> None:
            self.step(Setup())

        # One rule drawing the kind of step (hypothesis' per-example rule switching would leave
        # whole kinds out of a derandomized run; a sampled kind keeps every kind in play).
        @rule(kind=st.sampled_from(KINDS), data=st.data())
        def act(self, kind: str, data: st.DataObject) -> None:
            if kind == "command":
                parts = data.draw(st.lists(PARTS, min_size=1, max_size=3))
                joiner = data.draw(st.sampled_from(("; ", " && ", "\n")))
                self.step(Command(parts, joiner))
            elif kind == "read-back":
                self.step(ReadBack())
            elif kind == "output":
                how = data.draw(st.sampled_from(tuple(SIZES)))
                self.step(Output(how, data.draw(st.sampled_from(SIZES[how]))))
            elif kind == "syntax":
                self.step(SyntaxError_(data.draw(st.integers(0, len(SYNTAX_ERRORS) - 1))))
            elif kind == "background":
                self.step(Background(data.draw(st.integers(0, len(BACKGROUND_FORMS) - 1))))
            elif kind == "restart":
                self.step(Restart())
            elif kind == "timeout":
                self.timeout()

        def timeout(self) -> None:
            # Only in the examples of TIMEOUT_EXAMPLES (by their number: the run stays the same),
            # at most once: a timeout costs a whole command timeout of wall time.
            if self.allow_timeout and not self.timeouts:
                self.timeouts += 1
                self.step(Timeout())

    return BashMachine


def explore_bash_model(s: ToolSession, *, max_examples: int = DEFAULT_EXAMPLES,
                       steps: int = DEFAULT_STEPS, cap: float | None = None,
                       fails: Callable[[str, ToolSession], bool] | None = None
                       ) -> BashModelReport:
    """Run the machine on fresh instances of ``s``'s subject (see the module docstring).
    ``fails(check_id, session)`` runs a fixed check on a fresh session and says whether it
    failed (the check module passes the catalog's; without it nothing is set aside)."""
    timeout = float(getattr(s, "timeout", 3.0) or 3.0)
    run = _Run(s, cap if cap is not None else max(MIN_CAP_SECONDS, CAP_TIMEOUTS * timeout))
    run.max_examples = max_examples
    machine = _machine(run, steps)
    config = quiet_settings(max_examples=max_examples, stateful_step_count=steps,
                            phases=(Phase.generate,))
    started = time.monotonic()
    aside: dict[str, list[Disagreement]] = {}
    findings: list[Disagreement] = []
    ended = "stopped"
    try:
        # Hypothesis only generates the examples (quickly, in its turn); they run after it, so
        # that other property checks do not wait for subjects' answers.
        with hypothesis_turn(run.budget):
            ended = explore(lambda: run_state_machine_as_test(machine, settings=config), ())
        run.budget.restart()
        try:
            run.execute()
        except StopExploring:
            pass
        run.incomplete = run.budget.ran_out
        failing = _FixedChecks(run, fails)
        for key in sorted(run.found, key=lambda k: len(run.found[k].inputs)):
            d = _minimize(run, run.found[key])
            d.verified = _verify(run, d)
            owners = [c for c in REPORTED_BY.get(d.key, ()) if failing(c)]
            if owners:
                aside.setdefault(owners[0], []).append(d)
            else:
                findings.append(d)
    finally:
        run.pool.finish()
    findings.sort(key=lambda d: len(d.inputs))
    return BashModelReport(findings, aside, run.examples, run.calls,
                           time.monotonic() - started, run.incomplete, ended)


def _minimize(run: _Run, found: Disagreement) -> Disagreement:
    """Delete steps (last first, never the setup) while the same disagreement persists, each
    try on a fresh subject."""
    best = found
    i = len(best.ops) - 2
    for _ in range(MINIMIZE_TRIES):
        if i < 1:
            break
        candidate = best.ops[:i] + best.ops[i + 1:]
        try:
            again = run.replay(candidate, "minimize")
        except StopExploring:
            break
        if again is not None and again.key == best.key:
            best = again
        i = min(i - 1, len(best.ops) - 2)
    return best


def _verify(run: _Run, d: Disagreement) -> bool | None:
    """Replay the reproducer on a fresh subject: True when the same disagreement shows."""
    if not d.ops:
        return None
    try:
        again = run.replay(d.ops, "verify")
    except StopExploring:
        return None
    return again is not None and again.key == d.key


class _FixedChecks:
    """Runs a fixed bash check once, on a fresh subject: does it fail there?"""

    def __init__(self, run: _Run, fails: Callable[[str, ToolSession], bool] | None) -> None:
        self.run, self.fails = run, fails
        self.seen: dict[str, bool] = {}

    def __call__(self, check_id: str) -> bool:
        if self.fails is None:
            return False
        if check_id not in self.seen:
            try:
                s, where = self.run.pool.open("related")
            except Disagreement:
                self.seen[check_id] = False
                return False
            try:
                self.seen[check_id] = self.fails(check_id, s)
            finally:
                self.run.pool.close(s, where)
        return self.seen[check_id]


__all__ = ["BACKGROUND_FORMS", "BashModelReport", "Disagreement", "REPORTED_BY",
           "explore_bash_model", "run_ops"]
