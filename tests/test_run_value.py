"""The run's settings as one value (issue 38): one table of options (``conformance.options.
OPTIONS``) makes ``tooluse run``'s, the pytest plugin's and ``tooluse probe``'s options; each
entry point builds one frozen ``Run``; every subject opens a case with the part of it a case
needs (``CaseSettings``), by one protocol."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from conformance import runner
from conformance.catalog import CATALOG
from conformance.cli import build_parser
from conformance.options import OPTIONS, PYTEST, pytest_options
from conformance.run import Run
from conformance.subjects.case import CaseSettings
from conformance.subjects.launch import Confinement
from conformance.subjects.spec import factory_subject

#: The plugin's option names before the table (users have them in CI configs): all kept.
PLUGIN_NAMES_BEFORE = (
    "--tooluse-bash", "--tooluse-bash-cmd", "--tooluse-bash-type", "--tooluse-editor",
    "--tooluse-editor-cmd", "--tooluse-editor-type", "--tooluse-name",
    "--tooluse-editor-max-characters", "--tooluse-check", "--tooluse-timeout",
    "--tooluse-startup-timeout", "--tooluse-strict", "--tooluse-fail-on-flaky",
    "--tooluse-sandbox", "--tooluse-pass-env")


def test_the_run_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Run().timeout = 1  # type: ignore[misc]


def test_the_plugin_offers_the_tables_options_and_keeps_its_names() -> None:
    names = [name for name, _ in pytest_options()]
    assert set(PLUGIN_NAMES_BEFORE) <= set(names)
    assert names == ["--tooluse-" + o.flag.removeprefix("--") for o in OPTIONS
                     if PYTEST in o.where]
    for limit in ("memory", "cpu", "file-size", "process"):
        assert f"--tooluse-{limit}-limit" in names


def _pytest_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for name, kwargs in pytest_options():
        parser.add_argument(name, **kwargs)
    return parser.parse_args(argv)


def test_the_plugins_options_make_the_same_run_as_tooluse_runs() -> None:
    words = ["--bash-cmd", "my-bash", "--name", "mine", "--timeout", "7", "--sandbox", "off",
             "--memory-limit", "1G", "--cpu-limit", "9", "--file-size-limit", "5M",
             "--process-limit", "0", "--pass-env", "MY_SETTING", "--check", "bash.x",
             "--strict", "--loop-cmd", "node l.mjs", "--loop-matching", "tolerant"]
    plugin = ["--tooluse-" + w[2:] if w.startswith("--") else w for w in words]
    from_pytest = Run.from_args(_pytest_args(plugin), {}, prefix="tooluse_")
    assert from_pytest == Run.from_argv(words, {})
    conf = from_pytest.confinement
    assert (conf.mode, conf.memory, conf.cpu, conf.file_size, conf.processes) == (
        "off", 1024**3, 9, 5 * 1024**2, None)


def test_tooluse_probe_takes_the_sandbox_and_the_limits() -> None:
    args = build_parser().parse_args(["probe", "--model", "m", "--out", "o", "--sandbox", "off",
                                      "--memory-limit", "1G", "--pass-env", "MY_SETTING"])
    conf = Run.from_args(args, {}).confinement
    assert (conf.mode, conf.memory, conf.pass_env) == ("off", 1024**3, ("MY_SETTING",))


class _Recording:
    """A subject that keeps the case settings the runner opened it with."""

    def __init__(self) -> None:
        self.real = factory_subject("conformance.reference.bash:factory", family="bash",
                                    name="recording")
        self.seen: list[CaseSettings] = []
        self.name, self.family, self.tool_type = "recording", "bash", self.real.tool_type
        self.info = self.real.info

    def open(self, workdir: Path, case: CaseSettings) -> Any:
        self.seen.append(case)
        return self.real.open(workdir, case)


def test_every_case_gets_the_runs_settings_by_one_protocol() -> None:
    subject = _Recording()
    settings = Run(timeout=4.5, startup_timeout=12, checks=("bash.session.cwd_persists",),
                   jobs=1, confinement=Confinement(mode="off", cpu=77))
    summary = runner.run([subject], settings)
    assert [r.outcome.value for r in summary.results] == ["pass"]
    assert subject.seen and all(case == settings.case for case in subject.seen)
    assert settings.case.case_deadline == 4.5 * runner.CASE_BUDGET_TIMEOUTS
    assert summary.plan.info.argv == ["run", *settings.words()]
    assert "bash.session.cwd_persists" in CATALOG
