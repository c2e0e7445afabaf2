"""The model check depends on nothing its process carries (issue 21).

The same editor gives the same examples, findings, reproducers and counts whatever ran before it
in the process: another hypothesis settings profile loaded (a test suite's own, or hypothesis'
"ci" profile, which it loads when ``CI`` is set), the global ``random`` state, and the local
modules imported. The last was the real cause of a full-suite worker's "357 calls in 41
examples" against "521 calls in 40 examples" alone: hypothesis mixes the constants of every
imported local module into what it draws (``conformance.properties.exploration
.no_local_constants``)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from broken.editor_harness import make_session
from broken.editor_kit import by_name
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import InMemoryExampleDatabase

from conformance.properties.editor import ModelReport, explore_editor_model
from conformance.properties.exploration import quiet_settings
from conformance.reference.editor import TextEditor
from conformance.session import allow_spawn

#: Characters the editor machine draws its texts and file names from
#: (``conformance.properties.strategies``): strings of them are values it could draw.
_CHARS = "abcxyzXY_=:;()$é✓-"
#: Each pollution plants strings hypothesis has not seen yet in this process (its harvest only
#: grows: a module planted again adds nothing).
_PLANTINGS = itertools.count()


def _planted_source() -> tuple[str, str]:
    """(a module name, its source): constants of every kind hypothesis harvests (ints >= 100,
    floats, strings, bytes), all new to this process; ``MARK`` is the name as a string."""
    n = next(_PLANTINGS)
    words = ["".join(w) for w in itertools.islice(itertools.product(_CHARS, repeat=3),
                                                  300 * n, 300 * (n + 1))]
    blobs = [b"\xfe\xff" + bytes([n % 256]), b"planted-%d" % n]
    return f"tooluse_planted_{n}", (f"LINES = {tuple(range(100 + n, 400, 7))!r}\nRATIOS = (0.25, 1.5, -2.5)\n"
            f"WORDS = {tuple(words)!r}\nBLOBS = {tuple(blobs)!r}\n"
            f"MARK = 'tooluse_planted_{n}'\n")


def _polluted_profile() -> settings:
    """Every setting away from what the check needs, on top of hypothesis' "ci" profile."""
    changed: dict[str, Any] = dict(
        max_examples=3, derandomize=False, database=InMemoryExampleDatabase(),
        verbosity=Verbosity.verbose, phases=(Phase.explicit,), stateful_step_count=2,
        report_multiple_bugs=False, suppress_health_check=(), deadline=5, print_blob=True)
    return settings(settings.get_profile("ci"), **changed)


@contextmanager
def polluted(where: Path) -> Iterator[str]:
    """A process as a long test run leaves it: another settings profile loaded, the global random
    state moved, and a local module full of constants imported."""
    where.mkdir()
    name, source = _planted_source()
    (where / f"{name}.py").write_text(source)
    spec = importlib.util.spec_from_file_location(name, where / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    profile = settings.get_current_profile_name()
    settings.register_profile("tooluse-polluted", _polluted_profile())
    settings.load_profile("tooluse-polluted")
    state = random.getstate()
    random.seed(20261202)
    try:
        yield module.MARK
    finally:
        random.setstate(state)
        settings.load_profile(profile)
        # The module stays imported, as a test's imports do (hypothesis notices new modules by
        # the length of sys.modules: one removed and another added would go unnoticed).


def _explore(cls: type[TextEditor], tool_type: str, workdir: Path) -> tuple[ModelReport,
                                                                           list[str]]:
    """The model check on ``cls`` in ``workdir``, and every input the editors received in order
    (its own directory written as <wd>): the examples themselves."""
    workdir.mkdir()
    received: list[str] = []

    class Recording(cls):  # type: ignore[misc, valid-type]
        def __call__(self, tool_input: dict[str, Any]) -> Any:
            received.append(json.dumps(tool_input, sort_keys=True, ensure_ascii=False)
                            .replace(str(workdir), "<wd>"))
            return super().__call__(tool_input)

    def factory(wd: Path, timeout: float | None = None) -> TextEditor:
        return Recording(wd, tool_type=tool_type)

    s = make_session(factory, tool_type, workdir)
    allow_spawn(s, lambda wd: make_session(factory, tool_type, wd))
    try:
        return explore_editor_model(s), received
    finally:
        s.close()


def _seen(report: ModelReport, workdir: Path) -> tuple[Any, ...]:
    """Everything the run reports, its own directory written as <wd>."""
    findings = [tuple(str(v).replace(str(workdir), "<wd>") for v in
                      (f.key, f.message, f.received, f.reproducer, f.setup, f.reproduced))
                for f in report.findings]
    return (findings, report.budget.used, report.budget.examples, report.ended,
            report.incomplete, report.observed.replace(str(workdir), "<wd>"))


EDITORS = {"reference": TextEditor, "StaleViewCache": by_name("StaleViewCache").cls}


@pytest.mark.parametrize("name", sorted(EDITORS))
def test_model_check_is_the_same_in_a_polluted_process(name: str, tmp_path: Path) -> None:
    """The same examples (every input the editor received), counts, findings and reproducers
    before and after the process is polluted."""
    cls, tool_type = EDITORS[name], "text_editor_20250728"
    clean, clean_inputs = _explore(cls, tool_type, tmp_path / "clean")
    with polluted(tmp_path / "pollution") as mark:
        # The pollution is real: hypothesis' own settings and harvest of local constants changed.
        assert settings.default.max_examples == 3 and settings.default.derandomize is False
        harvest = getattr(pytest.importorskip("hypothesis.internal.conjecture.providers"),
                          "_get_local_constants", None)
        if harvest is not None:  # hypothesis >= 6.131 draws constants of local modules
            assert mark in set(harvest().strings)
        dirty, dirty_inputs = _explore(cls, tool_type, tmp_path / "dirty")
    assert dirty_inputs == clean_inputs
    assert _seen(dirty, tmp_path / "dirty") == _seen(clean, tmp_path / "clean")
    assert clean.budget.examples >= 40 and not clean.incomplete
    if name == "reference":
        assert clean.findings == []
    else:
        assert clean.findings and all(f.reproduced == "verified" for f in clean.findings)


def test_quiet_settings_pin_every_setting() -> None:
    """No setting of a check's run comes from the loaded profile."""
    profile = settings.get_current_profile_name()
    mine = quiet_settings(max_examples=40, stateful_step_count=12)
    settings.register_profile("tooluse-polluted", _polluted_profile())
    settings.load_profile("tooluse-polluted")
    try:
        theirs = quiet_settings(max_examples=40, stateful_step_count=12)
    finally:
        settings.load_profile(profile)
    names = [n for n in ("max_examples", "derandomize", "database", "verbosity", "phases",
                         "stateful_step_count", "report_multiple_bugs", "suppress_health_check",
                         "deadline", "print_blob", "backend") if hasattr(mine, n)]
    assert {n: getattr(theirs, n) for n in names} == {n: getattr(mine, n) for n in names}
    assert mine.database is None and mine.derandomize is True
    assert set(mine.suppress_health_check) == set(HealthCheck)
