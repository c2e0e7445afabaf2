"""One sandboxed launch (docs/reliability.md, docs/architecture.md): the run's sandbox mode and
limits are a value (``Confinement``) written into a child's environment where it starts and
nowhere else; every subject process starts through ``conformance.subjects.launch``."""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.run import confinement_of
from conformance.subjects.launch import (
    Confinement,
    Folders,
    LaunchSpec,
    SubjectStartError,
    launch,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "conformance"


def _args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = dict(sandbox="off", pass_env=[], cpu_limit=None, process_limit=None,
                                   file_size_limit=None, memory_limit=None)
    return argparse.Namespace(**{**base, **kw})


def test_the_options_become_a_value_and_leave_the_environment_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_CPU_LIMIT", "77")  # an environment value the options do not set
    before = dict(os.environ)
    conf = confinement_of(_args(pass_env=["MY_SETTING"], memory_limit="512M", process_limit=0,
                                file_size_limit="1G"), os.environ)
    assert dict(os.environ) == before
    assert (conf.mode, conf.memory, conf.cpu, conf.processes, conf.file_size, conf.pass_env) == (
        "off", 512 * 1024**2, 77, None, 1024**3, ("MY_SETTING",))
    assert Confinement.from_environ(conf.child_env()) == conf


@pytest.mark.parametrize("kw, words", [
    (dict(pass_env=["ANTHROPIC_API_KEY"]), "credential never reaches"),
    (dict(cpu_limit=-1), "--cpu-limit -1"),
    (dict(memory_limit="lots"), "--memory-limit 'lots'"),
])
def test_bad_options_are_usage_errors(kw: dict[str, object], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        confinement_of(_args(**kw))


def test_a_launch_writes_the_confinement_into_the_child_only(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    conf = Confinement(mode="off", memory=123456789, cpu=42, pass_env=("MY_SETTING",))
    environ = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "sk-ant-not-a-real-key",
               "MY_SETTING": "kept", "UNLISTED": "dropped"}
    before = dict(os.environ)
    started = launch(LaunchSpec(("/bin/sh", "-c", "env; echo HOME_IS=$HOME"), conf, cwd=work,
                                env={"TOOLUSE_WORKDIR": str(work)}, environ=environ,
                                folders=Folders(private_in=tmp_path), limits="shell",
                                popen=dict(stdout=subprocess.PIPE)))
    out = started.proc.communicate(timeout=60)[0].decode()
    assert dict(os.environ) == before
    got = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert got["TOOLUSE_MEMORY_LIMIT"] == "123456789" and got["TOOLUSE_CPU_LIMIT"] == "42"
    assert got["TOOLUSE_SANDBOX"] == "off" and got["MY_SETTING"] == "kept"
    assert "ANTHROPIC_API_KEY" not in got and "UNLISTED" not in got
    assert started.private is not None and got["HOME_IS"] == str(started.private / "home")
    started.cleanup()
    assert not started.private.exists()


def test_a_program_that_is_not_there_is_a_start_error_that_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(SubjectStartError, match="no such program 'no-such-program-tooluse'"):
        launch(LaunchSpec(("no-such-program-tooluse",), Confinement(mode="off"), cwd=tmp_path,
                          folders=Folders(private_in=tmp_path)))
    assert list(tmp_path.iterdir()) == []


@functools.cache
def _modules() -> list[tuple[Path, list[ast.AST]]]:
    """Every module of the package and its nodes: parsed once per process for the tests below
    (~1 CPU-s each time; issue 21)."""
    return [(p, list(ast.walk(ast.parse(p.read_text(encoding="utf-8")))))
            for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_writes_the_environment_of_tooluse_itself() -> None:
    """``os.environ[...] = ...`` / ``os.environ.update`` only in a forked child (the fork server's
    subject host), never in the harness (adapters run in the subject's process: not scanned)."""
    found = []
    for path, nodes in _modules():
        if "adapters" in path.parts:
            continue
        for node in nodes:
            targets = node.targets if isinstance(node, ast.Assign) else []
            writes = any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == "os.environ"
                         for t in targets)
            calls = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                     and node.func.attr in ("update", "setdefault", "putenv")
                     and ast.unparse(node.func) in (
                         "os.environ.update", "os.environ.setdefault", "os.putenv"))
            if writes or calls:
                found.append(str(path.relative_to(ROOT)))
    assert found == ["conformance/subjects/forkserver.py"], found


def test_only_the_launch_and_the_sandbox_know_about_bubblewrap() -> None:
    found = sorted({str(p.relative_to(ROOT)) for p, nodes in _modules()
                    for node in nodes
                    if isinstance(node, ast.Attribute) and node.attr in (
                        "wrap", "base_options", "shim_argv", "decoy_options", "overlay_options")
                    and ast.unparse(node.value).endswith("sandbox")})
    assert found == ["conformance/subjects/launch.py"], found


def test_a_loop_command_gets_the_runs_confinement_not_the_environments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tooluse run --loop-cmd ... --sandbox off``: the options no longer reach the environment
    of tooluse, so the run's value must reach the loop program itself (each scenario declared
    unsupported, with the mode the program saw as the reason)."""
    from conformance import runner
    from conformance.loops.subject import loop_command_subject

    monkeypatch.setenv("TOOLUSE_SANDBOX", "auto")
    ids = [c.id for c in runner.select_checks(loop_command_subject("true"))
           if not c.id.startswith("loop.corpus.")][:2]
    assert ids
    doc = json.dumps({"unsupported": {i: "SEEN" for i in ids}})
    command = f"printf '%s\\n' {shlex.quote(doc)} | sed \"s/SEEN/mode $TOOLUSE_SANDBOX/g\""
    summary = runner.run([loop_command_subject(command, name=f"loop-{tmp_path.name}")],
                         checks=ids, jobs=1, tmp_root=tmp_path,
                         confinement=Confinement(mode="off"))
    assert [(r.outcome.value, r.message) for r in summary.results] == [
        ("skip", "the loop declares this scenario unsupported: mode off")] * len(ids)


def test_launch_takes_one_spec_value() -> None:
    """Issue 38: launch() took 21 keywords and **popen; the recipes are now a LaunchSpec."""
    import inspect

    assert list(inspect.signature(launch).parameters) == ["spec"]
