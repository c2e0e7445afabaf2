"""Bash checks: failures, a shell that exits, timeouts, stdin, background jobs, teardown."""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import strategies as st

from conformance.catalog import CheckSkipped
from conformance.checks.bash import (
    HANDLE_ERRORS,
    IMPLEMENT,
    MUST,
    SHOULD,
    TIMEOUTS,
    bash_check,
    does_not_work,
    has,
    has_line,
    lines_of,
    ok,
    q,
    readable,
    run,
    still_works,
    token,
    waited,
    works,
)
from conformance.checks.bash_replay import Again, fail
from conformance.checks.properties import run_property
from conformance.session import ToolResult, ToolSession
from conformance.subjects.isolation import grace_for


@bash_check("bash.errors.failure_flagged", MUST, HANDLE_ERRORS,
            "A command that fails (non-zero exit status) is answered with is_error: true; one "
            "that succeeds is not.", tags=("property",))
def failure_flagged(s: ToolSession) -> None:
    t = token()
    for command in ("false", f"tooluse_no_such_command_{t}", f"ls {q(s.workdir / 'missing')}"):
        r = run(s, command)
        if not r.is_error:
            fail(s, f"`{command}` failed but the result is not flagged", received=r,
                 documented={"is_error": True}, reproducer=[{"command": command}],
                 shows=lambda a: not a.last.is_error and not a.last.timed_out)

    def body(case: tuple[int, str]) -> None:
        status, word = case
        r = run(s, f"echo {shlex.quote(word)}; (exit {status})")
        if r.is_error != (status != 0):
            flagged = r.is_error
            fail(s, f"exit status {status} answered with is_error={r.is_error}", received=r,
                 documented={"is_error": status != 0},
                 shows=lambda a: a.last.is_error == flagged and not a.last.timed_out)

    words = st.text(st.characters(min_codepoint=48, max_codepoint=122,
                                  categories=["Lu", "Ll", "Nd"]), min_size=1, max_size=8)
    statuses = st.one_of(st.just(0), st.just(1), st.integers(0, 255))
    run_property(s, st.tuples(statuses, words), body)


def _recovers_or_is_restarted(s: ToolSession, first: ToolResult, what: str) -> str:
    """After ``first`` (the answer to a command that can break the session), judged by what the
    session does, never by the words of the answers (seed 003 "Handle errors": "When a command
    fails or the session breaks, tell Claude what happened", with is_error: true):

    - the next command works: the session kept working (holding its state, or as a fresh
      session that replaced a shell that ended: the seed's own design, restarted on death);
    - else the session is broken, and that must show: the next command is answered at once
      with an error (not a success without its output, not only when the tool's command
      timeout runs out, as a tool waiting for a dead shell answers), and ``restart: true``
      brings the session back."""
    fine, r2 = works(s)
    if fine:
        return "the session keeps working by itself"
    if not r2.is_error:
        fail(s, f"after {what} the session does not work, and `echo` was answered as a success "
             "without its output (a broken session must be answered with is_error: true)",
             received=[first, r2], documented="the echo's output, or is_error: true",
             shows=lambda a: does_not_work(a) and not a.last.is_error)
    if _at_the_deadline(s, r2):
        fail(s, f"after {what} the session does not work: `echo` was answered only when the "
             f"tool's {s.timeout:g}s command timeout ran out ({waited(r2)}): the shell is gone "
             "and was not replaced", received=[first, r2],
             documented="the echo's output, or an error at once; and a working session after "
                        "`restart: true`",
             shows=lambda a: does_not_work(a) and _at_the_deadline(a.session, a.last))
    rr = s.call({"restart": True})
    fine, r3 = works(s)
    if rr.is_error or not fine:
        fail(s, f"after {what} the session does not work, not even after `restart: true`",
             received=[r2, rr, r3],
             documented={"restart": "a confirming result", "next command": "works"},
             shows=lambda a: a.results[-2].is_error or does_not_work(a))
    asks = " (it asks for a restart)" if _asks_for_restart(first, r2) else ""
    return f"the tool answers with errors until a restart{asks}, which brings the session back"


def _at_the_deadline(s: ToolSession, r: ToolResult) -> bool:
    """Was ``r`` answered only when the subject's command timeout ran out (time the harness
    allowed for measured load aside)?"""
    timeout = float(getattr(s, "timeout", 0) or 0)
    return timeout > 0 and r.elapsed - r.allowance >= 0.8 * timeout


def _asks_for_restart(*answers: ToolResult) -> bool:
    """Is one of ``answers`` an error mentioning a restart? (Reported, never required.)"""
    return any(x.is_error and "restart" in readable(x.text).lower() for x in answers)


