"""Run every column of the matrix: one ``tooluse run`` per subject, isolated, in parallel.

Each subject runs in a process of its own, started by the interpreter of its environment (so a
factory subject is hosted by that environment's Python), from the config file's directory, with
its own ``--out`` directory (``DIR/runs/<name>/``) whose ``results.json`` is read back. What
went wrong around a run (an interpreter missing, a build failed, the run could not start) is the
column's status and reason, not an error of the whole matrix.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.matrix.config import MatrixConfig, SubjectEntry, dir_name
from conformance.matrix.envs import EnvResult, ensure_env, env_dir_of, is_ready, program_dir
from conformance.reports import ResultsFileError, load_results
from conformance.runner import default_jobs

Status = Literal["ran", "unavailable", "error"]
#: How a column's run is started: the suite's CLI in the subject's interpreter.
LAUNCH = "import sys; from conformance.cli import main; sys.exit(main())"
_PROBE = ("import sys, json, platform\n"
          "from importlib import metadata\n"
          "def v(d):\n"
          "    try:\n"
          "        return metadata.version(d)\n"
          "    except Exception:\n"
          "        return None\n"
          "print(json.dumps({'python': platform.python_version(),"
          " 'version': v(sys.argv[1]) if sys.argv[1] else None,"
          " 'suite': v('tooluse-conformance')}))\n")


@dataclass
class ColumnRun:
    """What one column's run gave."""

    entry: SubjectEntry
    status: Status
    reason: str = ""
    results: dict[str, Any] | None = None
    python: str | None = None
    version: str | None = None
    suite_version: str | None = None
    duration: float = 0.0
    exit_code: int | None = None
    out_dir: Path | None = None
    #: The words that start ``tooluse`` for this column (env assignments, the env's tooluse).
    launcher: list[str] = field(default_factory=lambda: ["tooluse"])
    env_dir: Path | None = None


def run_argv(entry: SubjectEntry, config: MatrixConfig, out_dir: Path, *,
             jobs: int | None, checks: Sequence[str] = ()) -> list[str]:
    """``run ...``: the arguments of the column's ``tooluse run``: the column's
    :class:`~conformance.run.Run` as words (its ``TOOLUSE_*`` environment entries reach
    that run's own entry point through its environment)."""
    from conformance.run import Run, SubjectChoice
    from conformance.subjects.launch import Confinement
    from conformance.subjects.sandbox import ALLOWED_ENV

    # the sandbox gives subjects an allow-listed environment: the column's other names pass
    passed = tuple(n for n in sorted(entry.env)
                   if n not in ALLOWED_ENV and not n.startswith("TOOLUSE_"))
    if entry.skip_checks:  # the checks the patterns select, less those the column skips
        import conformance.checks  # noqa: F401  (registers every check)
        from conformance.catalog import CATALOG

        checks = [i for i, c in sorted(CATALOG.items()) if c.applies(entry.tool_type)
                  and (not checks or any(fnmatch.fnmatchcase(i, p) for p in checks))
                  and not any(fnmatch.fnmatchcase(i, p) for p in entry.skip_checks)]
    kind: Literal["spec", "cmd"] = "spec" if entry.factory is not None else "cmd"
    column = Run(subjects=(SubjectChoice(entry.family, kind, entry.factory or entry.command or "",
                                         entry.name),),
                 bash_type=entry.tool_type if entry.family == "bash" else None,
                 editor_type=entry.tool_type if entry.family == "editor" else None,
                 editor_max_characters=entry.max_characters, checks=tuple(checks),
                 timeout=entry.timeout or config.timeout,
                 startup_timeout=entry.startup_timeout or config.startup_timeout,
                 jobs=entry.jobs or config.jobs or jobs or None,
                 confinement=Confinement(pass_env=passed), out=out_dir)
    return ["run", *column.words()]


def _environ(entry: SubjectEntry, env: EnvResult) -> dict[str, str]:
    from conformance.matrix.envs import node_dir, program_dir

    environ = {**os.environ, **entry.env}
    if env.env_dir is not None:
        environ["VIRTUAL_ENV"] = str(env.env_dir)
        path = [str(env.env_dir / "bin")]
        if entry.program_requirements:
            path.insert(0, str(program_dir(env.env_dir) / "bin"))
        environ["PATH"] = os.pathsep.join([*path, environ.get("PATH", "")])
        environ.pop("PYTHONHOME", None)
        if entry.npm:
            environ["TOOLUSE_NODE_MODULES"] = str(node_dir(env.env_dir) / "node_modules")
    return environ


