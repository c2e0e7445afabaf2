"""Agent-loop columns of ``tooluse matrix`` (frameworks.toml): the config keys, the run arguments,
the environment's npm packages and program venv in the column's environment; and the committed
loop matrix is valid for the catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import UsageError
from conformance.matrix.config import load_config
from conformance.matrix.envs import EnvResult, env_dir_of, env_key
from conformance.matrix.execute import _environ, run_argv

ROOT = Path(__file__).resolve().parent.parent


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(body)
    return path


def test_loop_columns_parse_and_run_as_loop_subjects(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, """
[[subject]]
name = "runner"
tool_type = "agent_loop"
factory = "conformance.reference.loop:sdk_tool_runner"

[[subject]]
name = "node"
tool_type = "agent_loop"
command = "python -m conformance.adapters.vercel_ai"
npm = ["ai@6.0.325"]

[[subject]]
name = "llm"
tool_type = "agent_loop"
command = "python -m conformance.adapters.x"
program_requirements = ["llm==0.36"]
"""))
    runner, node, llm = config.subjects
    assert runner.family == "loop" and not runner.own_env
    argv = run_argv(runner, config, tmp_path / "out", jobs=None)
    assert argv[:3] == ["run", "--loop", "conformance.reference.loop:sdk_tool_runner"]
    assert "--loop-type" not in argv and argv[argv.index("--name") + 1] == "runner"
    assert run_argv(node, config, tmp_path, jobs=None)[1] == "--loop-cmd"
    assert node.own_env and node.npm == ("ai@6.0.325",)
    assert llm.own_env and llm.program_requirements == ("llm==0.36",)
    env_dir = tmp_path / "env"
    environ = _environ(node, EnvResult(env_dir / "bin" / "python", env_dir))
    assert environ["TOOLUSE_NODE_MODULES"] == str(env_dir / "node" / "node_modules")
    environ = _environ(llm, EnvResult(env_dir / "bin" / "python", env_dir))
    assert environ["PATH"].split(":")[:2] == [str(env_dir / "program" / "bin"), str(env_dir / "bin")]
    # each kind of requirement has its environment; without them a key is what it was before
    keys = {env_dir_of(e, tmp_path) for e in (node, llm)}
    assert len(keys) == 2
    assert env_key("/usr/bin/python3", "3.11", ("a==1",)) == env_key("/usr/bin/python3", "3.11",
                                                                     ("a==1",), (), (), ())


@pytest.mark.parametrize("entry, words", [
    ('tool_type = "agent_loop"\nfactory = "m:f"\nprogram_requirements = ["x"]', "given by command"),
    ('tool_type = "agent_loop"\ncommand = "x"\nnpm = "ai"', "npm must be a list"),
    ('tool_type = "agent_loops"\ncommand = "x"', "agent_loop"),
])
def test_bad_loop_entries_name_the_problem(tmp_path: Path, entry: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        load_config(_config(tmp_path, f'[[subject]]\nname = "a"\n{entry}\n'))


def test_frameworks_toml_is_a_valid_config() -> None:
    config = load_config(ROOT / "frameworks.toml")
    names = [s.name for s in config.subjects]
    assert {"anthropic-sdk-tool-runner", "pydantic-ai", "vercel-ai"} <= set(names)
    assert all(s.family == "loop" for s in config.subjects)


def test_the_committed_loop_matrix_is_valid_and_current() -> None:
    from conformance.matrix.model import validate_matrix
    from conformance.matrix.stale import stale_checks

    doc = json.loads((ROOT / "reports" / "frameworks" / "matrix.json").read_text())
    validate_matrix(doc)
    ids = {row["id"] for row in doc["checks"]}
    assert ids and all(i.startswith("loop.") for i in ids)
    assert not stale_checks(doc), "reports/frameworks is stale: regenerate it with nox -s matrix"


def test_skip_checks_leaves_those_checks_out_of_the_column_run(tmp_path: Path) -> None:
    from conformance.matrix.execute import run_argv

    config = load_config(_config(tmp_path, '[[subject]]\nname = "a"\ntool_type = "agent_loop"\n'
                                           'command = "x"\nskip_checks = ["loop.corpus.*"]\n'))
    argv = run_argv(config.subjects[0], config, tmp_path, jobs=1,
                    checks=["loop.errors.*", "loop.corpus.*"])
    chosen = argv[argv.index("--check") + 1:argv.index("--out")]
    assert "loop.errors.transient_retried" in chosen
    assert not [c for c in chosen if c.startswith("loop.corpus")]
    with pytest.raises(UsageError, match="skip_checks"):
        load_config(_config(tmp_path, '[[subject]]\nname = "a"\ntool_type = "agent_loop"\n'
                                      'command = "x"\nskip_checks = "loop.corpus.*"\n'))


def test_the_llm_anthropic_program_declares_without_llm_installed() -> None:
    """Its venv holds llm and the suite without dependencies: the declaration needs neither llm
    nor anything outside the standard library (the suite's venv has no llm)."""
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "conformance.adapters.llm_anthropic"],
                         env={**os.environ, "TOOLUSE_LOOP_DESCRIBE": "1"}, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    doc = json.loads(out)
    assert doc["variants"] == {"client_tool": "custom", "code_execution": "code_execution_20260521"}
    assert set(doc["unsupported"]) == {"loop.ptc.pause_resume", "loop.ptc.pause_resume_streamed",
                                       "loop.ptc.parallel_calls", "loop.ptc.several_pauses"}
    entry = next(s for s in load_config(ROOT / "frameworks.toml").subjects
                 if s.name == "llm-anthropic")
    assert entry.program_requirements and "loop.corpus.*" in entry.skip_checks
