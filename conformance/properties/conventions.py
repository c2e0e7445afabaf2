"""Presentation variants of a bash or editor subject: every open convention, composed.

A :class:`Variant` is a random combination of :class:`Convention` s, each a wrapper around a
subject's handler that changes how it presents what it does (a status footer, CRLF line ends,
tail truncation, tabs shown as spaces, error texts in its own words, content as text blocks...)
or takes a choice the docs leave open (restart a dead shell or ask for a restart, refuse relative
paths, split-lines ``insert``), never what it does to the user's data. The suite's verdict on a
variant must be the verdict on the plain subject (``tests/test_metamorphic.py``; docs/checks.md
"Open conventions" gives each convention the sentence, or the silence, that makes it open).

The public surface::

    from conformance.properties.conventions import variants
    from hypothesis import given

    @given(variants("bash"))
    def test_my_tool(variant):
        factory = variant.wrap(my_bash_factory)   # factory(workdir, timeout=...) -> handler
        ...                                       # run the checks against it
        print(variant.describe())

A variant also runs as a subject of its own, in the subject's process: the factory
``conformance.properties.conventions:variant_subject`` takes ``inner`` (the wrapped factory's
``module:attr``) and ``variant`` (:meth:`Variant.to_json`) as options.

Most conventions need only the handler's answers. Three need the bash session itself and use the
reference's (``conformance/reference/bash.py``: a ``session`` with ``process``, ``script``,
``kill()`` and ``restart()``): command delivery, syntax error, shell exit; on any other handler
they are no-ops. The timeout answer is recognised by the reference's text.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from conformance.subjects.host import accepts_keyword, load_attr, normalise
from simulator import registry

__all__ = ["CONVENTIONS", "Convention", "Variant", "variant_subject", "variants"]

Answer = dict[str, Any]
Factory = Callable[..., Any]


@dataclass
class Context:
    """What a convention's hooks know of the subject: its directory, timeout, tool type, the
    inner handler (``base``) and each convention's own state."""

    workdir: Path
    timeout: float
    tool_type: str
    max_characters: int | None
    base: Any
    state: dict[str, Any] = field(default_factory=dict)

    def call_inner(self, tool_input: Any) -> Answer:
        return normalise(self.base(tool_input))

    @property
    def session(self) -> Any:
        """The reference bash tool's session (``None`` for any other handler)."""
        s = getattr(self.base, "session", None)
        return s if all(hasattr(s, a) for a in ("process", "kill", "restart")) else None


@dataclass(frozen=True)
class Convention:
    """One open convention: its family, its axis (the open question; a variant takes one choice
    per axis), the choice and its parameters. The axis (:data:`AXES`) holds the hooks."""

    family: str
    axis: str
    choice: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def p(self) -> dict[str, Any]:
        return dict(self.params)

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.axis}: {self.choice}" + (f" ({args})" if args else "")

    def to_json(self) -> list[Any]:
        return [self.axis, self.choice, [list(kv) for kv in self.params]]


#: A hook before the call: the (possibly changed) input, or an :class:`Answered` that ends it.
Pre = Callable[[Context, Convention, Any], Any]
#: A hook after the call: given the input as sent to the variant and the answer so far.
Post = Callable[[Context, Convention, Any, Answer], Answer]


# -- shared helpers ---------------------------------------------------------------------------

class Answered(dict[str, Any]):
    """What a hook before the call returns to answer the call itself (the subject is not
    called)."""


def refusal(text: str) -> Answered:
    """An error answer a hook gives instead of calling the subject."""
    return Answered(content=text, is_error=True)


def _is_command(tool_input: Any) -> bool:
    """A bash call that runs a command (not a restart, not malformed)."""
    return (isinstance(tool_input, dict) and tool_input.get("restart") is not True
            and isinstance(tool_input.get("command"), str) and bool(tool_input["command"].strip()))


def _is_restart(tool_input: Any) -> bool:
    return isinstance(tool_input, dict) and tool_input.get("restart") is True


_EXIT_STATUS = re.compile(r"\n?\[exit status (\d+)\]")


def _status(answer: Answer) -> tuple[int, str]:
    """The exit status an answer reports (the reference's ``[exit status N]``, else 0 or 1 from
    ``is_error``) and its text without that line."""
    text = _text(answer)
    found = list(_EXIT_STATUS.finditer(text))
    if not found:
        return (1 if answer["is_error"] else 0), text
    m = found[-1]
    return int(m.group(1)), text[:m.start()] + text[m.end():]


def _text(answer: Answer) -> str:
    c = answer["content"]
    if isinstance(c, str):
        return c
    return "\n".join(str(b.get("text", "")) for b in c if isinstance(b, dict))


def _with_text(answer: Answer, text: str) -> Answer:
    return {**answer, "content": text}


