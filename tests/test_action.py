"""Issue 14, point 3: the GitHub Action (``action.yml``) and the script that holds its logic.

``action.yml`` only sets up Python, passes its inputs to ``scripts/ci_action.sh`` as environment
variables and uploads the reports; the tests below check that wiring, then run that same script
locally the way the action's step does (a fake ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT``)
against reference and broken subjects, checking exit codes, reports and the summary. The
installation step is exercised by the ``packaging`` test (a fresh venv, the package index).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.matrix.envs import find_uv

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "ci_action.sh"
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
BROKEN = ROOT / "tests" / "broken" / "bash_forgets_cwd.py"
COMMAND = f"{shlex.quote(sys.executable)} {ROOT / 'tests' / 'conformant' / 'slow_start_bash.py'}"
CHECK = "bash.session.cwd_persists"


def run_action(tmp_path: Path, *, install: bool = False, **inputs: str) -> dict[str, Any]:
    """The script as the action's step runs it, in ``tmp_path`` (the job's workspace)."""
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLUSE_", "GITHUB_"))}
    env.update(GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(output),
               SLOW_START_SECONDS="0", TOOLUSE_INSTALL="1" if install else "0")
    if not install:  # the suite is installed already: this interpreter's tooluse
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update({f"TOOLUSE_{k.upper()}": v for k, v in inputs.items()})
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    return {"proc": proc, "summary": summary.read_text() if summary.exists() else "",
            "outputs": dict(line.split("=", 1) for line in output.read_text().splitlines())
            if output.exists() else {}}


# --- action.yml: inputs reach the script, the script's results reach the job ---------------------

def test_the_action_is_composite_and_calls_the_script() -> None:
    runs = ACTION["runs"]
    assert runs["using"] == "composite"
    scripted = [s for s in runs["steps"] if "run" in s]
    assert len(scripted) == 1 and "scripts/ci_action.sh" in scripted[0]["run"]
    assert scripted[0]["shell"] == "bash" and scripted[0]["id"] == "run"
    upload = next(s for s in runs["steps"] if s.get("uses", "").startswith(
        "actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ inputs.reports }}"
    setup = next(s for s in runs["steps"] if s.get("uses", "").startswith(
        "actions/setup-python@"))
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"


def test_every_input_is_passed_to_the_script_and_read_there() -> None:
    env = next(s for s in ACTION["runs"]["steps"] if "run" in s)["env"]
    script = SCRIPT.read_text()
    passed = {re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", v).group(1)  # type: ignore[union-attr]
              for v in env.values() if v.startswith("${{ inputs.")}
    used_elsewhere = {"python-version", "artifact-name"}  # setup-python, upload-artifact
    assert passed | used_elsewhere == set(ACTION["inputs"])
    for name in env:
        assert name in script, f"{name} is passed by action.yml but never read by the script"
    for output in ACTION["outputs"]:
        assert f"echo \"{output}=" in script


# --- the script, run locally ----------------------------------------------------------------------

def test_a_conformant_factory_passes(tmp_path: Path) -> None:
    r = run_action(tmp_path, subject="reference-bash", tool_type="bash_20250124",
                   args=f"--check {CHECK}", name="ours")
    assert r["proc"].returncode == 0, r["proc"].stderr[-2000:]
    reports = tmp_path / "tooluse-reports"
    assert {p.name for p in reports.iterdir()} >= {"results.json", "junit.xml", "report.md",
                                                   "report.html"}
    assert r["summary"] == (reports / "report.md").read_text()  # appended as it is
    assert "PASS" in r["summary"] and "ours" in r["summary"]
    assert r["outputs"] == {"status": "0", "reports": "tooluse-reports"}
    assert "--bash reference-bash --bash-type bash_20250124" in r["proc"].stdout


def test_a_command_subject_is_run_as_a_command(tmp_path: Path) -> None:
    r = run_action(tmp_path, subject=COMMAND, tool_type="bash_20250124", args=f"--check {CHECK}",
                   out="reports/conformance")
    assert r["proc"].returncode == 0, r["proc"].stderr[-2000:]
    assert "--bash-cmd" in r["proc"].stdout
    assert (tmp_path / "reports" / "conformance" / "report.md").is_file()
    assert r["outputs"]["reports"] == "reports/conformance"


def test_a_failing_subject_fails_the_step_and_its_baseline_passes_it(tmp_path: Path) -> None:
    failing = run_action(tmp_path, subject=f"{BROKEN}:factory", tool_type="bash_20250124",
                         args=f"--check {CHECK}")
    assert failing["proc"].returncode == 1
    assert failing["outputs"]["status"] == "1"
    assert "FAIL" in failing["summary"] and CHECK in failing["summary"]

    baseline = tmp_path / "baseline.txt"
    baseline.write_text(f"{CHECK}  # known: tracked elsewhere\n")
    (tmp_path / "summary.md").unlink()
    known = run_action(tmp_path, subject=f"{BROKEN}:factory", tool_type="bash_20250124",
                       args=f"--check {CHECK}", expected_failures=str(baseline))
    assert known["proc"].returncode == 0, known["proc"].stderr[-2000:]
    assert (tmp_path / "tooluse-reports" / "baseline-verdict.json").is_file()


def test_strict_is_passed_on(tmp_path: Path) -> None:
    r = run_action(tmp_path, subject="reference-bash", tool_type="bash_20250124",
                   args=f"--check {CHECK}", strict="true")
    assert r["proc"].returncode == 0 and " --strict" in r["proc"].stdout


@pytest.mark.parametrize("inputs,words", [
    ({"subject": "", "tool_type": "bash_20250124"}, "the subject input is empty"),
    ({"subject": "reference-bash", "tool_type": ""}, "the tool-type input is empty"),
    ({"subject": "reference-bash", "tool_type": "web_search_20250305"},
     "neither a bash_* nor a text_editor_* tool type"),
    ({"subject": "reference-bash", "tool_type": "bash_20250124", "strict": "yes"},
     "strict is 'yes'"),
    ({"subject": "reference-bash", "tool_type": "bash_20250124",
      "expected_failures": "missing.txt"}, "'missing.txt' not found"),
])
def test_bad_inputs_fail_with_exit_2_and_say_so_in_the_summary(
        tmp_path: Path, inputs: dict[str, str], words: str) -> None:
    r = run_action(tmp_path, **inputs)
    assert r["proc"].returncode == 2
    assert words in r["proc"].stderr and words in r["summary"]
    assert r["summary"].startswith("### tooluse conformance: not run")
    assert r["outputs"] == {"status": "2"}


def test_a_usage_error_of_tooluse_is_exit_2_with_a_summary(tmp_path: Path) -> None:
    r = run_action(tmp_path, subject="nosuchmodule:factory", tool_type="bash_20250124")
    assert r["proc"].returncode == 2
    assert "nosuchmodule" in r["proc"].stderr
    assert "no report (exit 2)" in r["summary"]


# --- the installation step ------------------------------------------------------------------------

def _fresh_venv_with_pip(env_dir: Path) -> None:
    """A venv with pip and nothing else, as a runner's fresh Python has: seeded by uv (the test
    extra has it) from its cache in a tenth of a second, where ``ensurepip`` spent ~7 CPU-s
    (issue 21); else by ``venv``, without bytecode written ahead."""
    uv = find_uv()
    if uv is None:
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True,
                       env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        return
    subprocess.run([uv, "venv", "--quiet", "--seed", "--python", sys.executable, str(env_dir)],
                   check=True)


@pytest.mark.slow(35)
@pytest.mark.packaging
def test_the_script_installs_the_suite_into_a_fresh_interpreter(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    _fresh_venv_with_pip(env_dir)
    python = env_dir / "bin" / "python"
    work = tmp_path / "work"
    work.mkdir()
    r = run_action(work, install=True, subject="reference-bash", tool_type="bash_20250124",
                   args=f"--check {CHECK}", python=str(python), suite=str(ROOT),
                   pip_args="--no-compile")  # the pip-args input; no .pyc ahead (issue 21)
    assert r["proc"].returncode == 0, (r["proc"].stdout + r["proc"].stderr)[-3000:]
    assert (env_dir / "bin" / "tooluse").is_file()  # installed there, and that one ran
    assert "PASS" in r["summary"]
    shutil.rmtree(env_dir)  # ~100 MB: not left in pytest's kept temporary directories


def test_the_shard_input_runs_one_shard_and_the_shards_merge(tmp_path: Path) -> None:
    """``shard: K/N`` on each job of a job matrix; ``tooluse run merge`` joins the artifacts."""
    for k in (1, 2):
        r = run_action(tmp_path, subject="reference-bash", tool_type="bash_20250124",
                       args="--check bash.session.*_persists", shard=f"{k}/2", out=f"shard-{k}")
        assert r["proc"].returncode == 0, r["proc"].stderr[-2000:]
        assert f"--shard {k}/2" in r["proc"].stdout
    proc = subprocess.run([str(Path(sys.executable).parent / "tooluse"), "run", "merge",
                           "shard-1", "shard-2", "--out", "merged"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import json

    doc = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert {r["check_id"] for r in doc["results"]} == {"bash.session.cwd_persists",
                                                       "bash.session.env_persists"}
    bad = run_action(tmp_path, subject="reference-bash", tool_type="bash_20250124",
                     shard="first")
    assert bad["proc"].returncode == 2 and "give K/N" in bad["summary"]
