"""Checks for bash tool implementations (``bash_20241022``, ``bash_20250124``): shared helpers,
session state, restart and input. Output checks live in :mod:`conformance.checks.bash_output`,
errors, timeouts, stdin and background jobs in :mod:`conformance.checks.bash_errors`.

Each check encodes one sentence of seed 003 (the bash tool page; sections cited by their
headings) or PROTOCOL.md §4, talks to the subject only through :class:`ToolSession`, and sends
absolute paths inside the case's working directory.

Output is read as the model would read it (:func:`readable`): terminal escape codes (ANSI
colours, OSC titles) are dropped, CRLF line ends read as LF, and checks look for the expected
lines among the result's lines, so a tool may add lines around the output (a status footer, a
placeholder for empty output) without failing a check that is about something else.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
from collections.abc import Callable
from typing import Any, TypeVar

from conformance.catalog import CheckSkipped, Severity, check
from conformance.checks.bash_replay import Again, fail
from conformance.checks.planted import plant_directory
from conformance.properties.bash_model import readable
from conformance.session import ToolResult, ToolSession
from conformance.subjects.isolation import alive, grace_for, kill_pids, processes_supported
from simulator.sources import SEED_BASH, Source, seed

F = TypeVar("F", bound=Callable[..., Any])

BASH_TYPES = ("bash_20241022", "bash_20250124")
MUST, SHOULD = Severity.MUST, Severity.SHOULD

PERSISTENT = seed(SEED_BASH, "Bash 도구 (Bash tool)")
PARAMETERS = seed(SEED_BASH, "파라미터 (Parameters)")
HOW_IT_WORKS = seed(SEED_BASH, "작동 방식 (How it works)")
IMPLEMENT = seed(SEED_BASH, "Bash 도구 구현하기 (Implement the bash tool)")
HANDLE_ERRORS = seed(SEED_BASH, "오류 처리하기 (Handle errors)")
TIMEOUTS = seed(SEED_BASH, "명령 타임아웃 사용하기 (Use command timeouts)")
LARGE_OUTPUT = seed(SEED_BASH, "큰 출력 처리하기 (Handle large outputs)")
LIMITATIONS = seed(SEED_BASH, "제한 사항 (Limitations)")


def bash_check(id: str, severity: Severity, source: Source, statement: str,
               tags: tuple[str, ...] = ()) -> Callable[[F], F]:
    return check(id, family="bash", severity=severity, applies_to=BASH_TYPES,
                 source=source, statement=statement, tags=tags)


def token() -> str:
    return secrets.token_hex(4)


def q(path: object) -> str:
    return shlex.quote(str(path))


def run(s: ToolSession, command: str, *, deadline: float | None = None) -> ToolResult:
    return s.call({"command": command}, deadline=deadline)


def waited(r: ToolResult) -> str:
    """How long the harness waited for ``r``, with what it allowed for measured load (the
    deadlines of the time checks are the harness's call deadlines: subjects/timing.py)."""
    extra = f", of which {r.allowance:.1f}s allowed for load" if r.allowance >= 0.05 else ""
    return f"waited {r.elapsed:.1f}s{extra}"


# --- reading output as the model reads it ---------------------------------------------------------

def lines_of(r: ToolResult) -> list[str]:
    return readable(r.text).split("\n")


def has(r: ToolResult, needle: str) -> bool:
    return readable(needle) in readable(r.text)


def has_line(r: ToolResult, line: str) -> bool:
    """Is ``line`` one of the result's lines (surrounding blanks ignored)?"""
    return any(x.strip() == line.strip() for x in lines_of(r))


def ok(s: ToolSession, command: str, purpose: str) -> ToolResult:
    """Run a command that must succeed (a setup step); fail the check if it does not."""
    r = run(s, command)
    if r.is_error:
        fail(s, f"{purpose}: `{command}` was answered with an error", received=r,
             documented="a successful result", shows=lambda a: a.last.is_error)
    return r


def expect_in(s: ToolSession, r: ToolResult, needle: str, what: str,
              documented: object = None) -> None:
    """Fail unless ``needle`` is in the answer ``r`` to the last input."""
    if not has(r, needle):
        fail(s, f"{what} ({needle!r} is not in the result)", received=r,
             documented=documented if documented is not None else f"…{needle}…",
             shows=lambda a: not has(a.last, needle))


def same_dir(a: str, b: str) -> bool:
    return bool(a.strip()) and os.path.realpath(a.strip()) == os.path.realpath(b.strip())


def works(s: ToolSession) -> tuple[bool, ToolResult]:
    """Does the session answer a plain command with its output?"""
    marker = f"recovered-{token()}"
    r = run(s, f"echo {marker}")
    return echoed(r, marker), r


def echoed(r: ToolResult, marker: str) -> bool:
    """Is ``r`` the answer of a working session to ``echo marker``?"""
    return not r.is_error and has(r, marker)


def marker_of(tool_input: dict[str, Any]) -> str:
    """The word an ``echo WORD`` input prints."""
    return str(tool_input.get("command", "")).removeprefix("echo ").strip()


def does_not_work(a: Again) -> bool:
    """Judge: the replay's last answer (to :func:`works`' echo) is not the echo's output."""
    return not echoed(a.last, marker_of(a.inputs[-1]))


def still_works(s: ToolSession, when: str) -> None:
    fine, r = works(s)
    if not fine:
        fail(s, f"the session does not work {when}: `echo` was answered "
             f"{'with an error' if r.is_error else 'without its output'}",
             received=r, documented="recovered-…\n", shows=does_not_work)


# --- state persists ---------------------------------------------------------------------------

@bash_check("bash.session.cwd_persists", MUST, PERSISTENT,
            "The working directory set by one command is still the working directory of the next.")
def cwd_persists(s: ToolSession) -> None:
    target = plant_directory(s, "persist-cwd")
    ok(s, f"cd {q(target)}", "changing directory")
    r = ok(s, "pwd", "printing the working directory")

    def lost(answer: ToolResult, where: str) -> bool:
        return not any(same_dir(line, where) for line in lines_of(answer))

    if lost(r, target):
        fail(s, f"the working directory did not persist: no line of the `pwd` output is "
             f"{target}", received=r, documented=f"{target}\n",
             shows=lambda a: lost(a.last, str(a.path(target))))


@bash_check("bash.session.env_persists", MUST, PERSISTENT,
            "An environment variable exported by one command is set in the next.")
def env_persists(s: ToolSession) -> None:
    value = f"persisted-{token()}"
    ok(s, f"export TOOLUSE_CHECK_VAR={value}", "exporting a variable")
    r = ok(s, 'echo "value=[$TOOLUSE_CHECK_VAR]"', "reading the variable")
    expect_in(s, r, f"value=[{value}]", "an exported variable did not persist to the next call")


@bash_check("bash.session.files_persist", MUST, PERSISTENT,
            "A file written by one command can be read by the next.")
def files_persist(s: ToolSession) -> None:
    path, content = s.workdir / "persist.txt", f"kept-{token()}"
    ok(s, f"printf '%s\\n' {content} > {q(path)}", "writing a file")
    r = ok(s, f"cat {q(path)}", "reading the file back")
    expect_in(s, r, content, "a file written by one command was not there for the next")


# --- restart ------------------------------------------------------------------------------------

@bash_check("bash.restart.confirms", MUST, PARAMETERS,
            "`restart: true` is answered with a confirming (non-error) result and the session "
            "works afterwards.")
def restart_confirms(s: ToolSession) -> None:
    r = s.call({"restart": True})
    if r.is_error:
        fail(s, "restart was answered with an error", received=r,
             documented={"content": "Bash session restarted", "is_error": False},
             shows=lambda a: a.last.is_error)
    still_works(s, "after restart")


@bash_check("bash.restart.clears_state", MUST, PARAMETERS,
            "After `restart` the working directory, environment and running processes of the old "
            "session are gone.")
def restart_clears_state(s: ToolSession) -> None:
    sub = plant_directory(s, "before-restart")
    ok(s, f"cd {q(sub)}", "changing directory")
    ok(s, "export TOOLUSE_RESTART_VAR=still-here", "exporting a variable")
    r = ok(s, "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\"", "starting a background process")
    pid = _job_pid(s, r)
    rr = s.call({"restart": True})
    if rr.is_error:
        raise CheckSkipped("restart was answered with an error (see bash.restart.confirms)")
    after = ok(s, 'pwd; echo "var=[$TOOLUSE_RESTART_VAR]"', "inspecting the restarted session")
    problems = _not_cleared(after, sub, pid)
    if problems:
        kinds = {p.split(" (")[0] for p in problems}

        def shows(a: Again) -> bool:  # the same things kept (not the same pid: a new one)
            again = _not_cleared(a.last, str(a.path(sub)), _job_pid(a.session, a.results[2]))
            return {p.split(" (")[0] for p in again} == kinds

        fail(s, f"restart did not clear the session: {', '.join(problems)}", received=after,
             documented="a clean session: working directory, environment variables and "
                        "running processes are gone", shows=shows)


def _job_pid(s: ToolSession, r: ToolResult) -> int | None:
    """The background job's pid on the host (``bg-pid=`` in ``r``), when it can be watched."""
    pid = pid_from(r, "bg-pid=")
    host_pid = getattr(s, "host_pid", None)  # a sandboxed subject's pids are its namespace's
    if pid is not None and callable(host_pid):
        pid = host_pid(pid)
    return pid if pid is not None and processes_supported() and alive(pid) else None


def _not_cleared(after: ToolResult, sub: str, pid: int | None) -> list[str]:
    """What the restarted session kept (``after``: its answer to ``pwd`` and the variable);
    ``pid``, a job it had started, is killed if it is still running."""
    problems = []
    if any(same_dir(line, sub) for line in lines_of(after)):
        problems.append(f"working directory kept ({sub})")
    if has(after, "var=[still-here]"):
        problems.append("exported variable kept")
    if pid is not None:
        deadline = time.monotonic() + 1.0
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if alive(pid):
            kill_pids([pid])
            problems.append(f"background process still running ({pid})")
    return problems


def pid_from(r: ToolResult, prefix: str) -> int | None:
    for line in lines_of(r):
        at = line.find(prefix)
        if at >= 0 and line[at + len(prefix):].strip().isdigit():
            return int(line[at + len(prefix):].strip())
    return None


# --- input ----------------------------------------------------------------------------------------

@bash_check("bash.input.invalid_rejected", SHOULD, PARAMETERS,
            "Input with neither `command` nor `restart: true` is answered with an error.")
def invalid_rejected(s: ToolSession) -> None:
    for tool_input in ({}, {"restart": False}):
        r = s.call(dict(tool_input))
        if not r.is_error:
            fail(s, f"{tool_input} was not answered with an error", received=r,
                 documented={"is_error": True}, reproducer=[tool_input],
                 shows=lambda a: not a.last.is_error)


@bash_check("bash.input.empty_or_comment_answered", MUST, PERSISTENT,
            "An empty command and a comment-only command (`# note`) are answered in time (with "
            "no output, a placeholder or an error) and the session keeps its state: the next "
            "command runs in the same directory with the same variables.")
def empty_or_comment_answered(s: ToolSession) -> str:
    t = token()
    target = plant_directory(s, "keep-state")
    ok(s, f"cd {q(target)} && export TOOLUSE_KEEP_VAR=kept-{t}", "setting up the session")
    read = 'pwd; echo "var=[$TOOLUSE_KEEP_VAR]"'
    if _lost(run(s, read), target, t):  # lost between plain commands: not this check's defect
        raise CheckSkipped("the session does not keep its directory or variables between plain "
                           "commands (see bash.session.cwd_persists, bash.session.env_persists)")
    deadline = s.timeout + grace_for(s.timeout)
    seen = []
    for command in ("", f"# note {t}"):
        shown = "an empty command" if not command else f"a comment-only command `{command}`"
        r = run(s, command, deadline=deadline)
        if r.timed_out:  # judged on time: the replay's answer did not come in time either
            fail(s, f"{shown} was never answered: no answer within {deadline:g}s ({waited(r)})",
                 received=r, documented="an answer (no output, a placeholder or an error)",
                 shows=lambda a: a.last.timed_out)
        seen.append(f"{'empty' if not command else 'comment'}: "
                    f"{'an error' if r.is_error else 'answered'}")
        after = run(s, read)
        problems = _lost(after, target, t)
        if problems:
            fail(s, f"after {shown} the session lost its state ({', '.join(problems)})",
                 received=[r, after], documented=f"{target}\nvar=[kept-{t}]\n",
                 shows=lambda a: bool(_lost(a.last, str(a.path(target)), t)))
    return "; ".join(seen)


def _lost(r: ToolResult, target: str, t: str) -> list[str]:
    """What the answer to ``pwd`` and the variable's echo shows lost."""
    problems = []
    if r.is_error:
        problems.append("the next command was answered with an error")
    if not any(same_dir(line, target) for line in lines_of(r)):
        problems.append("working directory")
    if not has(r, f"var=[kept-{t}]"):
        problems.append("exported variable")
    return problems
