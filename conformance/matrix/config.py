"""The matrix config (``matrix.toml``): defaults and one ``[[subject]]`` entry per column.

Every problem is a :class:`~conformance.errors.UsageError` naming the file, the entry and the key
(``tooluse matrix`` exits 2), found before anything runs. The format is documented in
docs/matrix.md (section Config).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import UsageError

#: Keys of ``[matrix]`` (the defaults every subject gets unless it overrides them).
MATRIX_KEYS = {"timeout", "startup_timeout", "jobs"}
#: Keys of a ``[[subject]]`` entry.
SUBJECT_KEYS = {"name", "tool_type", "factory", "command", "python", "requirements", "timeout",
                "startup_timeout", "jobs", "env", "version_of", "max_characters", "npm",
                "program_requirements", "skip_checks"}
#: The tool type of an agent-loop column (``factory``: ``--loop``, ``command``: ``--loop-cmd``).
LOOP_TYPE = "agent_loop"
_PYTHON = re.compile(r"3\.[0-9]{1,2}")


@dataclass(frozen=True)
class SubjectEntry:
    """One column: a factory (``module:attr``) or a command, of one tool type."""

    name: str
    family: str
    tool_type: str
    factory: str | None = None
    command: str | None = None
    python: str | None = None
    requirements: tuple[str, ...] = ()
    timeout: float | None = None
    startup_timeout: float | None = None
    jobs: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    version_of: str | None = None
    max_characters: int | None = None
    #: npm packages (``name@version``) installed in the environment's ``node/`` folder.
    npm: tuple[str, ...] = ()
    #: pip requirements of a ``--loop-cmd`` program that cannot share the suite's environment
    #: (llm-anthropic pins anthropic<2): a venv of their own, ``program/`` in the environment,
    #: first on the command's PATH (the suite is in it too, without its dependencies).
    program_requirements: tuple[str, ...] = ()
    #: Check patterns this column does not run (its cells show "—", the column did not run it):
    #: the loop corpus check for programs started once per cassette (minutes of CPU each).
    skip_checks: tuple[str, ...] = ()

    @property
    def own_env(self) -> bool:
        """Does it run in an environment of its own (``python``, ``requirements`` or ``npm``
        given)?"""
        return (self.python is not None or bool(self.requirements) or bool(self.npm)
                or bool(self.program_requirements))

    @property
    def spec(self) -> str:
        return self.factory if self.factory is not None else f"cmd:{self.command}"


@dataclass(frozen=True)
class MatrixConfig:
    path: Path
    subjects: tuple[SubjectEntry, ...]
    timeout: float = 3.0
    startup_timeout: float = 30.0
    jobs: int = 0

    @property
    def base_dir(self) -> Path:
        """Where relative paths of the config are taken from (and where subjects' runs start)."""
        return self.path.resolve().parent


def dir_name(name: str) -> str:
    """A column's directory under ``DIR/runs/`` (``my tool`` -> ``my_tool``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "subject"


def family_of(tool_type: str) -> str | None:
    """``bash`` / ``editor`` for a bash or text editor tool type of the registry, ``loop`` for
    ``agent_loop``, else None."""
    from simulator.registry import TOOLS

    if tool_type == LOOP_TYPE:
        return "loop"
    families = {"bash": "bash", "text_editor": "editor"}
    for t in TOOLS.values():
        if t.type == tool_type and t.family in families:
            return families[t.family]
    return None


def _known_tool_types() -> list[str]:
    from simulator.registry import TOOLS

    return sorted([*(t.type for t in TOOLS.values() if t.family in ("bash", "text_editor")),
                   LOOP_TYPE])


def load_config(path: Path) -> MatrixConfig:
    """Read and validate a matrix config (``UsageError`` naming the problem)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the matrix config ({e.strerror}); give the path of "
                         "a TOML file (see docs/matrix.md)") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: not valid TOML ({e})") from None
    return parse_config(doc, path)


def parse_config(doc: dict[str, Any], path: Path) -> MatrixConfig:
    unknown = sorted(set(doc) - {"matrix", "subject"})
    if unknown:
        raise UsageError(f"{path}: unknown top-level key {unknown[0]!r}; use [matrix] and "
                         "[[subject]] only")
    defaults = doc.get("matrix", {})
    if not isinstance(defaults, dict):
        raise UsageError(f"{path}: [matrix] must be a table")
    _no_unknown(path, "[matrix]", defaults, MATRIX_KEYS)
    timeout = _positive(path, "[matrix]", defaults, "timeout", 3.0)
    startup = _positive(path, "[matrix]", defaults, "startup_timeout", 30.0)
    jobs = _jobs(path, "[matrix]", defaults, allow_zero=True)
    entries = doc.get("subject")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: no [[subject]] entry; add at least one (name, tool_type, and "
                         "factory or command)")
    subjects: list[SubjectEntry] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(entries, 1):
        s = _subject(path, i, entry)
        if s.name in seen.values():
            raise UsageError(f"{path}: [[subject]] #{i}: name {s.name!r} is used twice; give each "
                             "subject a unique name (it labels its column)")
        other = seen.get(dir_name(s.name))
        if other is not None:
            raise UsageError(f"{path}: [[subject]] #{i}: name {s.name!r} and {other!r} share the "
                             f"output directory runs/{dir_name(s.name)}; rename one")
        seen[dir_name(s.name)] = s.name
        subjects.append(s)
    return MatrixConfig(path, tuple(subjects), timeout or 3.0, startup or 30.0, jobs or 0)