#: Syntax errors: an unclosed quote (a shell fed through a pipe waits for the rest), and one
#: that ends a non-interactive shell at once (seed 003's own design reads it as it comes).
SYNTAX_ERRORS = ("echo 'unclosed", "echo )")


@bash_check("bash.errors.syntax_error_recovers", SHOULD, HANDLE_ERRORS,
            "A command with a syntax error (an unclosed quote, `echo )`) is answered in time; "
            "the next command works, or is answered at once with an error and works after a "
            "restart.")
def syntax_error_recovers(s: ToolSession) -> str:
    # Whether the answer is flagged is bash.errors.failure_flagged's business (exit status 2).
    seen: list[str] = []
    for command in SYNTAX_ERRORS:
        r = run(s, command)
        if r.timed_out:
            fail(s, f"a command with a syntax error (`{command}`) was never answered",
                 received=r, documented="an error result", shows=lambda a: a.last.timed_out)
        seen.append(_recovers_or_is_restarted(s, r, f"a syntax error (`{command}`)"))
    return "syntax error: " + "; ".join(dict.fromkeys(seen))


@bash_check("bash.errors.exit_recovers", SHOULD, HANDLE_ERRORS,
            "A command that exits the shell (`exit 3`) is answered; the next command works, or "
            "is answered at once with an error and works after a restart.")
def exit_recovers(s: ToolSession) -> str:
    r = run(s, "exit 3")
    if r.timed_out:
        fail(s, "`exit 3` was never answered", received=r, documented="an error result",
             shows=lambda a: a.last.timed_out)
    return "exit: " + _recovers_or_is_restarted(s, r, "the shell exited")


# --- timeouts, stdin, background jobs --------------------------------------------------------------

def _sleep_past_timeout(s: ToolSession) -> ToolResult:
    return run(s, f"sleep {max(120, int(s.timeout * 4))}",
               deadline=s.timeout + grace_for(s.timeout))


def _print_past_timeout(s: ToolSession) -> ToolResult:
    """A command that never ends and prints all the time, with no pause: a deadline a tool
    checks only while it waits for output (or restarts at each output) never comes. Seed 003
    gives *every* command a deadline."""
    return run(s, f"yes tick-{token()}",
               deadline=s.timeout + grace_for(s.timeout))


@bash_check("bash.timeout.returns_error_in_time", MUST, TIMEOUTS,
            "A command that runs past the command timeout, silent or printing all along, is "
            "answered with an error result within the timeout (plus a grace period), also when a "
            "job that left the shell's process group still holds the output.")
def timeout_returns_error(s: ToolSession) -> str | None:
    for how, past in (("", _sleep_past_timeout), (" that keeps printing", _print_past_timeout)):
        r = past(s)
        if r.timed_out:  # judged on time: the replay's answer did not come in time either
            fail(s, f"a command{how} past the timeout: no answer within {s.timeout:g}s + "
                 f"{grace_for(s.timeout):g}s grace (the subject was given a {s.timeout:g}s "
                 f"timeout; {waited(r)})", received=r,
                 documented={"content": f"Error: command did not finish within {s.timeout:g} "
                                        "seconds", "is_error": True},
                 shows=lambda a: a.last.timed_out)
        if not r.is_error:
            fail(s, f"a command{how} past the timeout was not answered with an error",
                 received=r, documented={"is_error": True},
                 shows=lambda a: not a.last.is_error and not a.last.timed_out)
    return _timeout_after_an_escaped_job(s)


def _timeout_after_an_escaped_job(s: ToolSession) -> str | None:
    """A job that left the shell's process group (``setsid cmd &``, its output not redirected)
    still holds the session's output pipe when a later command runs past the timeout: killing
    the group does not close the pipe, and a tool that waits for its reader to see end of file
    before it answers never answers (seed 003's own Python ``execute_with_timeout`` does: its
    ``with`` block waits for the reader thread). Run on a restarted session, so that what the
    first timeout left behind is not judged twice; a setup step another check owns that does
    not work leaves this part unrun (said in the result), the first part judged."""
    t = token()
    job = f"setsid sleep {max(60, int(s.timeout * 10))} & echo escaped-{t}"
    if s.call({"restart": True}).is_error:
        return "a job that left the process group: not tried (see bash.restart.confirms)"
    r = run(s, job, deadline=s.timeout + grace_for(s.timeout))
    if r.timed_out or r.is_error or not has(r, f"escaped-{t}"):
        return ("a job that left the process group: not tried (see "
                "bash.session.background_job_does_not_hang)")
    r = _sleep_past_timeout(s)
    if r.timed_out:  # judged on time: the replay's answer did not come in time either
        fail(s, f"after a job that left the shell's process group (`{job}`), a command past the "
             f"timeout got no answer within {s.timeout:g}s + {grace_for(s.timeout):g}s grace "
             f"({waited(r)}; waiting for the output pipe the job still holds?)", received=r,
             documented={"content": f"Error: command did not finish within {s.timeout:g} "
                                    "seconds", "is_error": True},
             reproducer=[{"command": job}, dict(s.history[-1])],
             shows=lambda a: a.last.timed_out)
    return None


