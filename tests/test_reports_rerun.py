"""The rerun command of a result (conformance.reports.rerun) and relativized reproducers."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conformance.reports.rerun import rerun_command, run_options
from conformance.reproducers import HOME, WORKDIR, materialize, relativize, relativize_value
from conformance.results import CheckResult, Outcome

CMD = {"name": "cmd:tool.py", "family": "bash", "tool_type": "bash_20250124",
       "spec": "cmd:/venv/bin/python /src/tool.py"}


@pytest.mark.parametrize("argv, kept", [
    (["run", "--bash-cmd", "x", "--out", "o", "--check", "a.b", "c.d", "--timeout", "5"],
     ["--timeout", "5"]),
    (["run", "--out=o", "--check=a.b", "--strict", "--json", "--memory-limit", "1G"],
     ["--strict", "--memory-limit", "1G"]),
    (["run", "--ch", "a.b", "--tim", "4", "--expected-failures", "f.txt", "--jobs", "2"],
     ["--tim", "4", "--jobs", "2"]),  # argparse's abbreviations are understood
    (["run", "--editor", "x:y", "--name", "n", "--editor-max-characters", "9"],
     ["--editor-max-characters", "9"]),
])
def test_run_options_drop_output_check_and_subject_options(argv: list[str],
                                                           kept: list[str]) -> None:
    assert run_options(argv) == kept


def test_a_command_subject_reruns_alone_with_the_run_options() -> None:
    run = {"argv": ["run", "--bash-cmd", "python tool.py", "--bash", "reference-bash",
                    "--timeout", "5", "--out", "r", "--check", "bash.*"], "strict": False}
    line = rerun_command(run, CMD, "bash.session.cwd_persists")
    assert shlex.split(line) == ["tooluse", "run", "--bash-cmd", "/venv/bin/python /src/tool.py",
                                 "--timeout", "5", "--check", "bash.session.cwd_persists"]


def test_names_tool_types_and_references() -> None:
    run = {"argv": [], "strict": True}
    named = {**CMD, "name": "my tool", "tool_type": "bash_20241022"}
    assert shlex.split(rerun_command(run, named, "x.y")) == [
        "tooluse", "run", "--bash-cmd", "/venv/bin/python /src/tool.py", "--bash-type",
        "bash_20241022", "--name", "my tool", "--strict", "--check", "x.y"]
    from conformance.reference import REFERENCE_SUBJECTS

    ref = REFERENCE_SUBJECTS["reference-bash"]
    record = {"name": "reference-bash", "family": "bash", "tool_type": ref.tool_type,
              "spec": ref.spec}
    assert rerun_command({"argv": []}, record, "x.y") == (
        "tooluse run --bash reference-bash --check x.y")


def test_other_families_keep_the_runs_subject_options() -> None:
    worker = {"name": "w", "family": "worker", "tool_type": "", "spec": "m:serve"}
    run = {"argv": ["run", "--worker", "m:serve", "--out", "o"]}
    assert rerun_command(run, worker, "worker.x") == "tooluse run --worker m:serve --check worker.x"
    assert rerun_command({"argv": ["pytest"]}, worker, "worker.x") == ""


def test_relativize_names_the_case_directory_and_leaves_others(tmp_path: Path) -> None:
    w = tmp_path / "tooluse-editor.x-ab12_cd"
    r = CheckResult("editor.x", "s", "t", "editor", "MUST", Outcome.FAIL,
                    message=f"{w}/a.txt was changed; {w}x is another directory.",
                    received={"text": f"cat '{w}/b'", "home": f"{tmp_path}/tooluse-home-k1/home/.h"},
                    reproducer=[{"command": "view", "path": f"{w}/a.txt"},
                                {"command": "view", "path": str(w)}],
                    observed=f"wrote {w}/c")
    got = relativize(r, w)
    assert got.message == f"{WORKDIR}/a.txt was changed; {w}x is another directory."
    assert got.received == {"text": f"cat '{WORKDIR}/b'", "home": f"{HOME}/.h"}
    assert got.reproducer == [{"command": "view", "path": f"{WORKDIR}/a.txt"},
                              {"command": "view", "path": WORKDIR}]
    assert got.observed == f"wrote {WORKDIR}/c" and r.message.startswith(str(w))  # a copy
    assert materialize(got.reproducer, "/tmp/replay") == [
        {"command": "view", "path": "/tmp/replay/a.txt"}, {"command": "view", "path": "/tmp/replay"}]
    assert relativize_value(["no paths", 3, None], w) == ["no paths", 3, None]
