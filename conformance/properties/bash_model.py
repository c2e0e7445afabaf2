"""What a bash session must hold: the model the bash state machine compares a subject with.

Seed 003 (the bash tool page) is the contract:

- "Bash tool": the application keeps **one bash process alive between tool calls, so state
  persists between commands**: the working directory, environment variables and any file a
  command created are there for the next command. One process means every piece of shell state
  persists: plain (unexported) variables, functions, aliases, ``umask``, shell options.
- "Parameters": on ``restart: true`` the shell is killed and a new one started; the **restarted
  session starts clean: working directory, environment variables and running processes are
  gone**. Files stay (they are on disk). What else a restart resets the seed does not list: after
  a restart, functions, aliases, plain variables, ``umask`` and shell options may be kept or reset.
- "Use command timeouts": past its deadline a command is stopped with everything it started and
  the session restarted; whether a tool restarts or only interrupts the command is the tool's
  choice, so after a timeout every piece of state is either what it was or what a fresh session
  has.

The model keeps, for every piece of state, the **set of values the session may hold** (a single
value while nothing is uncertain); a read-back narrows each set to what the subject showed, and a
value outside the set is a disagreement. :data:`INITIAL` stands for "what a fresh session has"
(the model does not know a fresh shell's ``umask``, options or starting directory; a fresh
session's directory is none of the directories the machine creates).

Nothing about decorations is modelled: read-backs print lines with a marker (``@cwd=...``) and
only those lines are read, as the model reads output (:func:`conformance.checks.bash.readable`).
"""

from __future__ import annotations

import copy
import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.wording import one_of, quoted

# --- reading output as the model reads it ---------------------------------------------------------

_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"   # OSC (window title, hyperlinks), ended by BEL or ST
    r"|\x1b[PX^_][^\x1b\n]*\x1b\\"           # DCS, SOS, PM, APC strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"            # CSI (colours, cursor, bracketed-paste mode)
    r"|\x1b[()*+][0-9A-Za-z]"              # character-set designation
    r"|\x1b[@-Z\\-_]")                     # other two-character escapes


def readable(text: str) -> str:
    """The text as the model reads it: escape sequences dropped, CRLF read as LF."""
    return _ESCAPES.sub("", text).replace("\r\n", "\n")


#: What a fresh session has (unknown to the model).
INITIAL = "<initial>"
#: An unset variable, function or alias.
UNSET = None

#: The names the machine uses (unlikely to be set in any environment).
VARIABLES = ("TU_ALPHA", "TU_BETA", "TU_GAMMA")
FUNCTIONS = ("tu_fn_one", "tu_fn_two")
ALIASES = ("tu_al_one", "tu_al_two")
SHOPTS = ("nullglob", "dotglob", "extglob", "nocaseglob")
#: Directories created under an example's directory at its start (``cd`` targets).
SUBDIRS = ("alpha", "alpha/beta", "gamma dir")

#: A variable's state: (value or UNSET, exported).
Var = tuple[str | None, bool]


@dataclass
class Job:
    """A background job the session started: its heartbeat file grows while it runs."""

    form: str
    heartbeat: str | None
    #: Stays in the shell's process group (a restart must stop it); ``setsid`` leaves it.
    in_group: bool


