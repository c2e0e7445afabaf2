"""Issue 13, point 5: command subjects as a new user declares them (venvs, labels, --name, typos)
and the one-line rerun command every report prints."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import build_parser, main
from conformance.errors import UsageError
from conformance.reports import validate_document
from conformance.run import Run, build_subjects
from conformance.subjects.case import CaseSettings
from conformance.subjects.spec import command_label, command_subject, preflight

#: A bash tool that answers every input with the same text: it fails bash.session.cwd_persists.
WRONG_TOOL = """
import json, sys
for line in sys.stdin:
    print(json.dumps({"content": "nothing to see", "is_error": False}), flush=True)
"""

#: A tool that tells which interpreter runs it (sys.prefix is the venv's when run through one).
PREFIX_TOOL = """
import json, sys
for line in sys.stdin:
    print(json.dumps({"content": sys.prefix, "is_error": False}), flush=True)
"""


def _args(argv: list[str]) -> Any:
    return Run.from_args(build_parser().parse_args(["run", *argv]), {})


@pytest.fixture
def open_subject(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    sessions = []

    def start(subject: Any, timeout: float = 5.0) -> Any:
        workdir = Path(tempfile.mkdtemp(dir=tmp_path)).resolve()
        s = subject.open(workdir, CaseSettings(timeout=timeout))
        sessions.append(s)
        return s

    yield start
    for s in sessions:
        s.close()


# --- 1. a venv's interpreter is kept -----------------------------------------------------------


def test_a_venv_interpreter_is_not_resolved_to_the_base_one(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             open_subject: Any) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n"
                                     "include-system-site-packages = false\n")
    python = venv / "bin" / "python"
    python.symlink_to(os.path.realpath(sys.executable))
    (tmp_path / "tool.py").write_text(PREFIX_TOOL)
    monkeypatch.chdir(tmp_path)
    subject = command_subject(f"{python} tool.py", family="bash")
    # The interpreter word is left as given; the script is made absolute (the case runs elsewhere).
    assert shlex.split(subject.spec) == [str(python), str(tmp_path / "tool.py")]
    assert subject.name == "cmd:tool.py"
    s = open_subject(subject)
    assert s.call({"command": "true"}).text == str(venv)  # the venv's interpreter ran it


def test_relative_words_are_made_absolute_without_resolving_symlinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "tool.js").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    spec = command_subject("node link/tool.js --x", family="bash").spec
    assert spec == f"node {tmp_path}/link/tool.js --x"


# --- 2. labels and --name ------------------------------------------------------------------------


@pytest.mark.parametrize("command, label", [
    ("/x/venv/bin/python tool.py", "cmd:tool.py"),
    ("python3 -m mypkg.bash_tool --fast", "cmd:mypkg.bash_tool"),
    ("node tests/subjects/bash_tool.mjs", "cmd:bash_tool.mjs"),
    ("uv run --with anthropic tools/editor.py", "cmd:editor.py"),
    ("FOO=1 python3 t.py", "cmd:t.py"),
    ("my-bash --fast data.json", "cmd:my-bash"),
    ("python3 -c 'print(1)'", "cmd:python3"),
    ("npx @acme/bash-tool", "cmd:bash-tool"),
])
def test_a_command_subject_gets_a_readable_default_label(command: str, label: str) -> None:
    assert command_label(shlex.split(command)) == label


def test_name_labels_the_subject_given_just_before_it() -> None:
    subjects = build_subjects(_args([
        "--bash-cmd", "python3 -c 'x'", "--name", "mine", "--bash-cmd", "python3 -c 'y'",
        "--editor", "reference-editor-20250728", "--name", "ref-ed",
        "--bash", "reference-bash"]))
    assert [s.name for s in subjects] == ["reference-bash", "mine", "cmd:python3", "ref-ed"]


def test_colliding_default_labels_stay_unique() -> None:
    subjects = build_subjects(_args(["--bash-cmd", "python3 a/tool.py", "--bash-cmd",
                                     "python3 b/tool.py"]))
    assert [s.name for s in subjects] == ["cmd:tool.py", "cmd:tool.py#2"]


@pytest.mark.parametrize("argv, words", [
    (["--name", "x", "--bash", "reference-bash"], "after the subject"),
    (["--bash", "reference-bash", "--name", "a", "--name", "b"], "already named"),
    (["--bash", "reference-bash", "--name", " "], "printable"),
])
def test_name_misuse_is_a_usage_error(argv: list[str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        build_subjects(_args(argv))


# --- 3. a mistyped command fails up front --------------------------------------------------------


@pytest.mark.parametrize("command, words", [
    ("nosuchcmd-tooluse", ["nosuchcmd-tooluse", "127", "not found"]),
    ("python3 nosuch_tool.py", ["nosuch_tool.py", "does not exist"]),
    ("sh -c 'python3 /nonexistent/tool.py'", ["status 2", "No such file"]),
])
def test_a_command_that_cannot_start_is_a_usage_error_before_any_case(
        command: str, words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["run", "--bash-cmd", command, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert not (out / "results.json").exists()  # no check ran


def test_a_valid_command_passes_the_preflight_at_small_cost() -> None:
    subjects = [command_subject(f"{shlex.quote(sys.executable)} -c {shlex.quote(WRONG_TOOL)}",
                                family="bash"),
                command_subject("cat", family="editor"),
                command_subject("sh -c 'exit 3'", family="bash")]  # exits, but says nothing
    started = time.monotonic()
    preflight(subjects, CaseSettings(), window=0.5)
    assert time.monotonic() - started < 30  # subjects are watched together, not one by one


# --- 4 and 5. reproducers without dead paths; a rerun command that round-trips -------------------


@pytest.fixture
def failing_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wrong_tool.py").write_text(WRONG_TOOL)
    out = tmp_path / "out"
    argv = ["run", "--bash-cmd", f"{shlex.quote(sys.executable)} wrong_tool.py", "--name",
            "wrong tool", "--bash", "reference-bash", "--check", "bash.session.cwd_persists",
            "bash.session.files_persist", "--timeout", "3", "--out", str(out)]
    code = main(argv)
    printed = capsys.readouterr().out
    return {"code": code, "out": out, "printed": printed, "tmp": tmp_path}


def test_every_report_prints_the_rerun_command(failing_run: dict[str, object]) -> None:
    assert failing_run["code"] == 1
    printed = str(failing_run["printed"])
    reruns = [line.split("rerun: ", 1)[1] for line in printed.splitlines() if "rerun: " in line]
    assert reruns, printed
    cwd = next(r for r in reruns if r.endswith("--check bash.session.cwd_persists"))
    assert "reference-bash" not in cwd and "--out" not in cwd and "--timeout 3" not in cwd  # default
    assert "--name 'wrong tool'" in cwd
    out = Path(str(failing_run["out"]))
    for name in ("report.md", "report.html", "junit.xml"):
        text = (out / name).read_text()
        assert "tooluse run --bash-cmd" in text and "--check bash.session.cwd_persists" in text, name


def test_the_rerun_command_selects_exactly_that_check(failing_run: dict[str, object],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    printed = str(failing_run["printed"])
    line = next(ln.split("rerun: ", 1)[1] for ln in printed.splitlines()
                if ln.strip().startswith("rerun:") and "cwd_persists" in ln)
    words = shlex.split(line)
    assert words[:2] == ["tooluse", "run"]
    os.chdir("/")  # paths in it are absolute: it works from anywhere
    assert main([*words[1:], "--json"]) == 1
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [(r["subject"], r["check_id"], r["outcome"]) for r in rows] == [
        ("wrong tool", "bash.session.cwd_persists", "fail")]


def test_reproducers_and_messages_name_no_deleted_directory(
        failing_run: dict[str, object]) -> None:
    doc = json.loads((Path(str(failing_run["out"])) / "results.json").read_text())
    text = json.dumps(doc["results"])
    assert "tooluse-run-" not in text and "$TOOLUSE_WORKDIR" in text, text[:2000]


# --- issue 26, point 1: a module:attr subject imports from the user's directory ----------------

#: A package a user keeps next to where they run ``tooluse``: a bash tool that forgets its cwd.
MYTOOLS_BASH = """
def make_bash(workdir):
    def handler(tool_input):
        return "nothing to see"
    return handler
