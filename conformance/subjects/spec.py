"""Subjects: what is under test, named by a ``module:attr`` factory or a command line.

A :class:`Subject` is a description (family, tool type, spec); :meth:`Subject.open` starts it for
one test case in a fresh working directory and returns a :class:`ProcessSession` (a
:class:`~conformance.session.ToolSession`). Bad specs are :class:`~conformance.errors.UsageError` s that
name the problem and the fix, raised before anything runs.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.errors import UsageError
from conformance.results import SubjectInfo
from conformance.subjects import forkserver
from conformance.subjects.case import CaseSettings
from conformance.subjects.host import accepts_keyword, load_attr
from conformance.subjects.launch import (
    Confinement,
    Folders,
    LaunchSpec,
    SubjectStartError,
    launch,
)
from conformance.subjects.process import ProcessSession

Kind = Literal["factory", "command"]

#: Check family -> tool-registry family.
REGISTRY_FAMILY = {"bash": "bash", "editor": "text_editor"}
#: The tool type a subject implements when none is declared.
DEFAULT_TOOL_TYPES = {"bash": "bash_20250124", "editor": "text_editor_20250728"}


def tool_types_of(family: str) -> list[str]:
    from simulator.registry import TOOLS

    reg = REGISTRY_FAMILY.get(family)
    return sorted(t.type for t in TOOLS.values() if t.family == reg)


def a_or_an(word: str) -> str:
    """``word`` with its indefinite article ("an editor", "a bash")."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def check_tool_type(family: str, tool_type: str | None) -> str:
    """The declared tool type, validated against the registry (default per family)."""
    if family not in REGISTRY_FAMILY:
        raise UsageError(f"unknown subject family {family!r}; use one of "
                         f"{', '.join(REGISTRY_FAMILY)}")
    if tool_type is None:
        return DEFAULT_TOOL_TYPES[family]
    known = tool_types_of(family)
    if tool_type not in known:
        raise UsageError(f"{tool_type!r} is not {a_or_an(family)} tool type; declare one of "
                         f"{', '.join(known)}")
    return tool_type


def resolve_factory(spec: str) -> Any:
    """Import the factory named by ``module:attr`` or ``path/to/file.py:attr``.

    A module is looked up in the current directory first, as ``python -m``, pytest's rootdir and
    ``tooluse matrix`` (the config's directory) do: ``tooluse run --bash mytools.bash:make`` works
    in the directory that holds ``mytools/``, and so does the rerun line a report prints for it.
    The subject's host process gets the same ``sys.path``."""
    modname, sep, attr = spec.rpartition(":")
    if not sep or not modname or not attr:
        raise UsageError(f"subject {spec!r} is not module:attr; name the factory, e.g. "
                         "mypkg.tools:make_bash or path/to/subject.py:factory")
    is_path = modname.endswith(".py") or "/" in modname
    if is_path and not Path(modname).is_file():
        raise UsageError(f"subject {spec!r}: file {modname} does not exist; give an existing "
                         "Python file or an importable module")
    if not is_path:
        _import_from_cwd()
    try:
        return _check_callable(spec, load_attr(spec))
    except UsageError:
        raise
    except ModuleNotFoundError as e:
        if not is_path and e.name and (modname == e.name or modname.startswith(e.name + ".")):
            raise UsageError(f"subject {spec!r}: no module named {e.name!r} (looked in "
                             f"{os.getcwd()} and sys.path); run tooluse in the folder that holds "
                             "it, install the package, add its folder to PYTHONPATH, or pass "
                             "path/to/file.py:attr"
                             ) from None
        raise UsageError(f"subject {spec!r}: importing {modname} failed: {e}; install the missing "
                         "dependency") from None
    except AttributeError as e:
        raise UsageError(f"subject {spec!r}: {modname} has no attribute {attr!r} ({e}); "
                         f"name one of its factories{_factories_hint(spec)}") from None
    except Exception as e:
        raise UsageError(f"subject {spec!r}: importing {modname} raised {type(e).__name__}: {e}; "
                         "fix the module so that it imports cleanly") from None