@dataclass
class SessionModel:
    """The sets of values each piece of session state may hold (see the module docstring)."""

    base: str
    cwd: set[str] = field(default_factory=lambda: {INITIAL})
    variables: dict[str, set[Var]] = field(
        default_factory=lambda: {n: {(UNSET, False)} for n in VARIABLES})
    functions: dict[str, set[str | None]] = field(
        default_factory=lambda: {n: {UNSET} for n in FUNCTIONS})
    aliases: dict[str, set[str | None]] = field(
        default_factory=lambda: {n: {UNSET} for n in ALIASES})
    umask: set[str] = field(default_factory=lambda: {INITIAL})
    shopts: dict[str, set[str]] = field(default_factory=lambda: {n: {INITIAL} for n in SHOPTS})
    #: Files the commands wrote: absolute path -> content (None: removed).
    files: dict[str, str | None] = field(default_factory=dict)
    jobs: list[Job] = field(default_factory=list)

    def copy(self) -> SessionModel:
        return copy.deepcopy(self)

    # -- where relative paths go ------------------------------------------------------------

    def subdirs(self) -> list[str]:
        return [os.path.join(self.base, d) for d in SUBDIRS]

    def known_cwd(self) -> str | None:
        """The working directory when it is certain and one of the machine's directories."""
        if len(self.cwd) == 1:
            (only,) = self.cwd
            return None if only == INITIAL else only
        return None

    # -- state changes ----------------------------------------------------------------------

    def set_var(self, name: str, value: str, export: bool | None) -> None:
        """``NAME=value`` (``export`` None: keeps the export flag), ``export NAME=value``."""
        if export is None:
            self.variables[name] = {(value, e) for _, e in self.variables[name]}
        else:
            self.variables[name] = {(value, export)}

    def unset_var(self, name: str) -> None:
        self.variables[name] = {(UNSET, False)}

    def restart(self) -> None:
        """A restarted session: a fresh directory and environment, no processes; what else the
        shell held may be kept or reset (the seed lists only those three)."""
        self.cwd = {INITIAL}
        for name, values in self.variables.items():
            # Exported variables are gone; a plain variable may be kept or not.
            self.variables[name] = {(UNSET, False)} | {(v, False) for v, e in values if not e}
        self._kept_or_reset(cwd=False)
        self.jobs = []

    def after_timeout(self) -> None:
        """After a timeout: each piece of state as it was, or as a fresh session has it."""
        self.cwd = self.cwd | {INITIAL}
        for name, values in self.variables.items():
            self.variables[name] = values | {(UNSET, False)}
        self._kept_or_reset(cwd=False)
        self.jobs = []  # stopped or not: no longer followed

    def _kept_or_reset(self, *, cwd: bool) -> None:
        for table in (self.functions, self.aliases):
            for name in table:
                table[name] = table[name] | {UNSET}
        self.umask = self.umask | {INITIAL}
        for name in self.shopts:
            self.shopts[name] = self.shopts[name] | {INITIAL}


def read_back_command(m: SessionModel) -> str:
    """One command printing every piece of state, one ``@key=value`` line each, with builtins
    only (no command substitution: nothing forks)."""
    parts = ['printf "@cwd=%s\\n" "$PWD"']
    for n in VARIABLES:
        parts.append(f'printf "@var:{n}=%s\\n@env:{n}=%s\\n" "${{{n}-@unset}}" "${{{n}@a}}"')
    for n in FUNCTIONS:
        parts.append(f'if declare -F {n} >/dev/null; then printf "@fn:{n}="; {n}; '
                     f'else echo "@fn:{n}=@unset"; fi')
    for n in ALIASES:
        parts.append(f'printf "@alias:{n}="; alias {n} 2>/dev/null || echo @unset')
    parts.append('printf "@umask="; umask')
    for n in SHOPTS:
        parts.append(f'printf "@shopt:{n}="; shopt -p {n}')
    return "; ".join([*parts, "true"])  # shopt -p exits 1 for an option that is off


def parse_read_back(lines: list[str]) -> dict[str, str]:
    """The ``@key=value`` lines of a read-back (the last of each key wins)."""
    out: dict[str, str] = {}
    for line in lines:
        x = line.strip()
        if x.startswith("@") and "=" in x:
            key, _, value = x[1:].partition("=")
            out[key] = value
    return out


def alias_word(shown: str) -> str | None:
    """``alias tu_al_one='echo word'`` -> ``word``; ``@unset`` -> None."""
    if shown == "@unset":
        return UNSET
    _, _, body = shown.partition("=")
    try:
        words = shlex.split(body)
    except ValueError:
        return body
    text = " ".join(words)
    return text[5:] if text.startswith("echo ") else text


def shopt_state(shown: str) -> str:
    """``shopt -s nullglob`` -> ``on``."""
    return "on" if " -s " in f" {shown} " else "off" if " -u " in f" {shown} " else shown


def same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a.strip()) == os.path.realpath(b.strip())


def cwd_allowed(m: SessionModel, shown: str) -> bool:
    for c in m.cwd:
        if c == INITIAL:
            if not any(same_dir(shown, d) for d in m.subdirs()):
                return True
        elif same_dir(shown, c):
            return True
    return False


