"""``tooluse init`` writes a starter subject that passes, and never overwrites a file (issue 41).

The starters (``conformance/starters/``) are the bash tool docs' own ``BashSession`` and the text
editor docs' sample handler (``text_editor_20250728``, on bytes), each in Python and Node,
completed as the docs' prose asks; ``tests/test_conformant_bash.py`` holds the bash ones to every
MUST check (``tests/conformant/bash_seed003_session.*`` run them), and this module the editor
ones (the whole editor family, model check included, runs in seconds). Here too: they import
only the standard library, ``tooluse init`` writes them with the command that judges them, and a
written starter passes as written."""

from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.cli import main
from conformance.cli.init import STARTERS, starter_text
from conformance.results import Outcome
from conformance.subjects import command_subject, factory_subject

ROOT = Path(__file__).resolve().parent.parent


def test_every_python_starter_imports_only_the_standard_library() -> None:
    for (tool, lang), name in STARTERS.items():
        if lang != "python":
            continue
        tree = ast.parse(starter_text(tool, lang))
        roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}
        roots |= {n.module.split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        assert roots <= set(sys.stdlib_module_names) | {"__future__"}, (name, roots)


def test_init_writes_the_starter_and_the_command_that_judges_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "bash"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "bash_tool.py").read_text(encoding="utf-8") == starter_text("bash", "python")
    assert "tooluse run --bash bash_tool.py:factory" in out
    assert main(["init", "bash", "--lang", "node", "--out", "tool.mjs"]) == 0
    assert "tooluse run --bash-cmd 'node tool.mjs'" in capsys.readouterr().out
    assert (tmp_path / "tool.mjs").read_text(encoding="utf-8") == starter_text("bash", "node")


def test_init_never_overwrites_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bash_tool.py").write_text("mine\n", encoding="utf-8")
    assert main(["init", "bash"]) == 2
    assert "never overwrites" in capsys.readouterr().err
    assert (tmp_path / "bash_tool.py").read_text(encoding="utf-8") == "mine\n"
    assert main(["init", "bash", "--out", str(tmp_path / "no" / "such" / "dir.py")]) == 2
    assert "is not a directory" in capsys.readouterr().err


@pytest.mark.slow(30)
def test_a_written_python_starter_passes_every_must_check_as_written(tmp_path: Path) -> None:
    path = tmp_path / "bash_tool.py"
    path.write_text(starter_text("bash", "python"), encoding="utf-8")
    subject = factory_subject(f"{path}:factory", family="bash", name="starter")
    summary = runner.run([subject], checks=["bash.session.*", "bash.output.*", "bash.restart.*",
                                            "bash.errors.failure_flagged"], timeout=3.0, jobs=4)
    assert summary.results
    bad = {r.check_id: r.message[:200] for r in summary.results
           if r.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.NOT_RUN)
           and CATALOG[r.check_id].severity is Severity.MUST}
    assert bad == {}


def test_the_starters_are_in_the_package_the_wheel_ships() -> None:
    assert {tool for tool, _ in STARTERS} == {"bash", "editor"}
    assert {lang for _, lang in STARTERS} == {"python", "node"}
    assert len(STARTERS) == 4  # every tool in every language
    for name in STARTERS.values():
        assert (ROOT / "conformance" / "starters" / name).is_file()
    # the wheel carries the package directory whole (tests/test_wheel.py checks the built wheel)


def test_init_writes_the_editor_starters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "editor"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "editor_tool.py").read_text(encoding="utf-8") == starter_text("editor",
                                                                                   "python")
    assert "a text editor tool (text_editor_20250728) (python)" in out
    assert ("tooluse run --editor editor_tool.py:factory --editor-type text_editor_20250728"
            in out)
    assert main(["init", "editor", "--lang", "node"]) == 0
    out = capsys.readouterr().out
    assert "tooluse run --editor-cmd 'node editor_tool.mjs' --editor-type text_editor_20250728" in out
    assert (tmp_path / "editor_tool.mjs").read_text(encoding="utf-8") == starter_text("editor",
                                                                                    "node")


def _editor_failures(subject: object) -> dict[str, str]:
    """Every editor check (the model check included) on the subject, configured with
    max_characters so that its check runs too: what did not pass, MUST or SHOULD."""
    summary = runner.run([subject], checks=["editor.*"], timeout=3.0, jobs=2)  # type: ignore[list-item]
    assert len(summary.results) >= 35
    assert "editor.view.max_characters_truncates" in {r.check_id for r in summary.results}
    return {r.check_id: f"{r.outcome.value}: {r.message[:300]}" for r in summary.results
            if r.outcome is not Outcome.PASS
            and CATALOG[r.check_id].severity in (Severity.MUST, Severity.SHOULD)}


@pytest.mark.slow(10)
def test_a_written_python_editor_starter_passes_every_editor_check(tmp_path: Path) -> None:
    path = tmp_path / "editor_tool.py"
    path.write_text(starter_text("editor", "python"), encoding="utf-8")
    subject = factory_subject(f"{path}:factory", family="editor",
                              tool_type="text_editor_20250728", name="starter",
                              options={"max_characters": 2000})
    assert _editor_failures(subject) == {}


@pytest.mark.slow(15)
@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_a_written_node_editor_starter_passes_every_editor_check(tmp_path: Path) -> None:
    path = tmp_path / "editor_tool.mjs"
    path.write_text(starter_text("editor", "node"), encoding="utf-8")
    subject = command_subject(f"node {path}", family="editor", tool_type="text_editor_20250728",
                              name="starter-node", options={"max_characters": 2000})
    assert _editor_failures(subject) == {}


@pytest.mark.parametrize("name", ["editor_tool.mjs", "bash_tool.mjs"])
def test_a_node_starter_imports_only_node_builtins(name: str) -> None:
    text = (ROOT / "conformance" / "starters" / name).read_text(encoding="utf-8")
    modules = re.findall(r'^\s*(?:import|from)\b[^"\n]*?"([^"]+)"|from\s+"([^"]+)"', text, re.M)
    found = {a or b for a, b in modules}
    assert found and all(m.startswith("node:") for m in found), found