@bash_check("bash.timeout.session_usable_after", MUST, TIMEOUTS,
            "After a command timed out, the session answers the next command correctly.")
def timeout_session_usable(s: ToolSession) -> None:
    if _sleep_past_timeout(s).timed_out:
        raise CheckSkipped("the subject never answered the command past the timeout "
                           "(see bash.timeout.returns_error_in_time)")
    still_works(s, "after a command timed out")


@bash_check("bash.stdin.does_not_hang", MUST, TIMEOUTS,
            "A command that reads stdin does not hang the session: it sees end of file at once, "
            "or the tool's command timeout ends it with an error in time; a command fed input "
            "nobody sent (the session's own) is not answered as a success, and the session works "
            "afterwards.")
def stdin_does_not_hang(s: ToolSession) -> str:
    # Seed 003's own design (a pipe to a non-interactive bash) lets a command reading stdin read
    # the tool's next line, `echo <sentinel>`: "the session cannot run ... any command that
    # waits for input on stdin" ("Limitations"), and "Use command timeouts" gives the remedy,
    # a deadline that ends it with an error. What is judged: no hang, an error flagged when the
    # command was fed what nobody sent (never a success), and a session that works after.
    probe = s.workdir / f"stdin-probe-{token()}"
    deadline = s.timeout + grace_for(s.timeout)
    r = run(s, f'read -r line; status=$?; printf "%s" "$line" > {q(probe)}; '
               f'echo "read-status=$status"', deadline=deadline)
    if r.timed_out:  # judged on time: the replay's answer did not come in time either
        fail(s, f"a command reading stdin hung the session: no answer within {deadline:g}s "
             f"({s.timeout:g}s command timeout + grace; {waited(r)})", received=r,
             documented="end of file at once (read-status=1), or an error result from the "
                        "command timeout", shows=lambda a: a.last.timed_out)
    fed = _fed(probe)
    if fed and not r.is_error:  # what it was fed differs run to run: fed anything, a success
        fail(s, f"a command reading stdin was fed input nobody sent it (the session's own "
             f"input?) and answered as a success: it read {fed[:120]!r}", received=r,
             documented="read-status=1\n, or an error result (the command timeout)",
             shows=lambda a: bool(_fed(a.path(probe))) and not a.last.is_error
             and not a.last.timed_out)
    still_works(s, "after a command read stdin")
    if not r.is_error and has_line(r, "read-status=1"):
        return "stdin: end of file at once"
    if r.is_error:
        how = ("ended by the tool's timeout" if r.elapsed >= 0.8 * s.timeout
               else "answered at once with an error")
        if fed:
            return (f"stdin: command {how}, after it read the session's own input (the bash "
                    "tool docs, Limitations: a command waiting on stdin cannot run)")
        return f"stdin: command {how}"
    first = next((x.strip() for x in lines_of(r) if x.strip()), "")
    return f"stdin: answered without end of file ({first[:40]!r})"


def _fed(probe: Path) -> str:
    """What a command reading stdin wrote to ``probe``: the input it was fed."""
    try:
        return probe.read_text(errors="replace") if probe.exists() else ""
    except OSError:
        return ""


#: Background jobs in the forms models write, each as its own command followed by an echo
#: (``{n}``: seconds the job runs, ``{t}`` a token, ``{log}`` a log file). The first is two jobs
#: at once, one printing late; the last keeps printing to the session's output.
BACKGROUND_FORMS = (
    "sleep {n} & (sleep {n}; echo late-{t}) &",
    "sleep {n} &",
    "nohup sleep {n} &",
    "nohup sleep {n} > /dev/null 2>&1 &",
    "sleep {n} > {log} 2>&1 &",
    "(sleep {n} &)",
    "sleep {n} & disown",
    "setsid sleep {n} &",
    "python3 -m http.server 0 --bind 127.0.0.1 &",
    "(for i in $(seq {ticks}); do echo tick-{t}; sleep 0.2; done) &",
)


