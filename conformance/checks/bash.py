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

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.properties.bash_model import readable
from conformance.session import ToolResult, ToolSession
from conformance.subjects.isolation import alive, kill_pids, processes_supported
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
        raise CheckFailure(f"{purpose}: `{command}` was answered with an error",
                           received=r.to_json(), documented="a successful result")
    return r


def expect_in(r: ToolResult, needle: str, what: str, documented: object = None) -> None:
    if not has(r, needle):
        raise CheckFailure(f"{what} ({needle!r} is not in the result)", received=r.to_json(),
                           documented=documented if documented is not None else f"…{needle}…")


def same_dir(a: str, b: str) -> bool:
    return bool(a.strip()) and os.path.realpath(a.strip()) == os.path.realpath(b.strip())


def works(s: ToolSession) -> tuple[bool, ToolResult]:
    """Does the session answer a plain command with its output?"""
    marker = f"recovered-{token()}"
    r = run(s, f"echo {marker}")
    return (not r.is_error and has(r, marker)), r


def still_works(s: ToolSession, when: str) -> None:
    fine, r = works(s)
    if not fine:
        raise CheckFailure(f"the session does not work {when}: `echo` was answered "
                           f"{'with an error' if r.is_error else 'without its output'}",
                           received=r.to_json(), documented="recovered-…\n")


# --- state persists ---------------------------------------------------------------------------

@bash_check("bash.session.cwd_persists", MUST, PERSISTENT,
            "The working directory set by one command is still the working directory of the next.")
def cwd_persists(s: ToolSession) -> None:
    target = s.workdir / "persist-cwd"
    target.mkdir()
    ok(s, f"cd {q(target)}", "changing directory")
    r = ok(s, "pwd", "printing the working directory")
    if not any(same_dir(line, str(target)) for line in lines_of(r)):
        raise CheckFailure(f"the working directory did not persist: no line of the `pwd` output "
                           f"is {target}", received=r.to_json(), documented=f"{target}\n")


@bash_check("bash.session.env_persists", MUST, PERSISTENT,
            "An environment variable exported by one command is set in the next.")
def env_persists(s: ToolSession) -> None:
    value = f"persisted-{token()}"
    ok(s, f"export TOOLUSE_CHECK_VAR={value}", "exporting a variable")
    r = ok(s, 'echo "value=[$TOOLUSE_CHECK_VAR]"', "reading the variable")
    expect_in(r, f"value=[{value}]", "an exported variable did not persist to the next call")


@bash_check("bash.session.files_persist", MUST, PERSISTENT,
            "A file written by one command can be read by the next.")
def files_persist(s: ToolSession) -> None:
    path, content = s.workdir / "persist.txt", f"kept-{token()}"
    ok(s, f"printf '%s\\n' {content} > {q(path)}", "writing a file")
    r = ok(s, f"cat {q(path)}", "reading the file back")
    expect_in(r, content, "a file written by one command was not there for the next")


# --- restart ------------------------------------------------------------------------------------

@bash_check("bash.restart.confirms", MUST, PARAMETERS,
            "`restart: true` is answered with a confirming (non-error) result and the session "
            "works afterwards.")
def restart_confirms(s: ToolSession) -> None:
    r = s.call({"restart": True})
    if r.is_error:
        raise CheckFailure("restart was answered with an error", received=r.to_json(),
                           documented={"content": "Bash session restarted", "is_error": False})
    still_works(s, "after restart")


@bash_check("bash.restart.clears_state", MUST, PARAMETERS,
            "After `restart` the working directory, environment and running processes of the old "
            "session are gone.")
def restart_clears_state(s: ToolSession) -> None:
    sub = s.workdir / "before-restart"
    sub.mkdir()
    ok(s, f"cd {q(sub)}", "changing directory")
    ok(s, "export TOOLUSE_RESTART_VAR=still-here", "exporting a variable")
    r = ok(s, "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\"", "starting a background process")
    pid = pid_from(r, "bg-pid=")
    host_pid = getattr(s, "host_pid", None)  # a sandboxed subject's pids are its namespace's
    if pid is not None and callable(host_pid):
        pid = host_pid(pid)
    visible = pid is not None and processes_supported() and alive(pid)
    rr = s.call({"restart": True})
    if rr.is_error:
        raise CheckSkipped("restart was answered with an error (see bash.restart.confirms)")
    after = ok(s, 'pwd; echo "var=[$TOOLUSE_RESTART_VAR]"', "inspecting the restarted session")
    problems = []
    if any(same_dir(line, str(sub)) for line in lines_of(after)):
        problems.append(f"working directory kept ({sub})")
    if has(after, "var=[still-here]"):
        problems.append("exported variable kept")
    if visible and pid is not None:
        deadline = time.monotonic() + 1.0
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if alive(pid):
            kill_pids([pid])
            problems.append(f"background process {pid} still running")
    if problems:
        raise CheckFailure(f"restart did not clear the session: {', '.join(problems)}",
                           received=after.to_json(),
                           documented="a clean session: working directory, environment variables "
                                      "and running processes are gone")


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
            raise CheckFailure(f"{tool_input} was not answered with an error",
                               received=r.to_json(), documented={"is_error": True},
                               reproducer=[tool_input])