"""


def test_a_module_subject_and_its_rerun_line_run_from_the_users_directory(
        tmp_path: Path) -> None:
    """`tooluse run --bash mytools.bash_tool:make_bash` in the directory holding `mytools/`
    imports it (as `python -m`, pytest's rootdir and `tooluse matrix` do), and the rerun line it
    prints runs as printed from there. Run through the installed console script, not in-process:
    pytest's own sys.path would hide a missing entry."""
    user = tmp_path / "project"
    (user / "mytools").mkdir(parents=True)
    (user / "mytools" / "__init__.py").write_text("")
    (user / "mytools" / "bash_tool.py").write_text(MYTOOLS_BASH)
    tooluse = str(Path(sys.executable).parent / "tooluse")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{Path(tooluse).parent}{os.pathsep}{env.get('PATH', '')}"  # as installed
    import subprocess

    first = subprocess.run(
        [tooluse, "run", "--bash", "mytools.bash_tool:make_bash", "--check",
         "bash.session.cwd_persists", "--timeout", "5"],
        cwd=user, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "no module named" not in first.stderr
    line = next(ln.split("rerun: ", 1)[1] for ln in first.stdout.splitlines() if "rerun: " in ln)
    again = subprocess.run(shlex.split(line), cwd=user, env=env, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "bash.session.cwd_persists" in again.stdout and "FAIL" in again.stdout.upper()


# --- issue 26, point 4: a subject that never started is one line and exit 2 -------------------

#: A tool that answers in its own shape (no "content"): it never gets past the readiness call.
OWN_SHAPE_TOOL = """
import json, sys
for line in sys.stdin:
    print(json.dumps({"output": "ok"}), flush=True)
"""


@pytest.mark.parametrize("kind", ["command", "factory"])
def test_a_subject_that_never_started_is_one_line_and_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        kind: str) -> None:
    monkeypatch.chdir(tmp_path)
    if kind == "command":
        (tmp_path / "own_shape.py").write_text(OWN_SHAPE_TOOL)
        argv = ["run", "--bash-cmd", f"{shlex.quote(sys.executable)} own_shape.py"]
        hint = ['has no "content"', '{"content": str | [blocks], "is_error": bool}']
    else:
        (tmp_path / "needs_config.py").write_text(
            "def make(workdir):\n    raise RuntimeError('no config file found')\n")
        argv = ["run", "--bash", "needs_config.py:make"]
        hint = ["no config file found"]
    code = main([*argv, "--timeout", "3", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2, captured
    # (a progress count may come first on a slow machine: a run past 5 s prints one)
    lines = [ln for ln in captured.err.splitlines() if ln.strip()
             and not ln.startswith(("tooluse run: [", "done: ["))]
    assert len(lines) == 1 and "did not start, so no check ran" in lines[0], captured.err
    assert all(h in lines[0] for h in hint), lines[0]
    assert "FAIL" not in captured.out and "rerun" not in captured.out, captured.out
    doc = json.loads((tmp_path / "out" / "results.json").read_text())  # the reports say it too
    assert doc["results"] and all("start" in r["message"] for r in doc["results"])
    # A case that never ran is not a failure (issue 36): not-run in every report, never fail.
    assert {r["outcome"] for r in doc["results"]} == {"not-run"}, doc["summary"]
    summary = doc["summary"]
    assert summary["fail"] == 0 and summary["blocking"] == 0, summary
    assert summary["not-run"] == len(doc["results"]) and summary["verdict"] == "incomplete"
    validate_document(doc)
    out = tmp_path / "out"
    junit = ET.fromstring((out / "junit.xml").read_text())
    assert junit.get("failures") == "0" and junit.get("errors") == str(len(doc["results"]))
    cases = junit.findall(".//testcase")
    assert cases and all(c.get("status") == "not-run" and c.find("failure") is None
                         and c.find("error") is not None for c in cases)
    md = (out / "report.md").read_text()
    assert "INCOMPLETE" in md and f"### Not run ({len(doc['results'])})" in md, md
    assert "### Failures" not in md and "❌" not in md, md
    html = (out / "report.html").read_text()
    assert 'id="not-run"' in html and 'class="cell not-run"' in html
    assert '<h2 id="failures">Failures' in html and "<p>No failures.</p>" in html


def test_start_failures_wait_for_a_start_and_become_not_run() -> None:
    """The runner's gate: a subject's start failures are held until it starts in another case
    (then they are failures, as they came) or the run ends (then each is not-run); the pytest
    plugin's report marks its items' results the same way."""
    from conformance.results import CheckResult, Outcome
    from conformance.runner import _StartGate, mark_not_run

    def r(subject: str, outcome: Outcome, message: str) -> CheckResult:
        return CheckResult("bash.x.y", subject, "bash_20250124", "bash", "MUST", outcome,
                           message=message)

    seen: list[CheckResult] = []
    gate = _StartGate(seen.append)
    gate(r("a", Outcome.FAIL, "the subject did not start: boom"))
    gate(r("b", Outcome.FAIL, "the subject did not start: boom"))
    assert seen == []  # held: nobody knows yet whether the case could ever run
    gate(r("a", Outcome.PASS, ""))
    assert [x.outcome for x in seen] == [Outcome.FAIL, Outcome.PASS]  # a started: a failure
    gate.close()
    assert [(x.subject, x.outcome) for x in seen[2:]] == [("b", Outcome.NOT_RUN)]
    marked = mark_not_run([r("a", Outcome.FAIL, "the subject did not start: x"),
                           r("a", Outcome.FAIL, "not met"),
                           r("b", Outcome.FAIL, "the subject did not answer its first call within 3 s")])
    assert [x.outcome for x in marked] == [Outcome.FAIL, Outcome.FAIL, Outcome.NOT_RUN]