def _subject(path: Path, i: int, entry: Any) -> SubjectEntry:
    where = f"[[subject]] #{i}"
    if not isinstance(entry, dict):
        raise UsageError(f"{path}: {where} must be a table")
    name = entry.get("name")
    if isinstance(name, str) and name.strip() and name.strip().isprintable():
        where = f"[[subject]] {name.strip()!r}"
    else:
        raise UsageError(f"{path}: {where}: give it a name (a short printable label, unique)")
    _no_unknown(path, where, entry, SUBJECT_KEYS)
    tool_type = entry.get("tool_type")
    if not isinstance(tool_type, str):
        raise UsageError(f"{path}: {where}: tool_type is required; one of "
                         f"{', '.join(_known_tool_types())}")
    family = family_of(tool_type)
    if family is None:
        raise UsageError(f"{path}: {where}: tool_type {tool_type!r} is not a bash or text editor "
                         f"tool type nor {LOOP_TYPE}; use one of {', '.join(_known_tool_types())}")
    factory, command = entry.get("factory"), entry.get("command")
    if (factory is None) == (command is None):
        raise UsageError(f"{path}: {where}: give either factory (module:attr) or command, "
                         f"{'not both' if factory is not None else 'one of them'}")
    factory = _text(path, where, entry, "factory")
    command = _text(path, where, entry, "command")
    if factory is not None and ":" not in factory:
        raise UsageError(f"{path}: {where}: factory {factory!r} is not module:attr (or "
                         "path/to/file.py:attr)")
    python = _text(path, where, entry, "python")
    if python is not None and not _PYTHON.fullmatch(python):
        raise UsageError(f"{path}: {where}: python {python!r}: give a version such as \"3.12\"")
    reqs = _strings(path, where, entry, "requirements",
                    "a list of pip requirement strings, e.g. [\"openhands-aci==0.3.2\"]")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise UsageError(f"{path}: {where}: env must be a table of strings, e.g. "
                         "env = { TERM = \"dumb\" }")
    from conformance.subjects.sandbox import is_credential

    for key in env:
        if not key or "=" in key or not key.replace("_", "a").isalnum():
            raise UsageError(f"{path}: {where}: env {key!r} is not an environment variable name")
        if is_credential(key):
            raise UsageError(f"{path}: {where}: env {key}: a credential never reaches a subject "
                             "(tooluse run drops it) and is never written into a config; give "
                             "the subject what it needs another way")
    npm = _strings(path, where, entry, "npm", "a list of npm package specs, e.g. [\"ai@6.0.325\"]")
    program = _strings(path, where, entry, "program_requirements",
                       "a list of pip requirement strings")
    if program and (family != "loop" or command is None):
        raise UsageError(f"{path}: {where}: program_requirements is for agent_loop subjects "
                         "given by command")
    skip = _strings(path, where, entry, "skip_checks",
                    "a list of check id patterns, e.g. [\"loop.corpus.*\"]")
    max_chars = entry.get("max_characters")
    if max_chars is not None and (family != "editor" or not isinstance(max_chars, int)
                                  or isinstance(max_chars, bool) or max_chars < 1):
        raise UsageError(f"{path}: {where}: max_characters is a positive integer, for text "
                         "editor subjects only")
    return SubjectEntry(
        name=name.strip(), family=family, tool_type=tool_type, factory=factory, command=command,
        python=python, requirements=reqs,
        timeout=_positive(path, where, entry, "timeout", None),
        startup_timeout=_positive(path, where, entry, "startup_timeout", None),
        jobs=_jobs(path, where, entry, allow_zero=False), env=dict(env),
        version_of=_text(path, where, entry, "version_of"), max_characters=max_chars,
        npm=npm, program_requirements=program, skip_checks=skip)


def _no_unknown(path: Path, where: str, table: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"{path}: {where}: unknown key {unknown[0]!r}{hint}; known keys: "
                         f"{', '.join(sorted(known))}")


def _text(path: Path, where: str, table: dict[str, Any], key: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{path}: {where}: {key} must be a non-empty string")
    return value.strip()


def _strings(path: Path, where: str, table: dict[str, Any], key: str,
             what: str) -> tuple[str, ...]:
    """``key``'s list of non-empty strings, stripped (empty when absent); ``what`` it must be."""
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(r, str) and r.strip() for r in value):
        raise UsageError(f"{path}: {where}: {key} must be {what}")
    return tuple(r.strip() for r in value)


def _positive(path: Path, where: str, table: dict[str, Any], key: str,
              default: float | None) -> float | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise UsageError(f"{path}: {where}: {key} = {value!r}: give a positive number of seconds")
    return float(value)


def _jobs(path: Path, where: str, table: dict[str, Any], *, allow_zero: bool) -> int | None:
    value = table.get("jobs")
    if value is None:
        return None
    least = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise UsageError(f"{path}: {where}: jobs = {value!r}: give an integer >= {least}"
                         + (" (0: tooluse run's default)" if allow_zero else ""))
    return value
