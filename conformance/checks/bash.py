"""Checks for bash tool implementations (``bash_20241022``, ``bash_20250124``).

Each check encodes one sentence of seed 003 (the bash tool page; sections cited by their
headings) or PROTOCOL.md §4, talks to the subject only through :class:`ToolSession`, and sends
absolute paths inside the case's working directory.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.checks.properties import run_property
from conformance.isolation import alive, grace_for, kill_pids, processes_supported
from conformance.session import ToolResult, ToolSession
from simulator.sources import SEED_BASH, Source, protocol, seed

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


def _token() -> str:
    return secrets.token_hex(4)


def _q(path: object) -> str:
    return shlex.quote(str(path))


def run(s: ToolSession, command: str, *, deadline: float | None = None) -> ToolResult:
    return s.call({"command": command}, deadline=deadline)


def ok(s: ToolSession, command: str, purpose: str) -> ToolResult:
    """Run a command that must succeed (a setup step); fail the check if it does not."""
    r = run(s, command)
    if r.is_error:
        raise CheckFailure(f"{purpose}: `{command}` was answered with an error",
                           received=r.to_json(), documented="a successful result")
    return r


def expect_in(r: ToolResult, needle: str, what: str, documented: object = None) -> None:
    if needle not in r.text:
        raise CheckFailure(what, received=r.to_json(),
                           documented=documented if documented is not None else f"…{needle}…")


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a.strip()) == os.path.realpath(b.strip())


# --- state persists ---------------------------------------------------------------------------

@bash_check("bash.session.cwd_persists", MUST, PERSISTENT,
            "The working directory set by one command is still the working directory of the next.")
def cwd_persists(s: ToolSession) -> None:
    target = s.workdir / "persist-cwd"
    target.mkdir()
    ok(s, f"cd {_q(target)}", "changing directory")
    r = ok(s, "pwd", "printing the working directory")
    if not _same_dir(r.text, str(target)):
        raise CheckFailure("the working directory did not persist to the next call",
                           received=r.text.strip(), documented=str(target))


@bash_check("bash.session.env_persists", MUST, PERSISTENT,
            "An environment variable exported by one command is set in the next.")
def env_persists(s: ToolSession) -> None:
    value = f"persisted-{_token()}"
    ok(s, f"export TOOLUSE_CHECK_VAR={value}", "exporting a variable")
    r = ok(s, 'echo "value=[$TOOLUSE_CHECK_VAR]"', "reading the variable")
    expect_in(r, f"value=[{value}]", "an exported variable did not persist to the next call")


@bash_check("bash.session.files_persist", MUST, PERSISTENT,
            "A file written by one command can be read by the next.")
def files_persist(s: ToolSession) -> None:
    path, content = s.workdir / "persist.txt", f"kept-{_token()}"
    ok(s, f"printf '%s\\n' {content} > {_q(path)}", "writing a file")
    r = ok(s, f"cat {_q(path)}", "reading the file back")
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
    marker = f"after-restart-{_token()}"
    expect_in(ok(s, f"echo {marker}", "running a command after restart"), marker,
              "the session did not answer a command after restart")


@bash_check("bash.restart.clears_state", MUST, PARAMETERS,
            "After `restart` the working directory, environment and running processes of the old "
            "session are gone.")
def restart_clears_state(s: ToolSession) -> None:
    sub = s.workdir / "before-restart"
    sub.mkdir()
    ok(s, f"cd {_q(sub)}", "changing directory")
    ok(s, "export TOOLUSE_RESTART_VAR=still-here", "exporting a variable")
    r = ok(s, "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\"", "starting a background process")
    pid = _pid_from(r.text, "bg-pid=")
    visible = pid is not None and processes_supported() and alive(pid)
    rr = s.call({"restart": True})
    if rr.is_error:
        raise CheckSkipped("restart was answered with an error (see bash.restart.confirms)")
    after = ok(s, 'pwd; echo "var=[$TOOLUSE_RESTART_VAR]"', "inspecting the restarted session")
    lines = after.text.strip().splitlines()
    problems = []
    if lines and _same_dir(lines[0], str(sub)):
        problems.append("working directory kept")
    if "var=[still-here]" in after.text:
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


def _pid_from(text: str, prefix: str) -> int | None:
    for line in text.splitlines():
        if line.startswith(prefix) and line[len(prefix):].strip().isdigit():
            return int(line[len(prefix):].strip())
    return None


# --- output -------------------------------------------------------------------------------------

@bash_check("bash.output.stdout_and_stderr", MUST, protocol("4. Bash tool: Semantics"),
            "Both stdout and stderr of a command are returned in its tool_result.")
def stdout_and_stderr(s: ToolSession) -> None:
    t = _token()
    r = run(s, f"echo to-stdout-{t}; echo to-stderr-{t} >&2")
    missing = [w for w in (f"to-stdout-{t}", f"to-stderr-{t}") if w not in r.text]
    if missing:
        raise CheckFailure(f"output missing from the result: {', '.join(missing)}",
                           received=r.to_json(), documented=f"to-stdout-{t}\nto-stderr-{t}\n")


@bash_check("bash.output.interleaved_in_order", SHOULD, IMPLEMENT,
            "stdout and stderr are interleaved in the order the command wrote them.")
def interleaved_in_order(s: ToolSession) -> None:
    t = _token()
    words = [f"first-{t}", f"second-{t}", f"third-{t}", f"fourth-{t}"]
    r = run(s, f"echo {words[0]}; echo {words[1]} >&2; echo {words[2]}; echo {words[3]} >&2")
    positions = [r.text.find(w) for w in words]
    if positions[1] == positions[3] == -1:
        raise CheckSkipped("stderr is not returned at all (see bash.output.stdout_and_stderr)")
    if -1 in positions or positions != sorted(positions):
        raise CheckFailure("stdout and stderr are not returned in the order they were written",
                           received=r.to_json(), documented="\n".join(words) + "\n")


@bash_check("bash.output.partial_last_line", MUST, HOW_IT_WORKS,
            "Output that does not end with a newline is returned, and does not leak into the next "
            "result.")
def partial_last_line(s: ToolSession) -> None:
    t = _token()
    r = ok(s, f"printf 'no-newline-{t}'", "printing without a newline")
    expect_in(r, f"no-newline-{t}", "output without a final newline was lost")
    r2 = ok(s, f"echo next-{t}", "the next command")
    if r2.text.strip() != f"next-{t}":
        raise CheckFailure("the next command's result is not its own output",
                           received=r2.to_json(), documented=f"next-{t}\n")


_LINE = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00\r\n"),
                max_size=40)


@bash_check("bash.output.roundtrip", MUST, HOW_IT_WORKS,
            "A command's output is returned unchanged (generated text printed with printf comes "
            "back as written).", tags=("property",))
def output_roundtrip(s: ToolSession) -> None:
    def body(lines: list[str]) -> None:
        text = "\n".join(lines)
        r = run(s, f"printf '%s\\n' {shlex.quote(text)}")
        if r.is_error or r.text.rstrip("\n") != text.rstrip("\n"):
            raise CheckFailure("the output did not come back as printed",
                               received=r.to_json(), documented=text + "\n")

    run_property(s, st.lists(_LINE, min_size=1, max_size=12), body)


LARGE_LINES = 100_000
LARGE_COMMAND = f"seq 1 {LARGE_LINES}"
LARGE_SIZE = sum(len(str(i)) + 1 for i in range(1, LARGE_LINES + 1))


@bash_check("bash.output.large_output_returns", MUST, LIMITATIONS,
            "A command with a large output (~600 kB) is answered in time, without hanging.")
def large_output_returns(s: ToolSession) -> None:
    r = run(s, LARGE_COMMAND)
    if r.timed_out or r.is_error or not r.text.startswith("1\n2\n3\n"):
        raise CheckFailure("a large output was not returned", received=_short(r),
                           documented="a successful result starting 1\\n2\\n3\\n")


@bash_check("bash.output.large_output_truncated", SHOULD, LARGE_OUTPUT,
            "Large outputs are truncated before they are returned (the API does not truncate).")
def large_output_truncated(s: ToolSession) -> None:
    r = run(s, LARGE_COMMAND)
    if r.timed_out or r.is_error:
        raise CheckSkipped("the large output was not returned (see bash.output.large_output_returns)")
    if len(r.text) >= LARGE_SIZE:
        raise CheckFailure(f"the full {LARGE_SIZE}-character output was returned untruncated",
                           received=_short(r),
                           documented="{first 100 lines}\n\n... Output truncated "
                                      f"({LARGE_LINES + 1} total lines) ...")


def _short(r: ToolResult) -> dict[str, object]:
    text = r.text
    shown = text if len(text) <= 300 else f"{text[:200]}…[{len(text)} characters]…{text[-80:]}"
    return {"content": shown, "is_error": r.is_error, "timed_out": r.timed_out}


SENTINEL_LOOKALIKES = (
    "__CLAUDE_BASH_DONE__", "__CLAUDE_BASH_DONE__ 0",
    "__CLAUDE_BASH_DONE_0123456789abcdef0123456789abcdef__",
    "__CLAUDE_BASH_DONE_0123456789abcdef0123456789abcdef__ 0",
    "__TOOLUSE_BASH_DONE_0123456789abcdef0123456789abcdef__ 0", "__DONE__", "__END__",
    "__SENTINEL__", "<<<EOF>>>", "END_OF_OUTPUT", "EXIT_CODE=0", "__COMMAND_DONE__",
)


@bash_check("bash.session.sentinel_lookalike_output", MUST, IMPLEMENT,
            "Output that looks like an end-of-command sentinel is returned as output and does not "
            "cut the result short or shift later results.")
def sentinel_lookalike_output(s: ToolSession) -> None:
    t = _token()
    lines = [f"before-{t}", *SENTINEL_LOOKALIKES, f"after-{t}"]
    script = "printf '%s\\n' " + " ".join(shlex.quote(x) for x in lines)
    r = run(s, script)
    positions = [r.text.find(x) for x in lines]
    if -1 in positions or positions != sorted(positions):
        raise CheckFailure("output with sentinel-like lines was cut short or reordered",
                           received=r.to_json(), documented="\n".join(lines) + "\n")
    r2 = run(s, f"echo next-{t}")
    if r2.is_error or r2.text.strip() != f"next-{t}":
        raise CheckFailure("the result after sentinel-like output is not the next command's own",
                           received=r2.to_json(), documented=f"next-{t}\n")


# --- errors -------------------------------------------------------------------------------------

@bash_check("bash.errors.failure_flagged", MUST, HANDLE_ERRORS,
            "A command that fails (non-zero exit status) is answered with is_error: true; one "
            "that succeeds is not.", tags=("property",))
def failure_flagged(s: ToolSession) -> None:
    t = _token()
    for command in ("false", f"tooluse_no_such_command_{t}", f"ls {_q(s.workdir / 'missing')}"):
        r = run(s, command)
        if not r.is_error:
            raise CheckFailure(f"`{command}` failed but the result is not flagged",
                               received=r.to_json(), documented={"is_error": True},
                               reproducer=[{"command": command}])

    def body(case: tuple[int, str]) -> None:
        status, word = case
        r = run(s, f"echo {shlex.quote(word)}; (exit {status})")
        if r.is_error != (status != 0):
            raise CheckFailure(f"exit status {status} answered with is_error={r.is_error}",
                               received=r.to_json(), documented={"is_error": status != 0})

    words = st.text(st.characters(min_codepoint=48, max_codepoint=122,
                                  categories=["Lu", "Ll", "Nd"]), min_size=1, max_size=8)
    statuses = st.one_of(st.just(0), st.just(1), st.integers(0, 255))
    run_property(s, st.tuples(statuses, words), body)


@bash_check("bash.errors.syntax_error_recovers", SHOULD, HANDLE_ERRORS,
            "A command with a syntax error (an unclosed quote) is answered and the session keeps "
            "working.")
def syntax_error_recovers(s: ToolSession) -> None:
    # Whether the answer is flagged is bash.errors.failure_flagged's business (exit status 2).
    r = run(s, "echo 'unclosed")
    if r.timed_out:
        raise CheckFailure("a command with an unclosed quote was never answered",
                           received=r.to_json(), documented="an error result")
    _still_works(s, "after a syntax error")


@bash_check("bash.errors.exit_recovers", SHOULD, HANDLE_ERRORS,
            "A command that exits the shell (`exit 3`) is answered, and the session keeps working.")
def exit_recovers(s: ToolSession) -> None:
    r = run(s, "exit 3")
    if r.timed_out:
        raise CheckFailure("`exit 3` was never answered", received=r.to_json(),
                           documented="an error result")
    _still_works(s, "after the shell exited")


def _still_works(s: ToolSession, when: str) -> None:
    marker = f"recovered-{_token()}"
    r = run(s, f"echo {marker}")
    if r.is_error or marker not in r.text:
        raise CheckFailure(f"the session does not work {when}", received=r.to_json(),
                           documented=marker + "\n")


# --- timeouts and stdin ---------------------------------------------------------------------------

def _sleep_past_timeout(s: ToolSession) -> ToolResult:
    return run(s, f"sleep {max(120, int(s.timeout * 4))}",
               deadline=s.timeout + grace_for(s.timeout))


@bash_check("bash.timeout.returns_error_in_time", MUST, TIMEOUTS,
            "A command that runs past the command timeout is answered with an error result within "
            "the timeout (plus a grace period).")
def timeout_returns_error(s: ToolSession) -> None:
    r = _sleep_past_timeout(s)
    if r.timed_out:
        raise CheckFailure(f"no answer within {s.timeout:g}s + {grace_for(s.timeout):g}s grace "
                           f"(the subject was given a {s.timeout:g}s timeout)",
                           received=r.to_json(),
                           documented={"content": f"Error: command did not finish within "
                                                  f"{s.timeout:g} seconds", "is_error": True})
    if not r.is_error:
        raise CheckFailure("a command past the timeout was not answered with an error",
                           received=r.to_json(), documented={"is_error": True})


@bash_check("bash.timeout.session_usable_after", MUST, TIMEOUTS,
            "After a command timed out, the session answers the next command correctly.")
def timeout_session_usable(s: ToolSession) -> None:
    if _sleep_past_timeout(s).timed_out:
        raise CheckSkipped("the subject never answered the command past the timeout "
                           "(see bash.timeout.returns_error_in_time)")
    _still_works(s, "after a command timed out")


@bash_check("bash.stdin.does_not_hang", MUST, LIMITATIONS,
            "A command that reads stdin gets end of file at once instead of hanging the session.")
def stdin_does_not_hang(s: ToolSession) -> None:
    r = run(s, 'read -r line; echo "read-status=$?"')
    if r.timed_out or "read-status=1" not in r.text:
        raise CheckFailure("a command reading stdin did not see end of file",
                           received=r.to_json(), documented="read-status=1\n")
    _still_works(s, "after a command read stdin")


# --- input and teardown ---------------------------------------------------------------------------

@bash_check("bash.input.invalid_rejected", MUST, PARAMETERS,
            "Input with neither `command` nor `restart: true` is answered with an error.")
def invalid_rejected(s: ToolSession) -> None:
    for tool_input in ({}, {"restart": False}):
        r = s.call(dict(tool_input))
        if not r.is_error:
            raise CheckFailure(f"{tool_input} was not answered with an error",
                               received=r.to_json(), documented={"is_error": True},
                               reproducer=[tool_input])


@bash_check("bash.session.no_processes_left_after_close", SHOULD, TIMEOUTS,
            "When the session is closed, no process it started is left running.")
def no_processes_left(s: ToolSession) -> None:
    ok(s, "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\"", "starting a background process")
    s.close()
    leaked = getattr(s, "leaked", None)
    if leaked is None:
        raise CheckSkipped("this session cannot list the subject's processes (no /proc)")
    if leaked:
        raise CheckFailure(f"{len(leaked)} process(es) still running after close (now killed)",
                           received=[p.to_json() for p in leaked], documented=[])