def launcher_words(entry: SubjectEntry, env: EnvResult) -> list[str]:
    """How a reader starts this column's ``tooluse`` (``TERM=dumb ~/.cache/.../bin/tooluse``)."""
    words = [f"{k}={shlex.quote(v)}" for k, v in sorted(entry.env.items())]
    if env.env_dir is not None:
        words.append(_tilde(str(env.env_dir / "bin" / "tooluse")))
    else:
        words.append("tooluse")
    return words


def _tilde(path: str) -> str:
    """A path for the shell: ``~/...`` under the home directory, quoted when it must be."""
    home = os.path.expanduser("~")
    if home != "/" and path.startswith(home + "/"):
        rest = path[len(home) + 1:]
        if shlex.quote(rest) == rest:
            return "~/" + rest
    return shlex.quote(path)


def probe(python: Path, version_of: str | None, environ: dict[str, str]) -> dict[str, Any]:
    """The interpreter's version, ``version_of``'s installed version, the suite's version."""
    try:
        out = subprocess.run([str(python), "-c", _PROBE, version_of or ""], capture_output=True,
                             text=True, timeout=60, env=environ)
        doc: dict[str, Any] = json.loads(out.stdout)
        return doc
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}


def run_column(entry: SubjectEntry, config: MatrixConfig, out_root: Path, envs_dir: Path, *,
               jobs: int | None, checks: Sequence[str] = (),
               env: EnvResult | None = None) -> ColumnRun:
    """One column: its environment (``env`` when already found or built), its run, its
    results."""
    start = time.monotonic()
    if env is None:
        env = ensure_env(entry, envs_dir)
    if env.python is None:
        status: Status = "error" if env.env_dir is not None else "unavailable"
        return ColumnRun(entry, status, env.problem, duration=time.monotonic() - start,
                         env_dir=env.env_dir)
    environ = _environ(entry, env)
    info = probe(env.python, entry.version_of, environ)
    if entry.program_requirements and env.env_dir is not None:
        # the program's own venv holds what it pins (llm-anthropic's anthropic<2)
        program = probe(program_dir(env.env_dir) / "bin" / "python", entry.version_of, environ)
        info["version"] = program.get("version")
    out_dir = out_root / "runs" / dir_name(entry.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    results_path = out_dir / "results.json"
    results_path.unlink(missing_ok=True)  # never read a previous run's results
    shown_out = _relative(out_dir, config.base_dir)
    argv = [str(env.python), "-c", LAUNCH,
            *run_argv(entry, config, shown_out, jobs=jobs, checks=checks)]
    col = ColumnRun(entry, "ran", python=info.get("python"), version=info.get("version"),
                    suite_version=info.get("suite"), out_dir=out_dir,
                    launcher=launcher_words(entry, env), env_dir=env.env_dir)
    with open(out_dir / "run.log", "w") as log:
        with _children_lock:  # started and registered at once, or not at all once stopping
            if _stopping.is_set():
                col.status, col.reason = "error", "not started: tooluse matrix was stopped"
                col.duration = time.monotonic() - start
                return col
            proc = subprocess.Popen(argv, cwd=config.base_dir, env=environ,
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT)
            _children.add(proc)
        try:
            proc.wait()
        finally:
            with _children_lock:
                _children.discard(proc)
    col.exit_code = proc.returncode
    col.duration = time.monotonic() - start
    _read_results(col, results_path, out_dir / "run.log")
    return col


#: The column runs going on (``tooluse run`` processes), for :func:`stop_columns`.
_children: set[subprocess.Popen[bytes]] = set()
_children_lock = threading.Lock()
#: Set by :func:`stop_columns`: no column run starts after it (one about to start when the
#: signal came would otherwise run its whole course unsignalled, and the matrix wait for it).
_stopping = threading.Event()


def start_columns() -> None:
    """Column runs may start (again): the start of a matrix run."""
    _stopping.clear()


def stop_columns(sig: int = signal.SIGTERM) -> int:
    """Send ``sig`` to every column run going on (each stops its subjects and writes what it
    has, as ``tooluse run`` does on SIGTERM), and start no more; returns how many were
    signalled."""
    with _children_lock:
        _stopping.set()
        procs = list(_children)
    for proc in procs:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass
    return len(procs)


def _never_started(log_path: Path) -> bool:
    """Whether ``tooluse run`` exited 2 because a subject never started (its one-line error)."""
    try:
        return "did not start, so no check ran" in log_path.read_text(errors="replace")
    except OSError:
        return False


def _read_results(col: ColumnRun, results_path: Path, log_path: Path) -> None:
    # Exit 2 is a usage error, or (issue 26) a subject that never started: that run still
    # wrote its results, whose start failures the matrix marks (start) and leaves out of the
    # review counts; only a usage error is the column's error.
    never_started = col.exit_code == 2 and _never_started(log_path)
    if (col.exit_code == 2 and not never_started) or not results_path.is_file():
        col.status = "error"
        col.reason = (f"tooluse run exited with status {col.exit_code}: {_error_line(log_path)}")
        return
    try:
        col.results = load_results(results_path).doc
    except (OSError, ResultsFileError, ValueError) as e:
        col.status, col.reason = "error", f"its results.json cannot be read: {e}"
        return
    if not col.results["run"]["complete"]:
        col.status = "error"
        col.reason = (f"the run did not complete (exit {col.exit_code}): "
                      f"{_error_line(log_path)}")


def _error_line(log_path: Path) -> str:
    try:
        lines = [x.strip() for x in log_path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no output"
    errors = [x for x in lines if "error:" in x.lower() or "Error" in x]
    return (errors or lines or ["no output"])[-1][-500:]


def _relative(path: Path, base: Path) -> Path:
    try:
        rel = os.path.relpath(path.resolve(), base)
    except ValueError:
        return path.resolve()
    return Path(rel) if not rel.startswith("..") else path.resolve()


def _env_or_problem(entry: SubjectEntry, envs_dir: Path) -> EnvResult:
    try:
        return ensure_env(entry, envs_dir)
    except OSError as e:  # an unwritable --envs, a full disk: that column's problem
        return EnvResult(None, envs_dir, f"its environment could not be built: {e}")


def clean_runs(out_root: Path, keep: set[str]) -> None:
    """Remove column directories of an earlier matrix (``runs/<name>/`` with a ``run.log``) whose
    subject is no longer in the config, so the output holds only this matrix."""
    import shutil

    runs = out_root / "runs"
    if not runs.is_dir():
        return
    for d in runs.iterdir():
        if d.is_dir() and d.name not in keep and (d / "run.log").is_file():
            shutil.rmtree(d)


def default_parallel(n_columns: int) -> int:
    """Columns run at once: one per CPU (at least 1, at most the number of columns)."""
    return max(1, min(n_columns, os.cpu_count() or 1))


def jobs_per_column(parallel: int) -> int:
    """Cases at once within a column when the config does not say: ``tooluse run``'s default
    shared among the columns that run together (at least 2)."""
    return max(2, default_jobs() // max(1, parallel))


def run_matrix(config: MatrixConfig, out_root: Path, envs_dir: Path, *, parallel: int | None = None,
               checks: Sequence[str] = (),
               on_column: Callable[[ColumnRun], None] | None = None,
               say: Callable[[str], None] | None = None,
               checks_by_column: Mapping[str, Sequence[str]] | None = None) -> list[ColumnRun]:
    """Every column, in config order. Environments are built first (one at a time: pip is heavy),
    then the runs go ``parallel`` at once. ``checks_by_column``: the check ids each column runs
    (a shard's cells), instead of ``checks`` for all."""
    n = parallel or default_parallel(len(config.subjects))
    clean_runs(out_root, {dir_name(e.name) for e in config.subjects})
    jobs = jobs_per_column(n)
    # build (or find) the environments before running anything; a failed build is tried once
    envs: dict[str, EnvResult] = {}
    for e in config.subjects:
        where = env_dir_of(e, envs_dir)
        if say is not None and where is not None and not is_ready(where):
            say(f"  {e.name}: building its environment {where} (python "
                f"{e.python or 'running'}; {', '.join(e.requirements) or 'no requirements'})")
        envs[e.name] = _env_or_problem(e, envs_dir)

    def one(entry: SubjectEntry) -> ColumnRun:
        try:
            mine = checks if checks_by_column is None else checks_by_column[entry.name]
            col = run_column(entry, config, out_root, envs_dir, jobs=jobs, checks=mine,
                             env=envs[entry.name])
        except Exception as e:  # one column's trouble is that column's, not the matrix's
            col = ColumnRun(entry, "error", f"the matrix could not run it: "
                            f"{type(e).__name__}: {e}")
        if on_column is not None:
            on_column(col)
        return col

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, config.subjects))