def _import_from_cwd() -> None:
    cwd = os.getcwd()
    if not {"", ".", cwd} & set(sys.path):
        sys.path.insert(0, cwd)
        importlib.invalidate_caches()


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

    def open(self, workdir: Path, case: CaseSettings) -> ProcessSession:
        """Start the subject for one test case, with the run's settings for it (its timeouts
        and confinement; raises ``SubjectStartError``)."""
        env = {f"TOOLUSE_{k.upper()}": str(v) for k, v in self.options.items()}
        server = None
        if self.kind == "factory":
            env["TOOLUSE_OPTIONS"] = json.dumps(self.options)
            base = {"TOOLUSE_SPEC": self.spec, "TOOLUSE_SYS_PATH": json.dumps(
                [str(Path(p).resolve()) if p else str(Path.cwd()) for p in sys.path])}
            env.update(base)
            if case.fork_server and forkserver.available():
                try:
                    server = forkserver.server_for(
                        json.dumps([sys.executable, base]), self.argv(), base,
                        start_timeout=case.startup_timeout, confinement=case.confinement)
                except forkserver.ForkServerError as e:
                    raise SubjectStartError(str(e)) from None
        return ProcessSession(self.argv(), workdir=workdir, tool_type=self.tool_type,
                              timeout=case.timeout, env=env, handshake=self.kind == "factory",
                              label=f"subject {self.name}", case_deadline=case.case_deadline,
                              options=self.options, fork_server=server,
                              start_timeout=case.startup_timeout, confinement=case.confinement)


def factory_subject(spec: str, *, family: str, tool_type: str | None = None,
                    name: str | None = None, options: dict[str, Any] | None = None) -> Subject:
    """A ``module:attr`` subject, resolved now so that a bad spec fails before the run."""
    tool_type = check_tool_type(family, tool_type)
    factory = resolve_factory(spec)
    modname, _, attr = spec.rpartition(":")
    if modname.endswith(".py") or "/" in modname:  # the subject process runs elsewhere
        spec = f"{os.path.abspath(modname)}:{attr}"  # symlinks kept, as in a command
    options = dict(options or {})
    for key in options:
        if not accepts_keyword(factory, key):
            raise UsageError(f"subject {spec!r} is configured with {key}={options[key]!r} but its "
                             f"factory takes no {key!r} keyword; add the parameter or drop the "
                             "option")
    return Subject(check_name(name) if name is not None else factory_label(spec),
                   family, tool_type, spec, "factory", options)


def factory_label(spec: str) -> str:
    """The default label of a factory subject: the spec, or ``file.py:attr`` for a path."""
    modname, _, attr = spec.rpartition(":")
    return f"{modname.rpartition('/')[2]}:{attr}" if "/" in modname else spec


def command_subject(command: str, *, family: str, tool_type: str | None = None,
                    name: str | None = None, options: dict[str, Any] | None = None) -> Subject:
    """An out-of-process subject in any language: a command line run by ``/bin/sh -c``.

    ``name`` labels it in every report (default: :func:`command_label`)."""
    tool_type = check_tool_type(family, tool_type)
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"subject command {command!r} does not parse ({e}); quote it as for a "
                         "shell") from None
    if not words:
        raise UsageError("the subject command is empty; give the command that starts your tool, "
                         "e.g. --bash-cmd 'node my_bash.js'")
    return Subject(check_name(name) if name is not None else command_label(words), family,
                   tool_type, _absolute_paths(command, words), "command", dict(options or {}))


def check_name(name: str) -> str:
    """A ``--name``: one line of printable text (it titles report sections and JUnit suites)."""
    text = name.strip()
    if not text or not text.isprintable():
        raise UsageError(f"--name {name!r}: give a short printable label, e.g. --name my-bash")
    return text


