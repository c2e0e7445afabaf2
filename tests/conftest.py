from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared``; tests that need it skip with a reason on a user's fresh clone."""
    if not (SHARED / "seeds").is_dir():
        pytest.skip(f"{SHARED} is absent (seeds and real traffic live outside the project)")
    return SHARED


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that needs ``../shared`` (the ``shared_dir`` fixture, directly or through
    another fixture) carries the ``shared`` marker: ``-m 'not shared'`` deselects them all.

    For ``pytest -n 2`` (``--dist loadgroup --no-loadscope-reorder``, pyproject's addopts; issue
    21): the tests that share a module-scoped fixture form one xdist group, so the fixture (a
    whole run of subjects, say) is built on one worker instead of on each; and the order of the
    long tests is tests/scheduling.py's: longest first (:func:`_expected_seconds`), so that no
    long test starts last while the other workers have nothing left to do, and those that wait
    on deadlines spread out among the busy ones.
    """
    from scheduling import Unit, order

    for item in items:
        if "shared_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)
        group = _module_fixture_group(item)
        if group and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    recorded = _recorded_durations()
    # A group runs on one worker, as one unit: it is scheduled by the time of all its tests.
    unit = {item.nodeid: _group_of(item) or item.nodeid for item in items}
    seconds: dict[str, float] = {}
    cpu: dict[str, float | None] = {}
    wall: dict[str, float] = {}
    for item in items:
        u = unit[item.nodeid]
        seconds[u] = seconds.get(u, 0.0) + _expected_seconds(item, recorded)
        took, used = recorded.get(item.nodeid, (0.0, None))  # a short test has no record
        wall[u] = wall.get(u, 0.0) + took
        cpu[u] = cpu.get(u) if used is None else (cpu.get(u) or 0.0) + used
    units = [Unit(u, seconds[u], cpu[u], wall[u]) for u in dict.fromkeys(unit.values())]
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    rank = {key: i for i, key in enumerate(order(units, workers))}
    items.sort(key=lambda item: rank[unit[item.nodeid]])  # stable: a group's tests in file order


#: Seconds each long test took in a whole run (``pytest -n 4``, idle; nodeid -> ``[seconds,
#: CPU seconds]`` of setup, call and teardown; a bare number is seconds alone): the order the
#: tests are handed to the workers (tests/scheduling.py: longest first, the longest-processing-
#: time rule, as a long test started last ran alone for a minute at the end of a run; and busy
#: tests mixed with waiting ones; issue 21). Tests absent from it count as short.
#: ``TOOLUSE_STORE_DURATIONS=FILE`` writes a new one from a run (tests that took 1 s or more).
DURATIONS = Path(__file__).resolve().parent / "durations.json"
#: Shorter tests are not recorded (the file stays small; their order does not matter).
DURATION_FLOOR = 1.0


def _recorded_durations() -> dict[str, tuple[float, float | None]]:
    """nodeid -> (seconds, CPU seconds or None)."""
    import json

    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, tuple[float, float | None]] = {}
    for k, v in data.items():
        if isinstance(v, (int, float)):
            out[str(k)] = (float(v), None)
        elif isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
            out[str(k)] = (float(v[0]), float(v[1]))
    return out


def _expected_seconds(item: pytest.Item,
                      recorded: dict[str, tuple[float, float | None]]) -> float:
    """The recorded time, or a ``slow`` test's own estimate (``@pytest.mark.slow(55)``: about
    55 s idle), whichever is longer; 0 for a short test."""
    mark = item.get_closest_marker("slow")
    estimate = float(mark.args[0]) if mark is not None and mark.args else 0.0
    return max(recorded.get(item.nodeid, (0.0, None))[0], estimate)


def _group_of(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", ""))


#: ``TOOLUSE_STORE_DURATIONS``: the file a run writes its durations to (read once, here).
STORE_DURATIONS = os.environ.get("TOOLUSE_STORE_DURATIONS")
_STORED: dict[str, float] = {}
_STORED_CPU: dict[str, float] = {}
#: The user property a worker reports each test's CPU seconds in (its teardown report).
CPU_PROPERTY = "tooluse_cpu_seconds"
_CPU_AT_START = pytest.StashKey[float]()


def _cpu_seconds() -> float:
    """CPU seconds of this process and of the children it has reaped."""
    import resource

    own, reaped = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if STORE_DURATIONS:
        item.stash[_CPU_AT_START] = _cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """With ``TOOLUSE_STORE_DURATIONS``: the test's CPU seconds, setup to teardown, go with its
    teardown report (a user property: pytest-xdist sends it from the worker)."""
    if STORE_DURATIONS and call.when == "teardown" and _CPU_AT_START in item.stash:
        item.user_properties.append((CPU_PROPERTY,
                                     round(_cpu_seconds() - item.stash[_CPU_AT_START], 2)))
    yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With ``TOOLUSE_STORE_DURATIONS``: add up each test's setup, call and teardown, and its
    CPU seconds."""
    if STORE_DURATIONS:
        nodeid = _without_group(report.nodeid)
        _STORED[nodeid] = _STORED.get(nodeid, 0.0) + report.duration
        if report.when == "teardown":
            for key, value in report.user_properties:
                if key == CPU_PROPERTY:
                    _STORED_CPU[nodeid] = float(value)


