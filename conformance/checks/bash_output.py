"""Bash checks: what a command's result holds (stdout and stderr, partial lines, exact text,
large outputs, sentinel-like lines). See :mod:`conformance.checks.bash` for how output is read."""

from __future__ import annotations

import itertools
import re
import shlex

from hypothesis import strategies as st

from conformance.catalog import CheckSkipped, Severity
from conformance.checks.bash import (
    HOW_IT_WORKS,
    IMPLEMENT,
    LARGE_OUTPUT,
    LIMITATIONS,
    MUST,
    SHOULD,
    bash_check,
    does_not_work,
    expect_in,
    has,
    lines_of,
    ok,
    readable,
    run,
    token,
    waited,
    works,
)
from conformance.checks.bash_replay import fail
from conformance.checks.properties import run_property
from conformance.session import ToolResult, ToolSession
from conformance.subjects.isolation import grace_for
from simulator.sources import protocol


@bash_check("bash.output.stdout_and_stderr", MUST, protocol("4. Bash tool: Semantics"),
            "Both stdout and stderr of a command are returned in its tool_result.")
def stdout_and_stderr(s: ToolSession) -> None:
    t = token()
    r = run(s, f"echo to-stdout-{t}; echo to-stderr-{t} >&2")

    def missing(answer: ToolResult) -> list[str]:
        return [w for w in (f"to-stdout-{t}", f"to-stderr-{t}") if not has(answer, w)]

    if missing(r):
        lost = missing(r)
        fail(s, f"output missing from the result: {', '.join(lost)}", received=r,
             documented=f"to-stdout-{t}\nto-stderr-{t}\n",
             shows=lambda a: missing(a.last) == lost)


@bash_check("bash.output.interleaved_in_order", SHOULD, IMPLEMENT,
            "stdout and stderr are interleaved in the order the command wrote them.")
def interleaved_in_order(s: ToolSession) -> None:
    t = token()
    words = [f"first-{t}", f"second-{t}", f"third-{t}", f"fourth-{t}"]
    r = run(s, f"echo {words[0]}; echo {words[1]} >&2; echo {words[2]}; echo {words[3]} >&2")

    def positions(answer: ToolResult) -> list[int]:
        text = readable(answer.text)
        return [text.find(w) for w in words]

    def out_of_order(answer: ToolResult) -> bool:
        at = positions(answer)
        return -1 in at or at != sorted(at)

    at = positions(r)
    if at[1] == at[3] == -1:
        raise CheckSkipped("stderr is not returned at all (see bash.output.stdout_and_stderr)")
    if out_of_order(r):
        seen = [w for _, w in sorted((p, w) for p, w in zip(at, words, strict=True) if p >= 0)]
        fail(s, f"stdout and stderr are not returned in the order they were written (came back "
             f"as {', '.join(seen)})", received=r, documented="\n".join(words) + "\n",
             shows=lambda a: out_of_order(a.last))


@bash_check("bash.output.partial_last_line", MUST, HOW_IT_WORKS,
            "Output that does not end with a newline is returned, and does not leak into the next "
            "result.")
def partial_last_line(s: ToolSession) -> None:
    t = token()
    r = ok(s, f"printf 'no-newline-{t}'", "printing without a newline")
    expect_in(s, r, f"no-newline-{t}", "output without a final newline was lost")
    r2 = ok(s, f"echo next-{t}", "the next command")
    if not has(r2, f"next-{t}"):
        fail(s, f"the next command's result does not hold its own output next-{t}",
             received=r2, documented=f"next-{t}\n", shows=lambda a: not has(a.last, f"next-{t}"))
    if has(r2, f"no-newline-{t}"):
        fail(s, f"the previous command's output no-newline-{t} leaked into the next result",
             received=r2, documented=f"next-{t}\n",
             shows=lambda a: has(a.last, f"no-newline-{t}"))


def _burst_lines(t: str) -> list[list[str]]:
    """Three bursts of three 60-character lines (each burst longer than any sentinel a tool
    keeps back while it looks for the end of a command; short enough for a terminal's width)."""
    return [[f"burst-{b}-line-{i}-{t}-".ljust(60, "x") for i in range(1, 4)] for b in range(1, 4)]


def _not_once_in_order(r: ToolResult, lines: list[str]) -> str:
    got = [x.strip() for x in lines_of(r)]
    for line in lines:
        n = got.count(line)
        if n != 1:
            return f"{line[:18]}... came back {n} times"
    at = [got.index(line) for line in lines]
    return "" if at == sorted(at) else "the lines came back out of order"


@bash_check("bash.output.written_over_time", MUST, HOW_IT_WORKS,
            "Output a command writes in bursts, with pauses between them, comes back whole: "
            "every line once, in order.")