# -- bash: commands ---------------------------------------------------------------------------

def typed(command: str) -> str:
    """The command a terminal passes on after its line editing (``^H``/DEL erase a character,
    ``^U`` the line, ``^W`` a word; other control characters are swallowed)."""
    out: list[str] = []
    for ch in command:
        if ch in "\x08\x7f":
            if out and out[-1] != "\n":
                out.pop()
        elif ch == "\x15":
            while out and out[-1] != "\n":
                out.pop()
        elif ch == "\x17":
            line = "".join(out).rsplit("\n", 1)
            head = line[0] + "\n" if len(line) == 2 else ""
            out = list(head + re.sub(r"\S*\s*$", "", line[-1]))
        elif ch in "\t\n" or ord(ch) >= 0x20:
            out.append(ch)
    return "".join(out)


def _pre_typed(ctx: Context, c: Convention, tool_input: Any) -> Any:
    if _is_command(tool_input):
        return {**tool_input, "command": typed(tool_input["command"])}
    return tool_input


def _pre_stdin_open(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """Commands read a pipe nobody writes: one reading stdin waits for the tool's deadline."""
    if not _is_command(tool_input):
        return tool_input
    fifo = ctx.state.get("fifo")
    if fifo is None:
        where = tempfile.mkdtemp(prefix="tooluse-stdin-")
        fifo = ctx.state["fifo"] = os.path.join(where, "stdin")
        os.mkfifo(fifo)
    command = f"eval {shlex.quote(tool_input['command'])} <>{shlex.quote(fifo)}"
    return {**tool_input, "command": command}


def _close_stdin_open(ctx: Context) -> None:
    fifo = ctx.state.pop("fifo", None)
    if fifo is not None:
        for remove in (lambda: os.unlink(fifo), lambda: os.rmdir(os.path.dirname(fifo))):
            try:
                remove()
            except OSError:
                pass


def _setup_as_written(ctx: Context, c: Convention) -> None:
    """Commands written to the shell as they are, each on lines of its own, then the sentinel
    (seed 003's ``BashSession``: ``f"{command}\\necho {sentinel}\\n"``), not through ``eval``
    with stdin at end of file: a syntax error ends the non-interactive shell, an open quote waits
    for the deadline, a command reading stdin reads the tool's own next line."""
    s = ctx.session

    def script(command: str, sentinel: str) -> bytes:
        text = (f"{command}\n__tooluse_rc=$?; "
                f"builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n")
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # lone surrogates from JSON: U+FFFD, as the reference
            return text.encode("utf-8", "replace")

    s.script = script


def _pre_empty_command(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """An empty (or blank) command is run as nothing: a success, with no output or a
    placeholder."""
    if (isinstance(tool_input, dict) and tool_input.get("restart") is not True
            and isinstance(tool_input.get("command"), str) and not tool_input["command"].strip()):
        return Answered(content=c.p["text"], is_error=False)
    return tool_input


def _pre_history(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """Every command appended to ``$HOME/.bash_history`` (the run's throwaway HOME)."""
    home = os.environ.get("HOME")
    if home and _is_command(tool_input):
        try:
            with open(os.path.join(home, ".bash_history"), "a", encoding="utf-8",
                      errors="replace") as f:
                f.write(tool_input["command"].replace("\x00", "") + "\n")
        except OSError:
            pass
    return tool_input


# -- bash: the session ------------------------------------------------------------------------

ENDED = ("Error: the bash session has ended; restart it with {\"restart\": true} before "
         "sending another command")


def _shell_gone(ctx: Context) -> bool:
    s = ctx.session
    return s is not None and (s.process is None or s.process.poll() is not None)


def _pre_death_asks(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """A shell that ended is not restarted: every command gets an error until ``restart``."""
    if _is_restart(tool_input):
        ctx.state.pop("ended", None)
        return tool_input
    if _is_command(tool_input):
        if ctx.state.get("ended") or _shell_gone(ctx):
            ctx.state["ended"] = True
            return refusal(ENDED)
        s = ctx.session
        ctx.state["proc"] = s.process if s is not None else None
        ctx.state["t0"] = time.monotonic()
    return tool_input


def _post_death_asks(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    s = ctx.session
    if (s is None or not _is_command(tool_input) or ctx.state.get("ended")
            or "t0" not in ctx.state):
        return answer
    t0, proc = ctx.state.pop("t0"), ctx.state.pop("proc", None)
    if ctx.state.pop("restarted on a syntax error", False):
        return answer  # the syntax error's own convention answered it
    timed_out = time.monotonic() - t0 >= 0.9 * ctx.timeout
    if proc is not None and s.process is not proc and not timed_out:
        # The shell exited during the command (``exit``, ``exec``); the tool restarted it, but
        # this convention answers as a tool that does not: the session has ended.
        ctx.state["ended"] = True
        said = "\n".join(x for x in _text(answer).split("\n") if "was restarted" not in x)
        return {"content": f"{said}\n{ENDED}".lstrip("\n"), "is_error": True}
    return answer


def _syntax_error_ends(answer: Answer) -> bool:
    text = _text(answer)
    return answer["is_error"] and "syntax error" in text and "matching" not in text


def _pre_syntax(ctx: Context, c: Convention, tool_input: Any) -> Any:
    if _is_restart(tool_input):
        ctx.state.pop("dead", None)
    elif _is_command(tool_input) and ctx.state.get("dead"):
        return refusal("" if c.choice == "ends the shell, silent errors" else ENDED)
    return tool_input


def _post_syntax(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    """A syntax error ends a non-interactive shell (seed 003's ``BashSession`` design)."""
    s = ctx.session
    if s is None or not _is_command(tool_input) or ctx.state.get("dead"):
        return answer
    if not _syntax_error_ends(answer):
        return answer
    if c.choice == "ends the shell, restarted":
        s.restart()
        ctx.state["restarted on a syntax error"] = True
        return {"content": f"{_text(answer)}\nbash exited on the syntax error; the session was "
                           "restarted (working directory and environment are reset)",
                "is_error": True}
    s.kill()
    ctx.state["dead"] = True
    return answer


TIMED_OUT = "Error: command did not finish within"
TIMEOUT_WORDS = ("Command timed out after {timeout:g} s; the shell was restarted.",
                 "<error>timeout</error>", "bash: bash command timed out after {timeout:g}s")


def _post_timeout_words(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if (_is_command(tool_input) and answer["is_error"] and isinstance(answer["content"], str)
            and answer["content"].startswith(TIMED_OUT)):
        return _with_text(answer, c.p["text"].format(timeout=ctx.timeout))
    return answer


RESTART_WORDS = ("tool has been restarted.", "The bash session was restarted: a new shell in "
                 "the working directory.", "OK")


def _post_restart_words(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if _is_restart(tool_input) and not answer["is_error"]:
        return _with_text(answer, c.p["text"])
    return answer


# -- bash: output -----------------------------------------------------------------------------

def _lines_notice(style: str, kept: str, dropped: int, total: int) -> str:
    if style == "bracketed":
        return f"[... {dropped} lines truncated ({kept} kept of {total}) ...]"
    if style == "xml":
        return f"<truncated lines=\"{dropped}\" total=\"{total}\" kept=\"{kept}\"/>"
    return f"... Output truncated ({total} total lines) ..."


def truncated(text: str, where: str, max_lines: int, max_chars: int, notice: str) -> str:
    """``text`` cut to ``max_lines`` lines and ``max_chars`` characters, keeping its ``head``,
    ``tail`` or both ends (``middle`` cut), with a notice where it was cut."""
    lines = text.split("\n")
    if len(lines) > max_lines:
        note = _lines_notice(notice, where, len(lines) - max_lines, len(lines))
        if where == "head":
            lines = [*lines[:max_lines], "", note]
        elif where == "tail":
            lines = [note, "", *lines[-max_lines:]]
        else:
            half = max_lines // 2
            lines = [*lines[:half], note, *lines[len(lines) - (max_lines - half):]]
        text = "\n".join(lines)
    if len(text) > max_chars:
        note = f"[output truncated to {max_chars} characters]"
        if where == "head":
            text = f"{text[:max_chars]}\n{note}"
        elif where == "tail":
            text = f"{note}\n{text[-max_chars:]}"
        else:
            half = max_chars // 2
            text = f"{text[:half]}\n{note}\n{text[-(max_chars - half):]}"
    return text


def _post_truncation(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not _is_command(tool_input) or not isinstance(answer["content"], str):
        return answer
    p = c.p
    return _with_text(answer, truncated(answer["content"], c.choice, p["max_lines"],
                                        p["max_chars"], p["notice"]))


def rendered(text: str) -> str:
    """``text`` as a terminal screen shows it (tabs to 8-column stops, bell dropped, backspace
    applied, vertical tab and form feed start a line, trailing blanks trimmed)."""
    lines: list[str] = []
    line: list[str] = []
    for ch in text:
        if ch == "\n" or ch in "\x0b\x0c":
            lines.append("".join(line))
            line = [" "] * len(line) if ch != "\n" else []
        elif ch == "\t":
            line.extend(" " * (8 - len(line) % 8))
        elif ch == "\b":
            if line:
                line.pop()
        elif ch == "\r" or ord(ch) >= 0x20 and ch != "\x7f":
            line.append(ch)
    lines.append("".join(line))
    return "\n".join(x.rstrip() for x in lines)


def _post_screen(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if isinstance(answer["content"], str):
        return _with_text(answer, rendered(answer["content"]))
    return answer


def _post_placeholder(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if _is_command(tool_input) and isinstance(answer["content"], str):
        text = answer["content"].rstrip("\n") if c.p["strip"] else answer["content"]
        return _with_text(answer, text if text.strip() else c.p["text"])
    return answer


def _post_frame(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not _is_command(tool_input) or not isinstance(answer["content"], str):
        return answer
    code, out = _status(answer)
    if c.choice == "tags":
        text = f"<returncode>{code}</returncode>\n<output>\n{out}\n</output>"
    elif c.choice == "status footer":
        text = f"{out}\n[Command finished with exit code {code}]"
    else:  # header
        text = f"Exit code: {code}\nOutput:\n{out}"
    return _with_text(answer, text)


def _post_crlf(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if _is_command(tool_input) and isinstance(answer["content"], str):
        return _with_text(answer, answer["content"].replace("\n", "\r\n"))
    return answer


ESCAPES = {
    "prompt colours": ("", "\x1b[01;32m\x1b[00m"),
    "terminal title": ("\x1b[?2004l\x1b]0;tool@sandbox\x07", "\x1b[0m\x1b[?2004h"),
}


def _post_escapes(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if _is_command(tool_input) and isinstance(answer["content"], str):
        start, end = ESCAPES[c.choice]
        return _with_text(answer, f"{start}{answer['content']}{end}")
    return answer


# -- editor -----------------------------------------------------------------------------------

def _editor_path(ctx: Context, tool_input: Any) -> Path | None:
    raw = tool_input.get("path") if isinstance(tool_input, dict) else None
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    p = Path(raw)
    return p if p.is_absolute() else ctx.workdir / p


def _command(tool_input: Any) -> Any:
    return tool_input.get("command") if isinstance(tool_input, dict) else None


def _pre_absolute(ctx: Context, c: Convention, tool_input: Any) -> Any:
    raw = tool_input.get("path") if isinstance(tool_input, dict) else None
    if isinstance(raw, str) and raw and not os.path.isabs(raw):
        return refusal(f"Error: The path {raw} is not an absolute path; it should start "
                   f"with '/' (e.g. {ctx.workdir / raw}).")
    return tool_input


def _pre_size_limit(ctx: Context, c: Convention, tool_input: Any) -> Any:
    path = _editor_path(ctx, tool_input)
    if _command(tool_input) == "create" or path is None:
        return tool_input
    try:
        if not path.is_file():
            return tool_input
        data = path.read_bytes()
    except OSError:
        return tool_input
    limit, line_limit = c.p["file_bytes"], c.p["line_bytes"]
    if len(data) > limit or max(map(len, data.split(b"\n"))) > line_limit:
        return refusal(f"Error: {tool_input['path']} is past this editor's size limit "
                   f"({limit} bytes a file, {line_limit} a line); nothing was changed")
    return tool_input


def _pre_create_refuses(ctx: Context, c: Convention, tool_input: Any) -> Any:
    path = _editor_path(ctx, tool_input)
    if _command(tool_input) == "create" and path is not None and path.is_file():
        return refusal(f"Error: File already exists at: {tool_input['path']}. Cannot "
                   "overwrite files using command `create`; use str_replace.")
    return tool_input


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _pre_phantom_line(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """A file ending in ``"\\n"`` has an empty last line after its last one (``split("\\n")``
    counts it): ``insert_line`` = line count + 1 appends, ``view_range`` [n + 1, n + 1] shows it."""
    path = _editor_path(ctx, tool_input)
    command = _command(tool_input)
    if command not in ("insert", "view") or path is None:
        return tool_input
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        data = None
    if data is None or not data.endswith(b"\n"):
        return tool_input
    n = _line_count(data)
    if command == "insert" and tool_input.get("insert_line") == n + 1 \
            and not isinstance(tool_input.get("insert_line"), bool):
        return {**tool_input, "insert_line": n}
    vr = tool_input.get("view_range")
    if command == "view" and isinstance(vr, list) and len(vr) == 2 and vr[0] == n + 1 \
            and vr[1] in (-1, n + 1) and not any(isinstance(x, bool) for x in vr):
        return Answered(content=f"{n + 1}: ", is_error=False)
    return tool_input


def _pre_view_clamped(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """A ``view_range`` that ends past the last line shows up to the last line."""
    path = _editor_path(ctx, tool_input)
    vr = tool_input.get("view_range") if isinstance(tool_input, dict) else None
    if (_command(tool_input) != "view" or path is None or not isinstance(vr, list)
            or len(vr) != 2 or not all(type(x) is int for x in vr)):
        return tool_input
    try:
        n = _line_count(path.read_bytes()) if path.is_file() else None
    except OSError:
        n = None
    if n is not None and 1 <= vr[0] <= n and vr[1] > n:
        return {**tool_input, "view_range": [vr[0], -1]}
    return tool_input


def _pre_split_lines(ctx: Context, c: Convention, tool_input: Any) -> Any:
    """``insert`` as ``"\\n".join(lines[:k] + text.split("\\n") + lines[k:])`` (the vendor's
    reference), written through the inner editor's ``create`` so that its undo history holds it."""
    path = _editor_path(ctx, tool_input)
    if _command(tool_input) != "insert" or path is None:
        return tool_input
    fields = registry.TOOLS[ctx.tool_type].insert_text_fields or ("new_str",)
    text = next((tool_input[f] for f in fields if f in tool_input), None)
    k = tool_input.get("insert_line")
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        data = None
    if (data is None or not isinstance(text, str) or not isinstance(k, int)
            or isinstance(k, bool) or not 0 <= k <= _line_count(data)):
        return tool_input  # every refusal is the inner editor's
    try:
        data.decode("utf-8")
        new = text.encode("utf-8")
    except UnicodeError:
        return refusal(f"Error: {tool_input['path']} is not UTF-8 text; this editor only "
                   "edits text files.")
    lines = data.split(b"\n")
    out = b"\n".join(lines[:k] + new.split(b"\n") + lines[k:])
    r = ctx.call_inner({"command": "create", "path": tool_input["path"],
                        "file_text": out.decode("utf-8")})
    if r["is_error"]:
        return Answered(r)
    return Answered(content=f"The file {tool_input['path']} has been edited.", is_error=False)


_REFERENCE_LINE = re.compile(r"^(\d+): (.*)$", re.S)
_CLIPPED = "\n<response clipped"


def _number(fmt: str, n: int, width: int) -> str:
    if fmt == "cat -n":
        return f"{n:6d}\t"
    if fmt == "colon":
        return f"{n}: "
    if fmt == "bar":
        return f"{n:>{width}} | "
    if fmt == "left bar":
        return f"{n:<{width}} | "
    if fmt == "arrow":
        return f"{n:6d}\u2192"
    return f"{n}|"


def _tabs(choice: str, size: int, body: str) -> str:
    if choice == "expandtabs":
        return body.expandtabs(size)
    if choice == "spaces":
        return body.replace("\t", " " * size)
    return body


def _render_view(ctx: Context, answer: Answer, numbers: str, tabs: tuple[str, int]) -> Answer:
    """The reference's ``N: line`` view re-rendered with another number format and tab
    rendering, cut again to ``max_characters`` when the tool definition sets it."""
    text = answer["content"]
    clipped = ""
    if _CLIPPED in text:
        text, _, rest = text.partition(_CLIPPED)
        clipped = _CLIPPED + rest
    rows = text.split("\n")
    parsed = [_REFERENCE_LINE.match(r) for r in rows]
    width = max((len(m.group(1)) for m in parsed if m), default=1)
    out = []
    for row, m in zip(rows, parsed, strict=True):
        if m is None:
            out.append(row)
        else:
            prefix = _number(numbers, int(m.group(1)), width)
            if tabs[0] == "expandtabs, stops from the line's start":
                out.append((prefix + m.group(2)).expandtabs(tabs[1]))
            else:
                out.append(prefix + _tabs(tabs[0], tabs[1], m.group(2)))
    shown = "\n".join(out)
    limit = ctx.max_characters
    if limit and (clipped or len(shown) > limit):
        shown = shown[:limit]
        clipped = clipped or f"{_CLIPPED}: view output truncated to {limit} characters>"
    return _with_text(answer, shown + clipped)


def _file_view(ctx: Context, tool_input: Any, answer: Answer) -> bool:
    path = _editor_path(ctx, tool_input)
    return (_command(tool_input) == "view" and not answer["is_error"] and path is not None
            and isinstance(answer["content"], str) and path.is_file())


def _post_view(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not _file_view(ctx, tool_input, answer):
        return answer
    p = c.p
    return _render_view(ctx, answer, p["numbers"], (p["tabs"], p["tab_size"]))


def _post_listing(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    """The reference's directory listing (a header, the directory, then ``DIR/rel`` per entry)
    shown as relative paths, or as names indented by depth."""
    path = _editor_path(ctx, tool_input)
    if (_command(tool_input) != "view" or answer["is_error"] or path is None
            or not isinstance(answer["content"], str) or not path.is_dir()):
        return answer
    text, sep, rest = answer["content"].partition(_CLIPPED)
    lines = text.split("\n")
    if len(lines) < 2:
        return answer
    prefix = lines[1].rstrip("/") + "/"
    entries = lines[2:]
    if not all(e.startswith(prefix) for e in entries):
        return answer
    rels = [e[len(prefix):] for e in entries]
    if c.choice == "relative paths":
        shown = rels
    else:
        shown = ["  " * rel.rstrip("/").count("/") + rel.rstrip("/").rsplit("/", 1)[-1]
                 + ("/" if rel.endswith("/") else "") for rel in rels]
    return _with_text(answer, "\n".join([f"{tool_input['path']}:", *shown]) + sep + rest)


def _post_view_header(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not _file_view(ctx, tool_input, answer):
        return answer
    raw = tool_input["path"]
    if c.choice == "cat -n header":
        return _with_text(answer, f"Here's the result of running `cat -n` on {raw}:\n"
                                  f"{answer['content']}")
    return _with_text(answer, f"<file path=\"{raw}\">\n{answer['content']}\n</file>")


def _post_error_words(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not answer["is_error"]:
        return answer
    text = re.sub(r"^\s*Error:\s*", "", _text(answer))
    command = _command(tool_input)
    if c.choice == "reworded":
        return {"content": f"Could not {command or 'run the command'}: {text}", "is_error": True}
    return {"content": f"<error>{text}</error>", "is_error": True}


def _post_success_words(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    command = _command(tool_input)
    if answer["is_error"] or command not in ("create", "str_replace", "insert", "undo_edit"):
        return answer
    words = {"create": "Created {path}.", "str_replace": "Edited {path}: one occurrence replaced.",
             "insert": "Edited {path}: text inserted after line {line}.",
             "undo_edit": "Reverted the last edit of {path}."}[command]
    return _with_text(answer, words.format(path=tool_input.get("path"),
                                           line=tool_input.get("insert_line")))


def _post_footer(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not isinstance(answer["content"], str):
        return answer
    state = "error" if answer["is_error"] else "ok"
    return _with_text(answer, f"{answer['content']}\n\n[{_command(tool_input)}: {state}]")


# -- both -------------------------------------------------------------------------------------

def _post_blocks(ctx: Context, c: Convention, tool_input: Any, answer: Answer) -> Answer:
    if not isinstance(answer["content"], str):
        return answer
    lines = answer["content"].split("\n")
    n = c.p["lines"]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(lines[i:i + n])}
                                    for i in range(0, len(lines), n)]
    if c.p.get("status"):
        blocks.append({"type": "text", "text": "[error]" if answer["is_error"] else "[ok]"})
    return {"content": blocks, "is_error": answer["is_error"]}


# -- the catalogue of conventions -------------------------------------------------------------

@dataclass(frozen=True)
class Axis:
    """One open question and its hooks; ``order`` places it in the wrapper stack (low: nearest
    to the subject)."""

    family: str
    name: str
    order: int
    choices: st.SearchStrategy[tuple[str, tuple[tuple[str, Any], ...]]]
    pre: Pre | None = None
    post: Post | None = None
    inner_options: Callable[[Convention], tuple[tuple[str, Any], ...]] = lambda c: ()
    needs_session: bool = False
    close: Callable[[Context], None] | None = None
    #: Run once, when the handler is made (the session conventions change the session there).
    setup: Callable[[Context, Convention], None] | None = None


def _one(choice: str, **params: st.SearchStrategy[Any]) -> st.SearchStrategy[
        tuple[str, tuple[tuple[str, Any], ...]]]:
    names = sorted(params)
    return st.tuples(*(params[n] for n in names)).map(
        lambda values: (choice, tuple(zip(names, values, strict=True))))


_KEEP_ALL = (("max_lines", 10**9), ("max_chars", 10**9), ("keep_bytes", 16 * 2**20))

AXES: tuple[Axis, ...] = (
    # bash: what reaches the shell
    Axis("bash", "command delivery", 9, _one("as written, on lines of their own"),
         setup=_setup_as_written, needs_session=True),
    Axis("bash", "commands", 10, _one("typed into a terminal"), pre=_pre_typed),
    Axis("bash", "empty command", 8, _one("a success", text=st.sampled_from(
        ["", "(no output)"])), pre=_pre_empty_command),
    Axis("bash", "history", 11, _one("appended to $HOME/.bash_history"), pre=_pre_history),
    Axis("bash", "stdin", 12, _one("an open pipe: a reader waits for the deadline"),
         pre=_pre_stdin_open, close=_close_stdin_open),
    # bash: the session
    Axis("bash", "syntax error", 20, st.sampled_from(["ends the shell, restarted",
                                                       "ends the shell, asks for a restart",
                                                       "ends the shell, silent errors"]).flatmap(
        lambda ch: _one(ch)), pre=_pre_syntax, post=_post_syntax, needs_session=True),
    Axis("bash", "shell exit", 21, _one("asks for a restart"), pre=_pre_death_asks,
         post=_post_death_asks, needs_session=True),
    Axis("bash", "timeout answer", 23, st.sampled_from(TIMEOUT_WORDS).flatmap(
        lambda w: _one("own words", text=st.just(w))), post=_post_timeout_words),
    Axis("bash", "restart answer", 22, st.sampled_from(RESTART_WORDS).flatmap(
        lambda w: _one("own words", text=st.just(w))), post=_post_restart_words),
    # bash: the output
    Axis("bash", "truncation", 30, st.sampled_from(["head", "tail", "middle"]).flatmap(
        lambda where: _one(where, max_lines=st.sampled_from([50, 100, 400]),
                           max_chars=st.sampled_from([10_000, 30_000]),
                           notice=st.sampled_from(["documented", "bracketed", "xml"]))),
         post=_post_truncation, inner_options=lambda c: _KEEP_ALL),
    Axis("bash", "screen", 31, _one("rendered as a terminal shows it"), post=_post_screen),
    Axis("bash", "empty output", 32, _one("placeholder", text=st.sampled_from(
        ["(no output)", "<no output>", "[command produced no output]"]),
        strip=st.booleans()), post=_post_placeholder),
    Axis("bash", "frame", 33, st.sampled_from(["tags", "status footer", "header"]).flatmap(
        lambda ch: _one(ch)), post=_post_frame),
    Axis("bash", "line ends", 34, _one("CRLF"), post=_post_crlf),
    Axis("bash", "escape codes", 35, st.sampled_from(sorted(ESCAPES)).flatmap(
        lambda ch: _one(ch)), post=_post_escapes),
    Axis("bash", "content", 90, _one("text blocks", lines=st.sampled_from([1, 7, 50]),
                                     status=st.booleans()), post=_post_blocks),
    # editor: what the editor accepts
    Axis("editor", "paths", 10, _one("absolute only"), pre=_pre_absolute),
    Axis("editor", "size limit", 11, _one("refused past a limit",
                                          file_bytes=st.sampled_from([256 * 1024, 1024 * 1024]),
                                          line_bytes=st.sampled_from([16 * 1024, 64 * 1024])),
         pre=_pre_size_limit),
    Axis("editor", "create over a file", 12, _one("refused"), pre=_pre_create_refuses),
    Axis("editor", "last line", 13, _one("a phantom empty line after a final newline"),
         pre=_pre_phantom_line),
    Axis("editor", "insert", 14, _one("split lines"), pre=_pre_split_lines),
    Axis("editor", "view range past the end", 15, _one("clamped to the last line"),
         pre=_pre_view_clamped),
    # editor: how it answers
    Axis("editor", "view", 30, st.tuples(
        st.sampled_from(["cat -n", "colon", "bar", "left bar", "arrow", "bare bar"]),
        st.sampled_from(["raw", "expandtabs", "expandtabs, stops from the line's start",
                         "spaces"]),
        st.sampled_from([1, 2, 4, 8])).map(
        lambda t: ("rendered", (("numbers", t[0]), ("tab_size", t[2]), ("tabs", t[1])))),
         post=_post_view),
    Axis("editor", "directory listing", 35, st.sampled_from(
        ["relative paths", "names indented by depth"]).flatmap(lambda ch: _one(ch)),
         post=_post_listing),
    Axis("editor", "view header", 31, st.sampled_from(["cat -n header", "file tag"]).flatmap(
        lambda ch: _one(ch)), post=_post_view_header),
    Axis("editor", "error texts", 32, st.sampled_from(["reworded", "tagged"]).flatmap(
        lambda ch: _one(ch)), post=_post_error_words),
    Axis("editor", "success texts", 33, _one("own words"), post=_post_success_words),
    Axis("editor", "footer", 34, _one("status footer"), post=_post_footer),
    Axis("editor", "content", 90, _one("text blocks", lines=st.sampled_from([1, 5, 1000]),
                                       status=st.just(False)), post=_post_blocks),
)
AXIS = {(a.family, a.name): a for a in AXES}



@dataclass(frozen=True)
class Variant:
    """A combination of conventions (at most one per axis), applied as wrappers around a plain
    subject, nearest to the subject first."""

    family: str
    conventions: tuple[Convention, ...] = ()

    def __post_init__(self) -> None:
        known = [c for c in self.conventions if (c.family, c.axis) not in AXIS]
        if known:
            raise ValueError(f"unknown conventions {[c.describe() for c in known]}; see "
                             "conformance.properties.conventions.AXES")
        ordered = tuple(sorted(self.conventions, key=lambda c: AXIS[c.family, c.axis].order))
        object.__setattr__(self, "conventions", ordered)

    def describe(self) -> str:
        """One line: ``bash: frame: tags; truncation: tail (max_lines=100, ...)``."""
        if not self.conventions:
            return f"{self.family}: plain"
        return f"{self.family}: " + "; ".join(c.describe() for c in self.conventions)

    def axes(self) -> set[str]:
        return {c.axis for c in self.conventions}

    def to_json(self) -> str:
        return json.dumps([c.to_json() for c in self.conventions])

    @classmethod
    def from_json(cls, family: str, text: str) -> Variant:
        return cls(family, tuple(Convention(family, axis, choice, tuple(map(tuple, params)))
                                 for axis, choice, params in json.loads(text)))

    def inner_options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c in self.conventions:
            out.update(AXIS[c.family, c.axis].inner_options(c))
        return out

    def wrap(self, factory: Factory) -> Factory:
        """``factory`` (``factory(workdir, timeout=..., **options) -> handler``) with every
        convention of the variant applied to the handlers it makes."""
        variant = self

        def make(workdir: Path, timeout: float = 30.0, **options: Any) -> VariantHandler:
            kwargs = dict(options)
            for key, value in variant.inner_options().items():
                if accepts_keyword(factory, key):
                    kwargs[key] = value
            if accepts_keyword(factory, "timeout"):
                kwargs["timeout"] = timeout
            base = factory(Path(workdir), **kwargs)
            tool_type = (getattr(base, "tool_type", None) or options.get("tool_type")
                         or {"bash": "bash_20250124", "editor": "text_editor_20250728"}
                         [variant.family])
            ctx = Context(Path(os.path.realpath(workdir)), timeout, tool_type,
                          options.get("max_characters"), base)
            return VariantHandler(ctx, variant)

        make.__name__ = f"{getattr(factory, '__name__', 'factory')}_variant"
        return make


class VariantHandler:
    """A handler with a variant's conventions around it (a subject's handler: call it with the
    tool input, ``close()`` at the end)."""

    def __init__(self, ctx: Context, variant: Variant) -> None:
        self.ctx = ctx
        self.variant = variant
        self.steps = [(AXIS[c.family, c.axis], c) for c in variant.conventions]
        for axis, c in self.steps:
            if axis.setup is not None and (not axis.needs_session or ctx.session is not None):
                axis.setup(ctx, c)

    def __call__(self, tool_input: Any) -> Answer:
        ctx = self.ctx
        answer: Answer | None = None
        current = tool_input
        for axis, c in self.steps:
            if axis.pre is not None and (not axis.needs_session or ctx.session is not None):
                current = axis.pre(ctx, c, current)
                if isinstance(current, Answered):
                    answer = dict(current)
                    break
        if answer is None:
            answer = ctx.call_inner(current)
            answer = {"content": answer["content"], "is_error": bool(answer["is_error"])}
        for axis, c in self.steps:
            if axis.post is not None and (not axis.needs_session or ctx.session is not None):
                answer = axis.post(ctx, c, tool_input, answer)
        return answer

    def close(self) -> None:
        try:
            fn = getattr(self.ctx.base, "close", None)
            if callable(fn):
                fn()
        finally:
            for axis, _ in self.steps:
                if axis.close is not None:
                    axis.close(self.ctx)


#: Every axis of each family.
CONVENTIONS: Mapping[str, tuple[str, ...]] = {
    f: tuple(a.name for a in AXES if a.family == f) for f in ("bash", "editor")}


@st.composite
def _variants(draw: st.DrawFn, family: str, min_size: int) -> Variant:
    axes = [a for a in AXES if a.family == family]
    chosen = draw(st.lists(st.sampled_from(axes), min_size=min_size, max_size=len(axes),
                           unique_by=lambda a: a.name))
    conventions = []
    for axis in chosen:
        choice, params = draw(axis.choices)
        conventions.append(Convention(family, axis.name, choice, params))
    return Variant(family, tuple(conventions))


def variants(family: str, *, min_size: int = 1) -> st.SearchStrategy[Variant]:
    """Variants of a ``bash`` or ``editor`` subject: ``min_size`` or more conventions, each axis
    at most once, every choice and parameter drawn. Shrinks towards fewer conventions."""
    if family not in CONVENTIONS:
        raise ValueError(f"no conventions for {family!r}; use one of {sorted(CONVENTIONS)}")
    return _variants(family, min_size)


def variant_subject(workdir: Path, timeout: float = 30.0, *, inner: str, variant: str = "[]",
                    family: str = "bash", **options: Any) -> VariantHandler:
    """A subject factory: the factory ``inner`` (``module:attr``) wrapped in ``variant``
    (:meth:`Variant.to_json`), for a subject process: ``factory_subject(
    "conformance.properties.conventions:variant_subject", family=..., options={"inner": ...,
    "variant": ..., "family": ...})``."""
    make = Variant.from_json(family, variant).wrap(load_attr(inner))
    return make(workdir, timeout=timeout, **options)