def _without_group(nodeid: str) -> str:
    """The node id as collected: pytest-xdist appends ``@<group>`` (a module's path, or a name
    such as ``test_bash_checks-bash_no_timeout``). An ``@`` in a parameter id is inside its
    brackets. (Kept only after a ``.py`` group before: the named groups' times were stored
    under ids that collection never sees, so those tests counted as short and ran last.)"""
    head, sep, group = nodeid.rpartition("@")
    return head if sep and not any(c in group for c in ("::", "[", "]")) else nodeid


def _module_fixture_group(item: pytest.Item) -> str | None:
    """The module's path when ``item`` uses a module-scoped fixture (none: ``None``)."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if any(d.scope == "module" for d in defs):
            return item.nodeid.split("::", 1)[0]
    return None


# --- the model checks' hard time cap (issue 21) ------------------------------------------------
#
# The editor and bash model checks do a fixed amount of work (a count of examples and of shrink
# tries, never a clock); their hard time cap (at least 60 s) is only a safety net, and a machine
# saturated with other work can hit it: two failing editors then came out ``incomplete`` where
# their tests expect FAIL. Every model check a test runs in this process gets a cap it cannot hit,
# so that the test expects its real outcome and nothing else; the tests of the cap itself set a
# small one with their own monkeypatch (it is applied after this one).

#: The cap in-process model checks get in the tests (seconds).
MODEL_CHECK_CAP_SECONDS = 3600.0


@pytest.fixture(autouse=True)
def _model_checks_get_a_cap_load_cannot_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.properties import bash_machine, editor

    monkeypatch.setattr(editor, "MIN_CAP_SECONDS", MODEL_CHECK_CAP_SECONDS)
    monkeypatch.setattr(bash_machine, "MIN_CAP_SECONDS", MODEL_CHECK_CAP_SECONDS)


# --- no litter (issue 26): nothing left in the checkout or the temporary directory ------------
#
# The session runs with a temporary directory of its own (TMPDIR, inherited by xdist workers and
# every subject a test starts): whatever a test, a run or a subject leaves there is litter and
# fails the session, by name. Pytest's own directories stay where they were (basetemp is fixed
# before TMPDIR changes); virtual environments the tests build (~100 MB each) are removed at the
# end whatever the outcome, and a passing test's tmp_path at once (tmp_path_retention_policy).
# Hypothesis keeps its home (example database, caches) in that directory too, not in
# .hypothesis/ of the checkout. A pytest run a test starts in a subprocess passes
# nested_pytest_args(tmp_path): its basetemp is under the test's tmp_path, not pytest-of-<user>
# in this directory (tests/test_litter.py plants a leftover and sees the session fail).

_LITTER: dict[str, object] = {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    import signal
    import tempfile

    from hypothesis import configuration

    # Run under `nohup` (or a runner that ignores SIGHUP), every shell a test starts would inherit
    # SIGHUP ignored, and a non-interactive bash cannot undo that: a subject that restarts by
    # hanging up on its shell (tests/broken/bash_restart_hangs_up.py) then waits forever for a
    # shell that never exits (a CI run under nohup hung there). The tests run as at a terminal.
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)

    # One hypothesis home for the session's processes, the controller's and every xdist
    # worker's: each worker built hypothesis' UTF-8 codec table (~2 CPU-s) in a home of its own
    # (issue 21); hypothesis writes its caches atomically, for xdist workers.
    if hasattr(config, "workerinput"):  # an xdist worker: the controller set TMPDIR for it
        configuration.set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "hypothesis")
        return
    config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]  # fixed before TMPDIR moves
    own = Path(tempfile.mkdtemp(prefix="tooluse-tests-")).resolve()
    _LITTER.update(tmp=own, previous=os.environ.get("TMPDIR"), checkout=_checkout_entries())
    os.environ["TMPDIR"] = str(own)
    tempfile.tempdir = None
    configuration.set_hypothesis_home_dir(own / "hypothesis")


def nested_pytest_args(tmp_path: Path) -> list[str]:
    """The options every pytest run a test starts (in a subprocess) passes: its own basetemp
    under the test's ``tmp_path``, so it leaves no ``pytest-of-<user>`` in the session's
    temporary directory. (``pytester`` sets one by itself.)"""
    return ["-p", "no:cacheprovider", f"--basetemp={tmp_path / 'nested-basetemp'}"]


def _checkout_entries() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for d in (ROOT, ROOT / "tests") for p in d.iterdir()}


def _remove_venvs(root: Path) -> None:
    import shutil

    for here, dirs, files in os.walk(root):
        if "pyvenv.cfg" in files:
            shutil.rmtree(here, ignore_errors=True)
            dirs[:] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import json
    import shutil
    import tempfile

    if STORE_DURATIONS and _STORED and not hasattr(session.config, "workerinput"):  # controller
        long = {k: [round(v, 1), round(_STORED_CPU[k], 1)] if k in _STORED_CPU else round(v, 1)
                for k, v in sorted(_STORED.items()) if v >= DURATION_FLOOR}
        lines = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in long.items())
        Path(STORE_DURATIONS).write_text("{\n" + lines + "\n}\n")  # one test a line

    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is not None and Path(basetemp).is_dir():
        _remove_venvs(Path(basetemp))
    own = _LITTER.get("tmp")
    if not isinstance(own, Path):
        return
    # Anything left fails the session, by name: the suite's own tooluse-* directories, anonymous
    # tmp*, a nested pytest run's pytest-of-* (every nested run gets a --basetemp under its
    # test's tmp_path: nested_pytest_args), and anything new in the checkout. It goes with the
    # directory below either way, so nothing stays on disk.
    left = sorted(p.name for p in own.iterdir() if p.name != "hypothesis")
    new = sorted(_checkout_entries() - set(_LITTER["checkout"]))  # type: ignore[arg-type]
    shutil.rmtree(own, ignore_errors=True)
    previous = _LITTER["previous"]
    if previous is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = str(previous)
    tempfile.tempdir = None
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if left or new:
        text = (f"litter: the test run left {', '.join(left)} in its temporary directory"
                if left else "")
        if new:
            text += ("; " if text else "litter: ") + f"the run left {', '.join(new)} in the checkout"
        if reporter is not None:
            reporter.write("\n")
            reporter.write_sep("!", text, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