def written_over_time(s: ToolSession) -> None:
    bursts = _burst_lines(token())
    lines = [x for b in bursts for x in b]
    command = "; sleep 0.3; ".join("printf '%s\\n' " + " ".join(b) for b in bursts)
    r = ok(s, command, "printing in bursts")
    what = _not_once_in_order(r, lines)
    if what:
        fail(s, f"output written in bursts did not come back whole: {what}", received=r,
             documented="\n".join(lines) + "\n",
             shows=lambda a: bool(_not_once_in_order(a.last, lines)))


#: A line of printable text: no control characters (``Cc``: tab, bell, backspace, escape...),
#: which a tool that reads a terminal's screen (tmux) shows rendered, as a terminal does; how a
#: tool returns them is ``bash.output.control_characters`` (INFO): the docs do not say. Code
#: points Unicode has not assigned (``Cn``) are not text either.
_LINE = st.text(st.characters(exclude_categories=["Cs", "Cc", "Cn"]), max_size=40)
#: A line a tool puts in place of empty output ("(no output)", "[empty]", ...).
PLACEHOLDER = re.compile(r"^\W*(?:no output|empty|\(empty output\))\W*$", re.IGNORECASE)


def _block_at(got: str, want: str) -> bool:
    """Is ``want`` in ``got`` as whole lines (starting a line, ending at a line's end or before
    trailing blanks)?"""
    start = 0
    while (i := got.find(want, start)) >= 0:
        j = i + len(want)
        if (i == 0 or got[i - 1] == "\n") and (j == len(got) or got[j].isspace()):
            return True
        start = i + 1
    return False


def _not_as_printed(r: ToolResult, text: str) -> str:
    """How the answer ``r`` to :func:`printf_command` of ``text`` differs from the text (empty:
    it holds the text as one block of lines)."""
    # Trailing blanks of a line are not content the model can see (a terminal screen, as
    # tmux's capture-pane returns it, has none): lines are compared without them.
    want = _trimmed(readable(text)).lstrip("\n").rstrip()
    got = _trimmed(readable(r.text))
    if not want or _block_at(got, want):  # only blank lines printed: anything goes
        return ""
    got_lines = got.split("\n")
    lost = [x for x in want.split("\n") if x.rstrip() not in (g.rstrip() for g in got_lines)]
    return (f"line {lost[0]!r} is not in the result as printed" if lost
            else "every line came back, but not as one contiguous block")


def _trimmed(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _empty_convention(r: ToolResult) -> str:
    shown = [x.strip() for x in lines_of(r) if x.strip()]
    if not shown:
        return "empty output: an empty result"
    marks = [x for x in shown if PLACEHOLDER.match(x)]
    if marks:
        return f"empty output: a placeholder, {marks[0]!r}"
    return f"empty output: only the tool's own lines ({shown[0][:40]!r})"


def printf_command(text: str) -> str:
    """A ``printf`` command, in printable ASCII only, that prints ``text`` and a newline.

    Every byte of the text's UTF-8 that is not printable ASCII (and ``\\``, ``%``, ``'``) is an
    octal escape in the format, so the command holds no control character: a terminal-driven tool
    (commands typed into a pty, where readline and the line discipline read ``^H``, ``^U``, ``^G``,
    a tab as editing keys) runs the command as sent, and the check asserts only the output.
    """
    fmt = "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in "\\%'" else f"\\{b:03o}"
                  for b in text.encode("utf-8"))
    if fmt.startswith("-"):  # a format starting with '-' is read as an option: escape it too
        fmt = "\\055" + fmt[1:]
    return f"printf '{fmt}\\n'"


@bash_check("bash.output.roundtrip", MUST, HOW_IT_WORKS,
            "A command's output is returned unchanged: generated text (no control characters) "
            "printed with printf comes back as one intact block of lines (decorations around it, "
            "trailing blanks of a line and the final blank lines aside).", tags=("property",))
def output_roundtrip(s: ToolSession) -> str | None:
    empty = run(s, "true")
    observed = None if empty.is_error else _empty_convention(empty)

    def body(lines: list[str]) -> None:
        text = "\n".join(lines)
        r = run(s, printf_command(text))
        if r.is_error:
            fail(s, "printing generated text was answered with an error", received=r,
                 documented=text + "\n", shows=lambda a: a.last.is_error)
        what = _not_as_printed(r, text)
        if what:
            fail(s, f"the output did not come back as printed: {what}", received=r,
                 documented=text + "\n",
                 shows=lambda a: not a.last.is_error and _not_as_printed(a.last, text) == what)

    run_property(s, st.lists(_LINE, min_size=1, max_size=12), body)
    return observed


CONTROL_TEXT = "tab\there bell\aend back\bX"