@dataclass
class Mismatch:
    """One piece of state the read-back showed outside the model's set."""

    component: str  # cwd, var, env, fn, alias, umask, shopt, file, missing
    name: str
    shown: str
    allowed: str


def compare(m: SessionModel, shown: dict[str, str]) -> list[Mismatch]:
    """Compare a read-back with the model; on agreement, narrow the model to what was shown."""
    out: list[Mismatch] = []
    if "cwd" not in shown:
        return [Mismatch("missing", "read-back", "(no @cwd line)", "every @ line")]
    if not cwd_allowed(m, shown["cwd"]):
        out.append(Mismatch("cwd", "working directory", _text(shown["cwd"]), _shown_set(m.cwd)))
    else:
        kept = {c for c in m.cwd if c != INITIAL and same_dir(shown["cwd"], c)}
        m.cwd = kept or {INITIAL}
    for n in VARIABLES:
        if f"var:{n}" not in shown or f"env:{n}" not in shown:
            out.append(Mismatch("missing", n, "(no @var/@env line)", "every @ line"))
            continue
        value = None if shown[f"var:{n}"] == "@unset" else shown[f"var:{n}"]
        exported = value is not None and "x" in shown[f"env:{n}"]  # ${NAME@a}: attributes
        got: Var = (value, exported)
        if got not in m.variables[n]:
            allowed = m.variables[n]
            component = "var"
            if {v for v, _ in allowed} == {value}:
                component = "env"  # the value is right, the export flag is not
            out.append(Mismatch(component, n, _var_text(got), _shown_set(allowed, _var_text)))
        else:
            m.variables[n] = {got}
    for n in FUNCTIONS:
        _one(out, m.functions, "fn", n, shown, lambda s: None if s == "@unset" else s)
    for n in ALIASES:
        _one(out, m.aliases, "alias", n, shown, alias_word)
    if "umask" in shown:
        got_umask = shown["umask"].strip()
        if INITIAL in m.umask or got_umask in m.umask:
            m.umask = {got_umask}
        else:
            out.append(Mismatch("umask", "umask", got_umask, _shown_set(m.umask, _word)))
    else:
        out.append(Mismatch("missing", "umask", "(no @umask line)", "every @ line"))
    for n in SHOPTS:
        key = f"shopt:{n}"
        if key not in shown:
            out.append(Mismatch("missing", n, "(no @shopt line)", "every @ line"))
            continue
        state = shopt_state(shown[key])
        if INITIAL in m.shopts[n] or state in m.shopts[n]:
            m.shopts[n] = {state}
        else:
            out.append(Mismatch("shopt", n, state, _shown_set(m.shopts[n], _word)))
    return out


def _one(out: list[Mismatch], table: dict[str, set[str | None]], component: str, n: str,
         shown: dict[str, str], parse: Callable[[str], str | None]) -> None:
    key = f"{component}:{n}"
    if key not in shown:
        out.append(Mismatch("missing", n, f"(no @{key} line)", "every @ line"))
        return
    got = parse(shown[key])
    if got in table[n]:
        table[n] = {got}
    else:
        out.append(Mismatch(component, n, _text(got), _shown_set(table[n])))


def _text(v: object) -> str:
    """A value as a user reads it: ``unset``, ``a fresh session's``, or the text quoted."""
    return "unset" if v is None else "a fresh session's" if v == INITIAL else quoted(str(v))


def _word(v: object) -> str:
    """A value that is a word (a umask, ``on``/``off``): shown without quotes."""
    return "unset" if v is None else "a fresh session's" if v == INITIAL else str(v)


def _var_text(v: Any) -> str:
    value, exported = v
    if value is None:
        return "unset"
    return f"{quoted(str(value))} ({'exported' if exported else 'not exported'})"


def _shown_set(values: Iterable[Any], text: Callable[[Any], str] = _text) -> str:
    return one_of(sorted(text(v) for v in values))


__all__ = ["readable", "ALIASES", "FUNCTIONS", "INITIAL", "SHOPTS", "SUBDIRS", "UNSET", "VARIABLES", "Job",
           "Mismatch", "SessionModel", "compare", "parse_read_back", "read_back_command"]
