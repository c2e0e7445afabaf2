"""Environments of their own for subjects that need another Python or other packages.

A subject with ``python`` or ``requirements`` runs in a virtual environment built from that
interpreter, with the project and the requirements installed into it (one ``pip install``, so
they are resolved together; uv's when it is here, else pip's: :func:`installer`). Environments
live under ``--envs DIR`` (default ``~/.cache/tooluse/matrix``), one directory per hash of the
interpreter, the requirements and the project's location and dependencies, and are reused while
that hash holds. An environment is
used only once its build finished (a marker file); a half-built one is rebuilt.

A missing interpreter is not an error of the matrix: the column says ``unavailable: no
python3.12``.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.cache import user_cache_dir
from conformance.matrix.config import SubjectEntry

READY_MARKER = ".tooluse-ready"
BUILD_LOG = "tooluse-build.log"
_VERSION_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"


def default_envs_dir() -> Path:
    return user_cache_dir("matrix")


@dataclass(frozen=True)
class EnvResult:
    """The interpreter a subject runs with, or why it cannot run (``problem``)."""

    python: Path | None
    env_dir: Path | None = None
    problem: str = ""


def _version_of(interpreter: str) -> str | None:
    try:
        out = subprocess.run([interpreter, "-c", _VERSION_PROBE], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@cache
def find_python(version: str) -> str | None:
    """An interpreter of ``version`` (``"3.12"``): ``python3.12`` on PATH (pyenv shims that do
    not run are skipped), else pyenv's ``~/.pyenv/versions/3.12*/bin/python``; None when none
    runs."""
    candidates: list[str] = []
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    root = os.environ.get("PYENV_ROOT") or os.path.join(os.path.expanduser("~"), ".pyenv")
    found = glob.glob(os.path.join(root, "versions", f"{version}*", "bin", "python"))
    candidates.extend(sorted(found, key=_version_key, reverse=True))
    for c in candidates:
        if _version_of(c) == version:
            return c
    return None


def _version_key(path: str) -> tuple[int, ...]:
    name = Path(path).parent.parent.name
    return tuple(int(p) if p.isdigit() else -1 for p in name.replace("-", ".").split("."))


def project_root() -> Path | None:
    """The checkout the running suite comes from (None when it is an installed wheel)."""
    import conformance

    root = Path(conformance.__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def _project_install(extras: tuple[str, ...] = ()) -> list[str]:
    """pip arguments installing this suite (with ``extras``): the checkout (editable), else the
    same version."""
    suffix = f"[{','.join(extras)}]" if extras else ""
    root = project_root()
    if root is not None:
        return ["-e", f"{root}{suffix}"]
    from simulator import version

    return [f"tooluse-conformance{suffix}=={version()}"]


def _extras(entry: SubjectEntry) -> tuple[str, ...]:
    """The suite's extras a column needs: an agent loop run by command reaches the simulation
    over HTTP (``serve``)."""
    return ("serve",) if entry.family == "loop" else ()


def env_key(interpreter: str, version: str, requirements: tuple[str, ...],
            npm: tuple[str, ...] = (), extras: tuple[str, ...] = (),
            program: tuple[str, ...] = ()) -> str:
    """The environment's directory name: a hash of the interpreter (its real path: the same
    base Python whether reached through a venv or not), the requirements (pip's, and npm's when
    given) and the project."""
    from importlib import metadata

    try:
        project_deps = sorted(metadata.requires("tooluse-conformance") or [])
    except metadata.PackageNotFoundError:
        project_deps = []
    doc = {"interpreter": os.path.realpath(interpreter), "version": version,
           "requirements": sorted(requirements), "project": _project_install(extras),
           "project_deps": project_deps}
    if npm:  # only then: the keys of environments without Node packages stay as they were
        doc["npm"] = sorted(npm)
    if program:
        doc["program"] = sorted(program)
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
    return f"py{version}-{digest}"


def env_dir_of(entry: SubjectEntry, envs_dir: Path) -> Path | None:
    """Where ``entry``'s own environment is (or will be); None without one or an interpreter."""
    if not entry.own_env:
        return None
    version = entry.python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter = find_python(version) if entry.python else sys.executable
    if interpreter is None:
        return None
    return envs_dir / env_key(interpreter, version, entry.requirements, entry.npm,
                              _extras(entry), entry.program_requirements)


def node_dir(env_dir: Path) -> Path:
    """Where an environment's npm packages are installed (``node_modules`` in it); a column
    gets it as ``TOOLUSE_NODE_MODULES``."""
    return env_dir / "node"


def program_dir(env_dir: Path) -> Path:
    """Where an environment's ``program_requirements`` venv is; its ``bin`` comes first on the
    column's PATH."""
    return env_dir / "program"


def is_ready(env_dir: Path) -> bool:
    return (env_dir / READY_MARKER).is_file() and (env_dir / "bin" / "python").exists()


def ensure_env(entry: SubjectEntry, envs_dir: Path) -> EnvResult:
    """The interpreter ``entry`` runs with: the running one, or its own environment (built now
    when missing)."""
    if not entry.own_env:
        return EnvResult(Path(sys.executable))
    version = entry.python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter = find_python(version) if entry.python else sys.executable
    if interpreter is None:
        return EnvResult(None, problem=f"no python{version} (not on PATH, not in pyenv)")
    env_dir = envs_dir / env_key(interpreter, version, entry.requirements, entry.npm,
                                 _extras(entry), entry.program_requirements)
    python = env_dir / "bin" / "python"
    if (env_dir / READY_MARKER).is_file() and python.exists():
        return EnvResult(python, env_dir)
    return _build(interpreter, env_dir, entry)