@bash_check("bash.output.control_characters", Severity.INFO, HOW_IT_WORKS,
            "Reports how control characters in a command's output come back: as the bytes "
            "printed, or rendered as a terminal shows them (tabs as spaces, bell dropped, "
            "backspace applied).")
def control_characters(s: ToolSession) -> str:
    r = run(s, printf_command(CONTROL_TEXT))
    text = readable(r.text)
    if r.is_error:
        return "control characters: printing them was answered with an error"
    if "tab\there bell\aend back\bX" in text:
        return "control characters: returned as printed (tab, bell, backspace kept)"
    if "tab" in text and "here" in text:
        kept = [n for n, c in (("tab", "\t"), ("bell", "\a"), ("backspace", "\b")) if c in text]
        return ("control characters: rendered as a terminal shows them"
                + (f" (kept: {', '.join(kept)})" if kept else ""))
    return "control characters: the line did not come back"


LARGE_LINES = 100_000
LARGE_COMMAND = f"seq 1 {LARGE_LINES}"
LARGE_SIZE = sum(len(str(i)) + 1 for i in range(1, LARGE_LINES + 1))


def _numbers(r: ToolResult) -> list[int]:
    """The lines of the result that are numbers ``seq`` printed, in order."""
    out = []
    for line in lines_of(r):
        x = line.strip()
        if x.isdigit() and 1 <= int(x) <= LARGE_LINES:
            out.append(int(x))
    return out


def _has_run(numbers: list[int], length: int = 3) -> bool:
    """Does the result hold ``length`` consecutive lines of the command's output?"""
    streak = 1
    for a, b in itertools.pairwise(numbers):
        streak = streak + 1 if b == a + 1 else 1
        if streak >= length:
            return True
    return False


@bash_check("bash.output.large_output_returns", MUST, LIMITATIONS,
            "A command with a large output (~600 kB) is answered in time, without an error, with "
            "(some of) its output: head, tail or both, truncated in any way.")
def large_output_returns(s: ToolSession) -> None:
    deadline = s.timeout + grace_for(s.timeout)
    r = run(s, LARGE_COMMAND, deadline=deadline)
    documented = "a successful result holding lines of `seq 1 100000` (any part of them)"
    if r.timed_out:  # judged on time: the replay's answer did not come in time either
        fail(s, f"a large output hung the subject: no answer within {deadline:g}s "
             f"({waited(r)})", received=_short(r), documented=documented,
             shows=lambda a: a.last.timed_out)
    if r.is_error:
        fail(s, "a large output was answered with an error", received=_short(r),
             documented=documented, shows=lambda a: a.last.is_error and not a.last.timed_out)
    if not _has_run(_numbers(r)):
        fail(s, "the answer to a large output holds none of the command's output (no three "
             "consecutive lines of `seq 1 100000`)", received=_short(r), documented=documented,
             shows=lambda a: not a.last.is_error and not _has_run(_numbers(a.last)))


@bash_check("bash.output.large_output_truncated", SHOULD, LARGE_OUTPUT,
            "Large outputs are truncated before they are returned (the API does not truncate); "
            "any part may be kept.")
def large_output_truncated(s: ToolSession) -> str:
    r = run(s, LARGE_COMMAND)
    if r.timed_out or r.is_error or not _has_run(_numbers(r)):
        raise CheckSkipped("the large output was not returned (see bash.output.large_output_returns)")
    numbers = _numbers(r)
    if len(set(numbers)) >= LARGE_LINES:
        fail(s, f"all {LARGE_LINES} lines ({LARGE_SIZE} characters) were returned untruncated",
             received=_short(r), documented="{first 100 lines}\n\n... Output truncated "
                                            f"({LARGE_LINES + 1} total lines) ...",
             shows=lambda a: len(set(_numbers(a.last))) >= LARGE_LINES)
    head, tail = 1 in numbers, LARGE_LINES in numbers
    kept = ("head and tail" if head and tail else "head" if head else "tail" if tail
            else "a middle part")
    return f"large output: {kept} kept ({len(set(numbers))} of {LARGE_LINES} lines)"


MEDIUM_LINES = 80


def _medium_lines(t: str) -> list[str]:
    """80 lines of 100 characters (8 kB): under the 100 lines seed 003's helper keeps."""
    return [f"medium-{i:03d}-{t}-".ljust(100, "m") for i in range(1, MEDIUM_LINES + 1)]


def _cut_silently(r: ToolResult, printed: list[str]) -> str:
    """Lines of ``printed`` missing from the answer with no notice (a line that is not one of the
    printed lines, nor a piece of one cut at either end); empty when whole or said so."""
    got = [x.strip() for x in lines_of(r) if x.strip()]
    missing = [p for p in printed if p not in got]
    if not missing:
        return ""
    notices = [x for x in got if x not in printed
               and not any(p.startswith(x) or p.endswith(x) for p in printed)]
    return "" if notices else f"{len(missing)} of {len(printed)} lines"


