"""Sessions: tests, lint, conformance, bench (and fuzz, baseline, matrix, saturated, mutation).

Every session installs what it needs itself; `nox -s conformance` needs no arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
#: uv makes the sessions' venvs and installs into them when it is there (`pip install nox uv`,
#: as the README and .ci/run do): a fresh `nox -s tests` spent ~25 s in pip resolving and
#: downloading the test extra one package at a time (issue 21). Without uv: virtualenv and pip.
nox.options.default_venv_backend = "uv|virtualenv"
#: A session whose interpreter cannot be found fails; it is never "skipped" with exit 0.
nox.options.error_on_missing_interpreters = True
#: None: the interpreter running nox (`python3 -m nox`); `--force-python 3.12` picks another.
PYTHON = None
if sys.version_info < (3, 11):  # noqa: UP036 (requires-python: fail at once, not later in pip)
    raise SystemExit(f"noxfile.py: tooluse-conformance needs Python >= 3.11; nox runs on "
                     f"{sys.version.split()[0]} ({sys.executable}). Run nox with a newer one.")


def bytecode_env(session: nox.Session) -> dict[str, str | None]:
    """Python caches the bytecode of what it imports, in one directory of the session's venv.

    Some machines set ``PYTHONDONTWRITEBYTECODE`` (this one does): every Python process then
    compiles every module it imports from source, each time. The tests start hundreds of them
    (xdist workers, ``tooluse`` commands, Python subjects, pytest in pytest); importing the SDK,
    hypothesis and the runner costs 3.65 CPU-s from source against 3.35 from the cache (issue
    21: most of an import is running the modules, not compiling them). ``PYTHONPYCACHEPREFIX``
    keeps the cache out of the checkout and out of the directories the tests make (a subject's
    own folder stays as the test wrote it).
    """
    return {"PYTHONDONTWRITEBYTECODE": None,
            "PYTHONPYCACHEPREFIX": str(Path(session.virtualenv.location) / "pycache")}


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The project's own tests."""
    session.install("-e", ".[test]")
    # Four workers on a 2-core machine: a test waits for its subjects (a command past its
    # timeout, a start-up, a restart) while other workers use the cores; with four the machine
    # is busy 1.8-2 cores for most of a run (process accounting; six were no faster, issue 21).
    # benchmarks/project_tests.py measures the same steps.
    # --durations=30: the slowest tests in every log, so a run says where its time went.
    # -rfEs: failures and errors, then the skip reasons at the end, grouped and counted (pytest folds identical ones into
    # "SKIPPED [N] file:line: reason"), so a skipped test always says why (issue 41).
    args = session.posargs or ["-n", "4", "-q", "-rfEs", "--durations=30"]
    # What every xdist worker imports, compiled once before they start (scripts/warm_imports.py)
    session.run("python", "scripts/warm_imports.py", env=bytecode_env(session))
    session.run("pytest", *args, env=bytecode_env(session))


#: The tests that drive the ``anthropic`` SDK (every test module importing it; tests/test_sdk_range.py
#: keeps the list whole), run by the ``sdk_*`` sessions at each end of the range pyproject admits.
SDK_TESTS = ("tests/test_adapters.py", "tests/test_engine_deliberate.py",
             "tests/test_envelope.py", "tests/test_envelope_sdk.py", "tests/test_faults.py",
             "tests/test_files_models_api.py", "tests/test_managed_agents.py",
             "tests/test_managed_agents_sdk_worker.py", "tests/test_matching_docs.py",
             "tests/test_matching_surfaces.py", "tests/test_probe.py", "tests/test_record.py",
             "tests/test_rules_fields.py", "tests/test_sdk_e2e.py", "tests/test_sse.py",
             "tests/test_transports.py", "tests/test_validation_sdk.py", "tests/test_wire_utf8.py")


def sdk_lower_bound() -> str:
    """The lowest ``anthropic`` pyproject.toml admits (``anthropic>=X``)."""
    import re
    text = (Path(__file__).parent / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'"anthropic>=([0-9][0-9.]*)', text)
    if found is None:
        raise SystemExit("noxfile.py: pyproject.toml declares no `anthropic>=X` lower bound")
    version = found.group(1)
    return version if version.count(".") >= 2 else version + ".0"


def _sdk_tests(session: nox.Session, pin: str) -> None:
    session.install("-e", ".[test]", pin)
    session.run("python", "-c", "import anthropic; print('anthropic', anthropic.__version__)")
    session.run("pytest", "-n", "4", "-q", "-rfEs", *(session.posargs or SDK_TESTS),
                env=bytecode_env(session))