def background_command(form: str, s: ToolSession, t: str) -> str:
    n = max(60, int(s.timeout * 10))
    job = form.format(n=n, t=t, ticks=n * 5, log=q(s.workdir / f"job-{t}.log"))
    return f"{job} echo started-{t}" if job.endswith("&") else f"{job}; echo started-{t}"


@bash_check("bash.session.background_job_does_not_hang", MUST, IMPLEMENT,
            "A command that starts a background job in any of the forms models write (`cmd &`, "
            "`nohup cmd &`, `cmd > log 2>&1 &`, `(cmd &)`, `cmd & disown`, `setsid cmd &`, a "
            "server, a job that keeps printing, a command that ends in `&`) is answered in time "
            "with its own output, not held until the job ends, and the next command works.")
def background_job_does_not_hang(s: ToolSession) -> None:
    deadline = s.timeout + grace_for(s.timeout)
    for form in BACKGROUND_FORMS:
        t = token()
        command = background_command(form, s, t)
        sent = [{"command": command}]
        r = run(s, command, deadline=deadline)
        documented = {"content": f"started-{t}\n", "is_error": False}
        if r.timed_out:  # judged on time: the replay's answer did not come in time either
            fail(s, f"a command that left a job running in the background (`{command}`) hung "
                 f"the session: no answer within {deadline:g}s ({waited(r)}; waiting for the "
                 "end of the job's output?)", received=r, documented=documented,
                 reproducer=sent, shows=lambda a: a.last.timed_out)

        def unanswered(answer: ToolResult, marker: str = f"started-{t}") -> bool:
            return answer.is_error or not has(answer, marker)

        if unanswered(r):
            what = "with an error" if r.is_error else "without its output"
            fail(s, f"a command that left a job running in the background (`{command}`) was "
                 f"answered {what}, not with its own output started-{t} (held until the tool's "
                 "timeout?)", received=r, documented=documented, reproducer=sent,
                 shows=lambda a: unanswered(a.last))
        fine, r2 = works(s)
        if not fine:
            sent.append(dict(s.history[-1]))  # the echo, with its marker
            fail(s, f"the session does not work after a command started a background job "
                 f"(`{command}`): `echo` was answered "
                 f"{'with an error' if r2.is_error else 'without its output'}",
                 received=r2, documented="recovered-…\n", reproducer=sent,
                 shows=does_not_work)
    _ends_in_ampersand(s, deadline)


def _ends_in_ampersand(s: ToolSession, deadline: float) -> None:
    """A command that ENDS in ``&`` and nothing after it (``sleep 60 &``), as models write it: a
    tool that appends its own ``; echo <marker>`` makes it ``sleep 60 &; echo …``, a syntax
    error (a vendor demo does). Answered in time, as a success (it printed nothing, exited 0),
    and the next command works."""
    command = f"sleep {max(60, int(s.timeout * 10))} &"
    sent = [{"command": command}]
    r = run(s, command, deadline=deadline)
    documented = {"content": "", "is_error": False}
    if r.timed_out:  # judged on time: the replay's answer did not come in time either
        fail(s, f"a command ending in `&` (`{command}`) hung the session: no answer within "
             f"{deadline:g}s ({waited(r)})", received=r, documented=documented,
             reproducer=sent, shows=lambda a: a.last.timed_out)
    if r.is_error:
        fail(s, f"a command ending in `&` (`{command}`) was answered with an error (did the tool "
             "append its own command after the `&`, making `&;` a syntax error?)", received=r,
             documented=documented, reproducer=sent,
             shows=lambda a: a.last.is_error and not a.last.timed_out)
    fine, r2 = works(s)
    if not fine:
        sent.append(dict(s.history[-1]))
        fail(s, f"the session does not work after a command ending in `&` (`{command}`): `echo` "
             f"was answered {'with an error' if r2.is_error else 'without its output'}",
             received=r2, documented="recovered-…\n", reproducer=sent, shows=does_not_work)


def _leaks_at_close(a: Again) -> bool:
    """Judge: closing the replay's subject leaves processes running (which ones differs run to
    run: their number and names are not compared)."""
    a.session.close()
    return bool(getattr(a.session, "leaked", None))


@bash_check("bash.session.no_processes_left_after_close", SHOULD, TIMEOUTS,
            "When the session is closed, no process it started is left running.")
def no_processes_left(s: ToolSession) -> None:
    ok(s, "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\"", "starting a background process")
    s.close()
    leaked = getattr(s, "leaked", None)
    if leaked is None:
        raise CheckSkipped("this session cannot list the subject's processes (no /proc)")
    if leaked:
        fail(s, f"{len(leaked)} process(es) still running after close (now killed)",
             received=[p.to_json() for p in leaked], documented=[], shows=_leaks_at_close)