#: Programs that run the script or module named after them: the label names that instead.
_LAUNCHERS = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|tsx|ts-node|ruby|perl|php|lua|java|bash|sh|zsh|dash|"
    r"env|exec|nice|uv|uvx|npx|pnpm|yarn|npm|poetry|pipenv|pdm|hatch|conda|rye|cd|timeout|"
    r"Rscript|dotnet|go)([0-9.]*|\.exe)")
#: Options whose next word is code, not a script (``python -c CODE``, ``node -e CODE``).
_CODE_OPTIONS = {"-c", "-e", "--eval", "-p", "--print", "--command"}
_SCRIPT = re.compile(r".+\.[A-Za-z][A-Za-z0-9]*")


def command_label(words: list[str]) -> str:
    """The default label of a command subject: ``cmd:`` and the script or module it runs
    (``/x/venv/bin/python tool.py`` -> ``cmd:tool.py``, ``python -m pkg.tool`` ->
    ``cmd:pkg.tool``), else its program (``my-bash --fast`` -> ``cmd:my-bash``)."""
    rest = list(words)
    while rest and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", rest[0]):  # VAR=value cmd
        rest.pop(0)
    if not rest:
        return f"cmd:{Path(words[0]).name}"
    program = Path(rest[0]).name
    if not _LAUNCHERS.fullmatch(program):
        return f"cmd:{program}"
    after_code = False
    for prev, word in zip(rest, rest[1:], strict=False):
        if prev == "-m":
            return f"cmd:{word}"
        if prev in _CODE_OPTIONS:
            after_code = True
            continue
        if word.startswith("-") or "=" in word or word in {"&&", ";", "|"}:
            continue
        if _SCRIPT.fullmatch(Path(word).name):
            return f"cmd:{Path(word).name}"
    if after_code:
        return f"cmd:{program}"
    plain = [w for w in rest[1:] if not w.startswith("-") and not _LAUNCHERS.fullmatch(w)
             and w not in {"run", "exec", "x", "&&", ";", "|"}]
    return f"cmd:{Path(plain[0]).name}" if plain and "=" not in plain[0] else f"cmd:{program}"


_SHELL_SYNTAX = set("|&;<>()$`\\*?[]{}~'\"")


def _absolute_paths(command: str, words: list[str]) -> str:
    """The command runs in the case's directory: make relative paths to existing files absolute
    (only for a plain list of words; a command with shell syntax is left as written).

    Symlinks are kept (``os.path.abspath``, not ``Path.resolve``): ``/x/venv/bin/python`` is a
    symlink to the base interpreter, and resolving it would lose the virtual environment. The
    program itself (the first word) is only touched when it is a path (``./tool``): a bare name
    is looked up in ``PATH``."""
    if _SHELL_SYNTAX & set(command):
        return command
    fixed = [os.path.abspath(w) if not w.startswith("-") and ("/" in w or i > 0)
             and Path(w).is_file() else w for i, w in enumerate(words)]
    return command if fixed == words else shlex.join(fixed)


#: How long a command subject is watched at start for an immediate exit, in seconds: a valid
#: subject is still waiting for its first input by then; a mistyped one has long exited.
PREFLIGHT_WINDOW = 1.0
_NOT_FOUND = re.compile(r"not found|no such file|can't open file|cannot find module|cannot open|"
                        r"permission denied|is a directory|ENOENT|not executable|no module named|"
                        r"cannot find package", re.IGNORECASE)


