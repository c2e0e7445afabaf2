"""The installer that builds a matrix column's environment (``TOOLUSE_INSTALLER``: auto, pip,
uv; conformance.matrix.envs). The end-to-end build (tests/test_matrix.py, a column in its own
Python) runs with what ``auto`` finds in the test environment, uv; here every installer's commands
are checked without running them, and a bad setting is the column's error, named."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from conformance.matrix import envs
from conformance.matrix.config import SubjectEntry

ENTRY = SubjectEntry(name="a", family="bash", tool_type="bash_20250124",
                     factory="conformance.reference.bash:factory", requirements=("jsonschema",),
                     program_requirements=("llm==0.19",))


def _steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None
           ) -> tuple[envs.EnvResult, list[list[str]]]:
    """Build ENTRY's environment with ``TOOLUSE_INSTALLER=setting``, recording the commands
    instead of running them."""
    if setting is None:
        monkeypatch.delenv("TOOLUSE_INSTALLER", raising=False)
    else:
        monkeypatch.setenv("TOOLUSE_INSTALLER", setting)
    calls: list[list[str]] = []

    def call(argv: list[str], **_: object) -> int:
        calls.append(list(argv))
        if "venv" in argv:  # what the step would have made
            Path(argv[-1]).mkdir(parents=True)
        return 0

    monkeypatch.setattr(envs.subprocess, "call", call)
    result = envs._build(sys.executable, tmp_path / "env", ENTRY)
    return result, calls


def test_pip_builds_with_the_interpreters_venv_and_the_venvs_pip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, calls = _steps(tmp_path, monkeypatch, "pip")
    env, program = tmp_path / "env", tmp_path / "env" / "program"
    project = envs._project_install()
    assert calls == [
        [sys.executable, "-m", "venv", str(env)],
        [str(env / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
         *project, "jsonschema"],
        [sys.executable, "-m", "venv", str(program)],
        [str(program / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
         "-q", "llm==0.19"],
        [str(program / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
         "-q", "--no-deps", *project],
    ]
    assert result.python == env / "bin" / "python" and not result.problem
    assert '"installer": "pip"' in (env / envs.READY_MARKER).read_text()


def test_uv_builds_the_same_environments_with_uv(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_uv", lambda: "/opt/uv")
    for setting in ("uv", "auto", None, " UV "):
        shutil.rmtree(tmp_path / "env", ignore_errors=True)  # built: not built again
        _, calls = _steps(tmp_path, monkeypatch, setting)
        env, program = tmp_path / "env", tmp_path / "env" / "program"
        project = envs._project_install()
        assert calls == [
            ["/opt/uv", "venv", "--quiet", "--python", sys.executable, str(env)],
            ["/opt/uv", "pip", "install", "--quiet", "--python", str(env / "bin" / "python"),
             *project, "jsonschema"],
            ["/opt/uv", "venv", "--quiet", "--python", sys.executable, str(program)],
            ["/opt/uv", "pip", "install", "--quiet", "--python",
             str(program / "bin" / "python"), "llm==0.19"],
            ["/opt/uv", "pip", "install", "--quiet", "--python",
             str(program / "bin" / "python"), "--no-deps", *project],
        ], setting


def test_auto_without_uv_is_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "find_uv", lambda: None)
    _, calls = _steps(tmp_path, monkeypatch, "auto")
    assert calls[0] == [sys.executable, "-m", "venv", str(tmp_path / "env")]


@pytest.mark.parametrize(("setting", "message"), [
    ("conda", "TOOLUSE_INSTALLER='conda' is not one of auto, pip, uv"),
    ("uv", "TOOLUSE_INSTALLER=uv, but uv is neither installed with the suite nor on PATH"),
])
def test_a_bad_setting_is_the_columns_error_and_nothing_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, message: str) -> None:
    monkeypatch.setattr(envs, "find_uv", lambda: None)
    result, calls = _steps(tmp_path, monkeypatch, setting)
    assert calls == [] and result.python is None
    assert message in result.problem
    assert not (tmp_path / "env" / envs.READY_MARKER).exists()
