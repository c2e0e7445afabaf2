"""Issue 14: the distribution works like a real tool, outside the checkout.

The slow packaging test (marker ``packaging``) builds the sdist and, from it, the wheel (as
``python -m build`` does), checks both with ``twine check``, installs the wheel into a fresh venv
(its dependencies from the package index) and runs the commands from an empty directory: the
corpus comes from the wheel, by name or by path. The fast tests below check the same name
resolution in-process against the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from conformance.matrix.envs import find_uv
from simulator.cassette import CassetteError, default_fixtures_root, iter_corpus, load_cassette

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
CASSETTE = "ptc/code_execution_20260521/several_pauses.json"
#: Installed with the runtime only; each is an extra's (serve, pytest) or the tests'.
NOT_RUNTIME = ("pytest", "syrupy", "uvicorn", "httptools")

#: Loads each cassette by the name given, replays its first request through an unmodified SDK.
MOCK_PROBE = """
import json, sys
import anthropic
import simulator
from simulator.cassette import load_cassette

for name in sys.argv[1:]:
    cassette = load_cassette(name)
    body = cassette.exchanges[0].request["body"]
    with simulator.mock(name):
        message = anthropic.Anthropic().messages.create(**body)
    print(json.dumps({"path": str(cassette.path), "stop_reason": message.stop_reason}))
"""


# --- fast: the corpus by name, in-process -------------------------------------------------------

def test_the_corpus_is_found_by_name_from_any_directory(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLUSE_FIXTURES", raising=False)
    root = default_fixtures_root()
    assert (root / CASSETTE).is_file()
    for name in (CASSETTE, f"fixtures/{CASSETTE}"):
        assert load_cassette(name).path == root / CASSETTE
        assert load_cassette(name, cache=False).id == CASSETTE.removesuffix(".json")
    ptc = list(iter_corpus("ptc"))
    assert ptc and all(c.id.startswith("ptc/") for c in ptc)
    assert [c.id for c in iter_corpus("fixtures/ptc")] == [c.id for c in ptc]


def test_a_path_that_exists_wins_over_a_corpus_name(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / CASSETTE
    mine.parent.mkdir(parents=True)
    mine.write_bytes((default_fixtures_root() / CASSETTE).read_bytes())
    assert load_cassette(CASSETTE).path == Path(CASSETTE)  # the user's own file, as given


def test_a_name_found_nowhere_says_where_it_looked(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CassetteError, match="file not found"):
        load_cassette("ptc/no_such_scenario.json")
    with pytest.raises(CassetteError, match="no such file or directory .*corpus at"):
        list(iter_corpus("no_such_family"))


def test_the_environment_variable_names_another_corpus(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_FIXTURES", str(tmp_path))
    assert default_fixtures_root() == tmp_path


def test_the_version_comes_from_pyproject() -> None:
    import conformance
    import simulator

    out = subprocess.run([sys.executable, "-c", "from conformance.cli import main; main()",
                          "--version"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == f"tooluse {VERSION}"
    assert simulator.__version__ == conformance.__version__ == VERSION


# --- slow: build, install, run outside the checkout ----------------------------------------------

def _run(cmd: list[str], cwd: Path, *, timeout: float = 600, check: bool = True,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n"
                             f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
    return proc


def _clean_env(venv_dir: Path) -> dict[str, str]:
    """This process's environment without what points at the checkout or the dev venv."""
    # PYTHONDONTWRITEBYTECODE too: the venv is installed without .pyc files (--no-compile), so
    # with it set every command compiled the SDK's modules from source again (~4 CPU-s each;
    # issue 21); without it the first command's imports are compiled once and then reused.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TOOLUSE_FIXTURES", "PYTHONHOME",
                        "PYTHONDONTWRITEBYTECODE")}
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _installer(python: str) -> tuple[list[str], list[str]]:
    """The commands that install into, and list, the venv of ``python``: uv's ``pip``
    interface (the test extra has it; ~1 CPU-s where pip spent ~15 reading the index's pages,
    issue 21), else this environment's pip. Neither writes bytecode ahead (uv never does; pip
    with --no-compile): Python compiles what the commands import as they import it."""
    uv = find_uv()
    if uv is None:
        pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
        return [*pip, "install", "--no-compile"], [*pip, "list"]
    return [uv, "pip", "install", "--python", python], [uv, "pip", "list", "--python", python]