def _build(interpreter: str, env_dir: Path, entry: SubjectEntry) -> EnvResult:
    import fcntl

    env_dir.parent.mkdir(parents=True, exist_ok=True)
    lock_path = env_dir.parent / f"{env_dir.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another tooluse matrix may be building it
        python = env_dir / "bin" / "python"
        if (env_dir / READY_MARKER).is_file() and python.exists():
            return EnvResult(python, env_dir)
        if env_dir.exists():
            shutil.rmtree(env_dir)
        log_path = env_dir.parent / f"{env_dir.name}.{BUILD_LOG}"
        try:
            uv = installer()
        except ValueError as e:
            return EnvResult(None, env_dir, f"its environment cannot be built: {e}")
        steps = [_venv(uv, interpreter, env_dir),
                 [*_install(uv, python), *_project_install(_extras(entry)),
                  *entry.requirements]]
        if entry.program_requirements:
            program = program_dir(env_dir)
            program_python = program / "bin" / "python"
            steps += [_venv(uv, interpreter, program),
                      [*_install(uv, program_python), *entry.program_requirements],
                      [*_install(uv, program_python), "--no-deps", *_project_install()]]
        if entry.npm:
            npm = shutil.which("npm")
            if npm is None:
                return EnvResult(None, env_dir, "its npm packages cannot be installed: npm is not "
                                 "on PATH (install Node.js)")
            # node/ is made when its step comes, after the venv: uv refuses to make a venv in
            # a directory that already holds something (uv 0.13)
            steps.append([npm, "install", "--prefix", str(node_dir(env_dir)), "--no-audit",
                          "--no-fund", "--save-exact", *entry.npm])
        # No bytecode written ahead by venv's and pip's installs (pip compiles every module of
        # every package: most of a build's CPU); the column's runs compile what they import.
        build_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        with open(log_path, "w") as log:
            for argv in steps:
                if entry.npm and argv[0] == shutil.which("npm"):
                    node = node_dir(env_dir)
                    node.mkdir(parents=True, exist_ok=True)
                    (node / "package.json").write_text('{"private": true}\n')
                log.write(f"$ {' '.join(argv)}\n")
                log.flush()
                code = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=build_env)
                if code != 0:
                    return EnvResult(None, env_dir, f"building its environment failed ("
                                     f"{Path(argv[0]).name} {' '.join(argv[1:3])} exit {code}: "
                                     f"{_last_line(log_path)}; log: {log_path})")
        (env_dir / READY_MARKER).write_text(json.dumps(
            {"python": entry.python, "requirements": list(entry.requirements),
             "npm": list(entry.npm), "installer": "uv" if uv else "pip"}) + "\n")
        return EnvResult(python, env_dir)


#: ``TOOLUSE_INSTALLER``: what installs into the environments (default ``auto``).
INSTALLERS = ("auto", "pip", "uv")


def installer() -> str | None:
    """The uv executable that builds the environments, or None for pip (``TOOLUSE_INSTALLER``:
    ``auto``, the default, takes uv when it is installed with the suite or on ``PATH``; ``pip``
    never does; ``uv`` insists). uv installs the same requirements from the same package index
    several times faster than pip (most of a build's time is pip reading the index and
    unpacking; issue 21), but it reads uv's configuration (``UV_INDEX_URL``, ``uv.toml``), not
    pip's: where only ``pip.conf`` names your index, say ``TOOLUSE_INSTALLER=pip``.
    ValueError names a bad value, or ``uv`` asked for and not found."""
    choice = os.environ.get("TOOLUSE_INSTALLER", "auto").strip().lower() or "auto"
    if choice not in INSTALLERS:
        raise ValueError(f"TOOLUSE_INSTALLER={choice!r} is not one of {', '.join(INSTALLERS)}")
    if choice == "pip":
        return None
    found = find_uv()
    if found is None and choice == "uv":
        raise ValueError("TOOLUSE_INSTALLER=uv, but uv is neither installed with the suite "
                         "nor on PATH (pip install uv)")
    return found


def find_uv() -> str | None:
    """The uv executable: the one installed with the suite (the ``uv`` package), else the one on
    ``PATH``; None when there is neither."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return shutil.which("uv")
    try:
        return str(find_uv_bin())
    except FileNotFoundError:
        return shutil.which("uv")


def _venv(uv: str | None, interpreter: str, env_dir: Path) -> list[str]:
    """The command that creates a venv at ``env_dir`` from ``interpreter`` (uv's has no pip:
    nothing in it needs one)."""
    if uv:
        return [uv, "venv", "--quiet", "--python", interpreter, str(env_dir)]
    return [interpreter, "-m", "venv", str(env_dir)]


def _install(uv: str | None, python: Path) -> list[str]:
    """``pip install`` into the venv of ``python``, quietly (the arguments follow)."""
    if uv:
        return [uv, "pip", "install", "--quiet", "--python", str(python)]
    return [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]


def _last_line(path: Path) -> str:
    lines = [x.strip() for x in path.read_text(errors="replace").splitlines()
             if x.strip() and not x.startswith("WARNING: Location")]
    return lines[-1][-300:] if lines else "no output"