def preflight(subjects: Sequence[Any], case: CaseSettings, *,
              window: float = PREFLIGHT_WINDOW) -> None:
    """Refuse a command subject that cannot start, before any check runs (``UsageError``).

    A script path that does not exist (``python tool.py`` with no ``tool.py``) is found without
    running anything. Every other command is started once, as for a case (in an empty directory,
    with the same ``TOOLUSE_*`` environment and a throwaway ``HOME``) and sent nothing: one that
    exits within ``window`` with status 126/127 (the shell's "not found", "not executable") or
    with a nonzero status and a "not found"-like message is refused with what it printed. One
    still running is stopped: that costs ``window`` seconds once, whatever the number of
    subjects (they are started together). Other subjects (factories, workers, loops) pass.
    ``case``: the run's settings (the timeout the command is told, the confinement).
    """
    conf, timeout = case.confinement, case.timeout
    commands = [s for s in subjects if isinstance(s, Subject) and s.kind == "command"]
    for s in commands:
        _missing_script(s)
    if not commands:
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        problems = list(pool.map(lambda s: _start_once(s, timeout, window, conf), commands))
    for p in problems:
        if p:
            raise UsageError(p)


def _missing_script(s: Subject) -> None:
    if _SHELL_SYNTAX & set(s.spec):
        return
    words = shlex.split(s.spec)
    if not words or not _LAUNCHERS.fullmatch(Path(words[0]).name):
        return
    for prev, word in zip(words, words[1:], strict=False):
        if prev in _CODE_OPTIONS or prev == "-m":
            return
        if word.startswith("-") or "=" in word:
            continue
        if _SCRIPT.fullmatch(Path(word).name) and Path(word).suffix in _SCRIPT_SUFFIXES:
            if not os.path.exists(word):
                raise UsageError(f"subject {s.name}: {word} does not exist (relative paths are "
                                 f"taken from the directory tooluse runs in, {os.getcwd()}); "
                                 "give the path of your tool's script")
            return


_SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl", ".php", ".lua",
                    ".sh", ".bash", ".jar", ".R"}


def _start_once(s: Subject, timeout: float, window: float, conf: Confinement) -> str:
    """Start the command once and watch it for ``window`` seconds: a problem, or ``""``."""
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tooluse-preflight-") as d:
        root = Path(d)
        for sub in ("work", "home", "tmp"):
            (root / sub).mkdir()
        env = {**{f"TOOLUSE_{k.upper()}": str(v) for k, v in s.options.items()},
               "TOOLUSE_WORKDIR": str(root / "work"), "TOOLUSE_TIMEOUT": f"{timeout:g}"}
        if conf.private_home:
            env.update(HOME=str(root / "home"), TMPDIR=str(root / "tmp"))
        try:  # started once as a case starts it: in the sandbox, no credentials
            proc = launch(LaunchSpec(
                tuple(s.argv()), conf, cwd=root / "work", env=env, notice=False,
                folders=Folders(writable=(root,), tmp_in=root),
                popen=dict(stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE))).proc
        except SubjectStartError as e:
            return f"subject {s.name}: cannot start /bin/sh ({e.__cause__ or e})"
        from conformance.subjects.timing import process_starvation, wait_until

        def gone() -> bool:
            # WNOWAIT: the leader stays unreaped, so its process group id cannot be reused
            # before the group is killed below.
            try:
                return os.waitid(os.P_PID, proc.pid,
                                 os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:  # pragma: no cover - reaped elsewhere
                return True

        try:  # the window grows by the load measured meanwhile: a slow "not found" is still seen
            exited = wait_until(gone, window, "preflight", process_starvation(proc.pid),
                                record_miss=False)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                _, err = proc.communicate(timeout=2)
            except subprocess.TimeoutExpired:  # a detached child holds stderr open
                err = b""
                proc.wait()
        if not exited:
            return ""
        code = proc.returncode
        said = " / ".join(x.strip() for x in err.decode("utf-8", "replace").splitlines()
                          if x.strip())[-400:]
        if code in (126, 127) or (code != 0 and _NOT_FOUND.search(said)):
            return (f"subject {s.name}: the command {s.spec!r} exited with status {code} at once, "
                    f"before it was sent anything: {said or '(nothing on stderr)'}; check the "
                    "command (try it in a shell)")
        return ""