def _serve_first_line(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, str]:
    """Start a server command, read its base URL (first stdout line), SIGTERM it: (url, stderr)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        import httpx

        models = httpx.get(f"{url}/v1/models", headers={"x-api-key": "k"}, timeout=60)
        assert models.status_code == 200, models.text
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    return url, err


@pytest.mark.slow(55)
@pytest.mark.packaging
def test_the_wheel_works_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # 1. sdist, then the wheel built from the sdist (what `python -m build` does): the sdist is
    #    complete when its wheel is. --no-isolation: the backend (hatchling, in the test extra)
    #    comes from this environment instead of two throw-away ones installed from the index
    #    (~6 CPU-s, ~30 s; issue 21); build still fails when a build-system requirement is missing.
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
         cwd=tmp_path)
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    assert f"-{VERSION}-" in wheel.name and sdist.name.endswith(f"-{VERSION}.tar.gz")
    _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], cwd=tmp_path)

    corpus = sorted(p.relative_to(ROOT / "fixtures").as_posix()
                    for p in (ROOT / "fixtures").rglob("*") if p.is_file())
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {f"simulator/fixtures/{p}" for p in corpus} <= names  # the whole corpus, mapped
    assert {"simulator/schemas/messages.strict.json", "conformance/reports/report.html",
            "conformance/reports/results.schema.json", "simulator/py.typed"} <= names
    assert not [n for n in names if n.startswith(("fixtures/", "tests/")) or "__pycache__" in n]
    # the docs pages the CLI and its messages name, and a starter per tool and language (issue 41)
    from test_doc_paths import named_by_the_cli

    from conformance.cli.init import STARTERS

    assert {f"conformance/{p}" for p in named_by_the_cli()} <= names
    assert "conformance/docs/protocol-notes.md" in names
    assert {f"conformance/starters/{n}" for n in STARTERS.values()} <= names
    with tarfile.open(sdist) as t:
        members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
    assert {f"fixtures/{p}" for p in corpus} <= members and "pyproject.toml" in members
    assert not [m for m in members if m.startswith("simulator/fixtures/")]  # written once

    # 2. A fresh venv with the wheel and its runtime dependencies only.
    env_dir = tmp_path / "venv"
    # Without pip of its own (ensurepip is ~8 CPU-s; issue 21): this environment's pip installs
    # into it (--python), so it holds the wheel and its runtime dependencies and nothing else.
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    env = _clean_env(env_dir)
    install, listing = _installer(py)
    _run([*install, "-q", str(wheel)], cwd=tmp_path, env=env)
    installed = json.loads(_run([*listing, "--format", "json"], cwd=tmp_path, env=env).stdout)
    names_installed = {p["name"].lower() for p in installed}
    assert not names_installed & set(NOT_RUNTIME), "the runtime pulls an extra's dependency"

    work = tmp_path / "elsewhere"  # an empty directory, far from the checkout
    work.mkdir()
    tooluse = str(env_dir / "bin" / "tooluse")
    assert _run([tooluse, "--version"], cwd=work, env=env).stdout.strip() == f"tooluse {VERSION}"
    where = _run([py, "-c", "from simulator.cassette import default_fixtures_root as d; "
                  "print(d())"], cwd=work, env=env).stdout.strip()
    assert Path(where).is_relative_to(env_dir) and Path(where, CASSETTE).is_file()

    # 3. The commands, from the empty directory.
    # Every family from the wheel (the loop check replays named cassettes of the installed
    # corpus); not every check: the checks themselves are the other tests' business (the model
    # check alone is a minute; the lease and timeout checks wait for their deadlines; replaying
    # the whole corpus, loop.corpus.*, is 11 CPU-s for what lint-fixtures shows below: the
    # installed corpus found by name; issue 21).
    run = _run([tooluse, "run", "--all-reference", "--check", "bash.output.*", "--check",
                "editor.view.*", "--check", "loop.ptc.caller_resent", "--check",
                "worker.custom_tool_result.*", "--out", "out"], cwd=work, env=env, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((work / "out" / "results.json").read_text())
    outcomes = [r["outcome"] for r in results["results"]]
    assert outcomes and "error" not in outcomes
    families = {r["check_id"].split(".")[0] for r in results["results"]}
    assert {"loop", "worker", "bash", "editor"} <= families  # --loop needs the corpus
    # one command for the three names (each start imports the SDK: ~3 CPU-s; issue 21)
    names = ("ptc", "fixtures/ptc", CASSETTE)
    lint = _run([tooluse, "lint-fixtures", *names], cwd=work, env=env, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    ptc = sum(1 for p in corpus if p.startswith("ptc/") and p.endswith(".json"))
    assert f"{2 * ptc + 1} cassette(s) linted: clean" in lint.stderr, lint.stderr
    probes = _run([py, "-c", MOCK_PROBE, CASSETTE, f"fixtures/{CASSETTE}"], cwd=work, env=env)
    for line in probes.stdout.splitlines():
        probe = json.loads(line)
        assert Path(probe["path"]).is_relative_to(env_dir) and probe["stop_reason"]
    assert len(probes.stdout.splitlines()) == 2

    # 4. The server is an extra: without it, serve says which one; with it, serve and replay work.
    bare = _run([tooluse, "serve", "ptc", "--port", "0"], cwd=work, env=env, check=False)
    assert bare.returncode == 2 and "tooluse-conformance[serve]" in bare.stderr, bare.stderr
    _run([*install, "-q", f"{wheel}[serve]"], cwd=tmp_path, env=env)
    url, _ = _serve_first_line([tooluse, "serve", "ptc", "--port", "0"], work, env)
    assert url.startswith("http://127.0.0.1:")
    _, err = _serve_first_line([tooluse, "replay", f"fixtures/{CASSETTE}", "--port", "0"],
                               work, env)
    assert "not served" in err, err
    init = _run([tooluse, "init", "editor", "--lang", "node"], cwd=work, env=env)
    assert "--editor-cmd 'node editor_tool.mjs'" in init.stdout
    assert (work / "editor_tool.mjs").read_text(encoding="utf-8") == (
        ROOT / "conformance" / "starters" / "editor_tool.mjs").read_text(encoding="utf-8")
    (work / "editor_tool.mjs").unlink()
    docs = _run([tooluse, "--help"], cwd=work, env=env).stdout
    assert str(env_dir) in "".join(docs.split())  # the installed docs, not the checkout's
    assert sorted(p.name for p in work.iterdir() if p.name != ".hypothesis") == ["out"]
    shutil.rmtree(env_dir)  # ~120 MB: not left in pytest's kept temporary directories
