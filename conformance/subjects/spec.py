"""Subjects: what is under test, named by a ``module:attr`` factory or a command line.

A :class:`Subject` is a description (family, tool type, spec); :meth:`Subject.open` starts it for
one test case in a fresh working directory and returns a :class:`ProcessSession` (a
:class:`~conformance.session.ToolSession`). Bad specs are :class:`~conformance.cli.UsageError` s that
name the problem and the fix, raised before anything runs.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.cli import UsageError
from conformance.results import SubjectInfo
from conformance.subjects import forkserver
from conformance.subjects.host import accepts_keyword, load_attr
from conformance.subjects.process import ProcessSession, SubjectStartError

Kind = Literal["factory", "command"]

#: Check family -> tool-registry family.
REGISTRY_FAMILY = {"bash": "bash", "editor": "text_editor"}
#: The tool type a subject implements when none is declared.
DEFAULT_TOOL_TYPES = {"bash": "bash_20250124", "editor": "text_editor_20250728"}


def tool_types_of(family: str) -> list[str]:
    from simulator.registry import TOOLS

    reg = REGISTRY_FAMILY.get(family)
    return sorted(t.type for t in TOOLS.values() if t.family == reg)


def check_tool_type(family: str, tool_type: str | None) -> str:
    """The declared tool type, validated against the registry (default per family)."""
    if family not in REGISTRY_FAMILY:
        raise UsageError(f"unknown subject family {family!r}; use one of "
                         f"{', '.join(REGISTRY_FAMILY)}")
    if tool_type is None:
        return DEFAULT_TOOL_TYPES[family]
    known = tool_types_of(family)
    if tool_type not in known:
        raise UsageError(f"{tool_type!r} is not a {family} tool type; declare one of "
                         f"{', '.join(known)}")
    return tool_type


def resolve_factory(spec: str) -> Any:
    """Import the factory named by ``module:attr`` or ``path/to/file.py:attr``."""
    modname, sep, attr = spec.rpartition(":")
    if not sep or not modname or not attr:
        raise UsageError(f"subject {spec!r} is not module:attr; name the factory, e.g. "
                         "mypkg.tools:make_bash or path/to/subject.py:factory")
    is_path = modname.endswith(".py") or "/" in modname
    if is_path and not Path(modname).is_file():
        raise UsageError(f"subject {spec!r}: file {modname} does not exist; give an existing "
                         "Python file or an importable module")
    try:
        return _check_callable(spec, load_attr(spec))
    except UsageError:
        raise
    except ModuleNotFoundError as e:
        if not is_path and e.name and (modname == e.name or modname.startswith(e.name + ".")):
            raise UsageError(f"subject {spec!r}: no module named {e.name!r}; install the package "
                             "or add its folder to PYTHONPATH (or pass path/to/file.py:attr)"
                             ) from None
        raise UsageError(f"subject {spec!r}: importing {modname} failed: {e}; install the missing "
                         "dependency") from None
    except AttributeError as e:
        raise UsageError(f"subject {spec!r}: {modname} has no attribute {attr!r} ({e}); "
                         f"name one of its factories{_factories_hint(spec)}") from None
    except Exception as e:
        raise UsageError(f"subject {spec!r}: importing {modname} raised {type(e).__name__}: {e}; "
                         "fix the module so that it imports cleanly") from None


def _check_callable(spec: str, obj: Any) -> Any:
    if not callable(obj):
        raise UsageError(f"subject {spec!r} is a {type(obj).__name__}, not a factory; name a "
                         "callable factory(workdir: Path) -> handler")
    return obj


def _factories_hint(spec: str) -> str:
    import difflib

    modname, _, attr = spec.rpartition(":")
    try:
        ns = load_attr(f"{modname}:__dict__")
    except Exception:
        return ""
    names = sorted(n for n, v in ns.items() if callable(v) and not n.startswith("_")
                   and getattr(v, "__module__", None) == ns.get("__name__"))
    close = difflib.get_close_matches(attr, names, n=3)
    shown = close + [n for n in names if n not in close][:max(0, 8 - len(close))]
    more = ", ..." if len(names) > len(shown) else ""
    return f" ({', '.join(shown)}{more})" if names else ""


@dataclass(frozen=True)
class Subject:
    """A subject under test: ``family`` (``bash``/``editor``), the tool type it implements, and a
    factory spec (``kind="factory"``) or a command line (``kind="command"``)."""

    name: str
    family: str
    tool_type: str
    spec: str
    kind: Kind = "factory"
    #: Tool-definition options the subject is configured with (e.g. ``max_characters``): passed
    #: to the factory as keywords, to commands as ``TOOLUSE_<NAME>``, and readable by checks as
    #: session attributes (``s.max_characters``).
    options: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def info(self) -> SubjectInfo:
        return SubjectInfo(name=self.name, family=self.family, tool_type=self.tool_type,
                           spec=self.spec if self.kind == "factory" else f"cmd:{self.spec}")

    def argv(self) -> list[str]:
        if self.kind == "command":
            return ["/bin/sh", "-c", self.spec]
        return [sys.executable, "-m", "conformance.subjects.host"]

    def open(self, workdir: Path, *, timeout: float, case_deadline: float | None = None,
             start_timeout: float = 20.0) -> ProcessSession:
        """Start the subject for one test case (raises ``SubjectStartError``)."""
        env = {f"TOOLUSE_{k.upper()}": str(v) for k, v in self.options.items()}
        server = None
        if self.kind == "factory":
            env["TOOLUSE_OPTIONS"] = json.dumps(self.options)
            base = {"TOOLUSE_SPEC": self.spec, "TOOLUSE_SYS_PATH": json.dumps(
                [str(Path(p).resolve()) if p else str(Path.cwd()) for p in sys.path])}
            env.update(base)
            if forkserver.available():
                try:
                    server = forkserver.server_for(
                        json.dumps([sys.executable, base]), self.argv(), {**os.environ, **base},
                        start_timeout=start_timeout)
                except forkserver.ForkServerError as e:
                    raise SubjectStartError(str(e)) from None
        return ProcessSession(self.argv(), workdir=workdir, tool_type=self.tool_type,
                              timeout=timeout, env=env, handshake=self.kind == "factory",
                              label=f"subject {self.name}", case_deadline=case_deadline,
                              options=self.options, fork_server=server,
                              start_timeout=start_timeout)


def factory_subject(spec: str, *, family: str, tool_type: str | None = None,
                    name: str | None = None, options: dict[str, Any] | None = None) -> Subject:
    """A ``module:attr`` subject, resolved now so that a bad spec fails before the run."""
    tool_type = check_tool_type(family, tool_type)
    factory = resolve_factory(spec)
    modname, _, attr = spec.rpartition(":")
    if modname.endswith(".py") or "/" in modname:  # the subject process runs elsewhere
        spec = f"{Path(modname).resolve()}:{attr}"
    options = dict(options or {})
    for key in options:
        if not accepts_keyword(factory, key):
            raise UsageError(f"subject {spec!r} is configured with {key}={options[key]!r} but its "
                             f"factory takes no {key!r} keyword; add the parameter or drop the "
                             "option")
    return Subject(name or spec.rpartition(":")[0].rpartition("/")[2] + ":" + attr
                   if name is None and "/" in spec else name or spec,
                   family, tool_type, spec, "factory", options)


def command_subject(command: str, *, family: str, tool_type: str | None = None,
                    name: str | None = None, options: dict[str, Any] | None = None) -> Subject:
    """An out-of-process subject in any language: a command line run by ``/bin/sh -c``."""
    tool_type = check_tool_type(family, tool_type)
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"subject command {command!r} does not parse ({e}); quote it as for a "
                         "shell") from None
    if not words:
        raise UsageError("the subject command is empty; give the command that starts your tool, "
                         "e.g. --bash-cmd 'node my_bash.js'")
    return Subject(name or f"cmd:{Path(words[0]).name}", family, tool_type,
                   _absolute_paths(command, words), "command", dict(options or {}))


_SHELL_SYNTAX = set("|&;<>()$`\\*?[]{}~'\"")


def _absolute_paths(command: str, words: list[str]) -> str:
    """The command runs in the case's directory: make relative paths to existing files absolute
    (only for a plain list of words; a command with shell syntax is left as written)."""
    if _SHELL_SYNTAX & set(command):
        return command
    fixed = [str(Path(w).resolve()) if not w.startswith("-") and "/" in w and Path(w).is_file()
             else w for w in words]
    return command if fixed == words else shlex.join(fixed)


def subject_from_option(value: str, *, family: str, tool_type: str | None = None,
                        options: dict[str, Any] | None = None) -> Subject:
    """``--bash VALUE``: a bundled reference subject's name, or a ``module:attr`` spec."""
    from conformance.reference import REFERENCE_SUBJECTS

    ref = REFERENCE_SUBJECTS.get(value)
    if ref is not None:
        if ref.family != family:
            raise UsageError(f"{value!r} is a {ref.family} reference subject, not {family}")
        return factory_subject(ref.spec, family=family, tool_type=tool_type or ref.tool_type,
                               name=value, options={**ref.options, **(options or {})})
    if ":" not in value:
        names = ", ".join(n for n, r in REFERENCE_SUBJECTS.items() if r.family == family)
        raise UsageError(f"{value!r} is neither module:attr nor a reference subject; use "
                         f"module:attr, path/to/file.py:attr, or one of: {names}")
    return factory_subject(value, family=family, tool_type=tool_type, options=options)