@nox.session(python=PYTHON)
def sdk_lowest(session: nox.Session) -> None:
    """The SDK-facing tests with the lowest ``anthropic`` pyproject admits (CI runs it after
    `tests`, which installs the newest): a release that changes how the SDK talks to the API
    shows at both ends (issue 41; 2.17 turned main red overnight)."""
    _sdk_tests(session, f"anthropic=={sdk_lower_bound()}")


@nox.session(python=PYTHON)
def sdk_newest(session: nox.Session) -> None:
    """The SDK-facing tests with the newest ``anthropic`` release within pyproject's range."""
    _sdk_tests(session, "anthropic<3")


@nox.session(python=PYTHON)
def saturated(session: nox.Session) -> None:
    """Every conformant, reference and broken bash and editor subject judged with 3 busy
    processes per CPU (tests/test_saturated.py; `nox -s tests` runs only the subjects whose
    verdicts rest on time). Minutes on two cores; it loads the machine on purpose."""
    session.install("-e", ".[test]")
    session.run("pytest", "-q", "-n", "0", "-rA", "tests/test_saturated.py", *session.posargs,
                env={"TOOLUSE_SATURATED": "all", **bytecode_env(session)})


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff and mypy on the packages."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", "simulator", "conformance", "tests", "benchmarks", "scripts",
                "noxfile.py")
    session.run("mypy")
    session.run("tooluse", "lint-fixtures")  # the fixture corpus: schemas, secrets, replay, SDK


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The main job: the suite against the reference subjects and the whole fixture corpus."""
    session.install("-e", ".")
    session.run("tooluse", "run", "--all-reference", "--out", "reports/run", *session.posargs,
                env=bytecode_env(session))


@nox.session(python=PYTHON)
def baseline(session: nox.Session) -> None:
    """Regenerate reports/baseline/ (the reference subjects' normalised results.json + report.md).

    `nox -s baseline -- --check` only compares (exit 1 when the committed baseline is stale).
    """
    session.install("-e", ".")
    session.run("python", "-m", "scripts.reference_baseline", "--out",
                "reports/baseline", *session.posargs)


#: The loop matrix's checks (frameworks.toml): every loop check (the corpus check on the columns
#: that do not skip it, frameworks.toml skip_checks).
FRAMEWORK_CHECKS = ("loop.client_tools.*", "loop.pause_turn.*", "loop.mixed.*", "loop.ptc.*",
                    "loop.container.*", "loop.errors.*", "loop.corpus.*")


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """The compatibility matrix: matrix.toml's implementations, each in its own environment (built
    once, reused under ~/.cache/tooluse/matrix), compared in reports/matrix/ (docs/matrix.md); then
    the loop matrix of frameworks.toml in reports/frameworks/ (docs/frameworks.md)."""
    session.install("-e", ".[serve]")
    session.run("tooluse", "matrix", "matrix.toml", "--out", "reports/matrix", *session.posargs)
    # the loop matrix: agent frameworks (docs/frameworks.md)
    session.run("tooluse", "matrix", "frameworks.toml", "--out", "reports/frameworks", "--check",
                *FRAMEWORK_CHECKS, *session.posargs)


@nox.session(python=PYTHON)
def findings(session: nox.Session) -> None:
    """The findings of both committed matrices (docs/matrix.md "Findings a maintainer can run"):
    one folder per failing cell (repro.py, ISSUE.md, finding.json) under reports/matrix/findings/
    and reports/frameworks/findings/, each reproducer run in its column's pinned environment
    (those `nox -s matrix` built under ~/.cache/tooluse/matrix; a column whose environment is not
    built is left unverified, never built here)."""
    session.install("-e", ".[serve]")
    for matrix_dir in ("reports/matrix", "reports/frameworks"):
        session.run("tooluse", "findings", matrix_dir, "--verify", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, as ratios measured in one run; writes reports/bench.json."""
    session.install("-e", ".[test,bench]")
    session.run("python", "-m", "benchmarks", *session.posargs, env=bytecode_env(session))


@nox.session(python=PYTHON)
def mutation(session: nox.Session) -> None:
    """The suite's mutation score on its own reference bash tool and text editor: cosmic-ray's
    mutants, each tested by `tooluse run` (the family's checks) on a mutated copy; writes
    reports/mutation/ (mutants.json, report.md; scripts/mutation.py). `-- --only KEY` reruns
    some mutants and keeps the others' results."""
    session.install("-e", ".[mutation]")
    session.run("python", "-m", "scripts.mutation", *session.posargs, env=bytecode_env(session))


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """Hostile requests, long: 5,000 into the simulator (counts by category), then the bounded
    fuzz tests with 10x the examples (`-- --examples N` sets the first run's count)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "fuzzkit.long_run", *session.posargs, env={"PYTHONPATH": "tests"})
    session.run("pytest", "-q", "tests/test_fuzz_simulator.py", "tests/test_fuzz_server.py",
                env={"TOOLUSE_FUZZ_SCALE": "10"})