@bash_check("bash.output.cut_short_says_so", SHOULD, LARGE_OUTPUT,
            "An output that does not come back whole says so: a medium output (80 lines, 8 kB) "
            "comes back whole, or cut with a notice (any words).")
def cut_short_says_so(s: ToolSession) -> str:
    printed = _medium_lines(token())
    r = ok(s, f"printf '%s\\n' {' '.join(printed)}", "printing 80 lines")
    what = _cut_silently(r, printed)
    if what:
        fail(s, f"the output came back cut short without a word: {what} missing and nothing "
             "says the output was truncated", received=_short(r),
             documented="the whole output, or the kept part and a notice (the bash tool docs' helper: "
                        "\"... Output truncated ({n} total lines) ...\")",
             shows=lambda a: bool(_cut_silently(a.last, printed)))
    got = [x.strip() for x in lines_of(r)]
    return ("medium output: returned whole" if all(p in got for p in printed)
            else "medium output: cut, with a notice")


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
    t = token()
    lines = [f"before-{t}", *SENTINEL_LOOKALIKES, f"after-{t}"]
    script = "printf '%s\\n' " + " ".join(shlex.quote(x) for x in lines)
    r = run(s, script)

    def missing(answer: ToolResult) -> list[str]:
        got = iter(x.strip() for x in lines_of(answer))
        return [x for x in lines if not any(g == x for g in got)]  # consumes: in order

    if missing(r):
        lost = missing(r)
        fail(s, f"output with sentinel-like lines was cut short or reordered: {len(lost)} "
             f"line(s) missing or out of order, from {lost[0]!r}", received=r,
             documented="\n".join(lines) + "\n", shows=lambda a: bool(missing(a.last)))
    r2 = run(s, f"echo next-{t}")

    def wrong_next(answer: ToolResult) -> str:
        leaked = [x for x in lines if has(answer, x)]
        return ("was answered with an error" if answer.is_error
                else f"does not hold its own output next-{t}" if not has(answer, f"next-{t}")
                else f"holds the previous command's output ({leaked[0]!r})" if leaked else "")

    what = wrong_next(r2)
    if what:
        fail(s, f"the result after sentinel-like output {what}", received=r2,
             documented=f"next-{t}\n", shows=lambda a: wrong_next(a.last) == what)


@bash_check("bash.output.non_utf8_answered", MUST, HOW_IT_WORKS,
            "Output that is not UTF-8 (bytes 0xff 0xfe between lines of text) is answered in "
            "time, as a success, with the valid text kept in order (the invalid bytes shown in "
            "any way or dropped), and the next command works.")
def non_utf8_answered(s: ToolSession) -> str:
    t = token()
    words = [f"before-{t}", f"invalid-{t}", f"after-{t}"]
    # Octal escapes: the command itself is printable ASCII.
    command = f"printf '{words[0]}\\n\\377\\376 {words[1]}\\n{words[2]}\\n'"
    deadline = s.timeout + grace_for(s.timeout)
    r = run(s, command, deadline=deadline)
    if r.timed_out:  # judged on time: the replay's answer did not come in time either
        fail(s, f"output that is not UTF-8 was never answered: no answer within {deadline:g}s "
             f"({waited(r)})", received=r, documented="\n".join(words) + "\n",
             shows=lambda a: a.last.timed_out)

    def lost(answer: ToolResult) -> list[str]:
        text, at, out = readable(answer.text), 0, []
        for w in words:  # in order
            found = text.find(w, at)
            if found < 0:
                out.append(w)
            else:
                at = found + len(w)
        return out

    if lost(r) or r.is_error:
        missing = lost(r)
        what = (f"lost its valid text ({', '.join(missing)} missing or out of order)" if missing
                else "was answered with an error (the command succeeded)")
        fail(s, f"output that is not UTF-8 {what}", received=r,
             documented="\n".join(words) + "\n (the bytes 0xff 0xfe shown in any way)",
             shows=lambda a: not a.last.timed_out and (bool(lost(a.last)) or a.last.is_error))
    fine, r2 = works(s)
    if not fine:
        fail(s, "the session does not work after output that is not UTF-8: `echo` was answered "
             f"{'with an error' if r2.is_error else 'without its output'}", received=r2,
             documented="recovered-…\n", shows=does_not_work)
    line = next((x for x in lines_of(r) if words[1] in x), "")
    shown = line[:line.find(words[1])].strip() or "dropped"
    return f"non-UTF-8 bytes shown as {shown!r}"
