"""Bash steps that change the session's state, and commands that fail (seed 003 "Bash tool":
state persists between commands; "Handle errors": a failure is answered with ``is_error``).

A :class:`Command` chains simple commands (:class:`~conformance.properties.bash_step.Part`) with
``;``, ``&&`` or newlines: the working directory (:class:`Cd`), exported and plain variables and
``VAR=x cmd`` prefixes (:class:`SetVar`, :class:`Unset`), functions (:class:`DefFn`), aliases
where the shell expands them (:class:`DefAlias`), ``umask`` (:class:`Umask`), shell options
(:class:`Shopt`), files written with ``>``, ``>>`` and here-documents or removed
(:class:`WriteFile`), and commands that fail in different ways (:class:`Fail`,
:data:`FAILURES`: non-zero exit, command not found, a failing command in a pipeline, a missing
file). :class:`Setup` makes an example's directories; :data:`PARTS` draws the simple commands.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from conformance.properties.bash_model import (
    ALIASES,
    FUNCTIONS,
    SHOPTS,
    SUBDIRS,
    VARIABLES,
    SessionModel,
)
from conformance.properties.bash_step import Ctx, Disagreement, Op, Part, path_text, target_path
from conformance.session import ToolResult


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
        return f"cd {path_text(m, self.resolve(m))}"

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
        path = path_text(m, target_path(m, self.name))
        if self.content is None:
            return f"rm -f {path}"
        if self.form == "heredoc" and alone:  # a here-document ends its command line
            return f"cat > {path} <<'EOF'\n{self.content}\nEOF"
        return f"printf '%s\\n' {shlex.quote(self.content)} {'>>' if self.form == '>>' else '>'} {path}"

    def apply(self, m: SessionModel, ctx: Ctx) -> None:
        path = target_path(m, self.name)
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


#: Appended to the key of a disagreement in a command that wrote a path relative to the working
#: directory the model knows: the answer relied on the directory persisting, so a subject that
#: loses it is ``bash.session.cwd_persists``'s (``REPORTED_BY`` in bash_machine).
RELIES_ON_CWD = "@cwd"


@dataclass
class Setup(Op):
    """Makes the example's directories behind the subject's back (no call to the subject); the
    reproducer states them as setup steps before input 1 (:meth:`Disagreement.setup`)."""

    kind = "setup"

    def run(self, ctx: Ctx) -> None:
        for d in ctx.m.subdirs():
            os.makedirs(d, exist_ok=True)
            ctx.planted.append(d)


@dataclass
class Command(Op):
    """Simple commands chained with ``;``, ``&&`` or newlines."""

    parts: list[Part]
    joiner: str

    def run(self, ctx: Ctx) -> None:
        scratch = ctx.m.copy()
        texts, applied, status = [], [], "ok"
        alone = len(self.parts) == 1
        relative = False  # a path written relative to the working directory the model knows
        for p in self.parts:
            relative |= isinstance(p, (Cd, WriteFile)) and scratch.known_cwd() is not None
            texts.append(p.text(scratch) if not isinstance(p, WriteFile) else p.text(scratch, alone))
            if self.joiner == " && " and status == "fail":
                continue  # not run: the chain stopped at the failure
            p.apply(scratch, ctx)
            applied.append(p)
            status = p.status
        command = self.joiner.join(texts)
        try:
            r = ctx.send({"command": command}, "command")
            ctx.expect_status(r, status, f"`{command[:80]}`")
            ctx.m = scratch
            if any(isinstance(p, WriteFile) for p in applied):
                check_files(ctx, r)
        except Disagreement as d:
            if relative:  # e.g. `cd beta` failing where the directory was lost: the cwd's defect
                d.key += RELIES_ON_CWD
            raise
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
