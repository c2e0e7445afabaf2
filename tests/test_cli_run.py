"""`tooluse run` and `tooluse checks` end to end (exit codes, reports, usage errors)."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from conformance.catalog import CATALOG
from conformance.cli import main

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken"
NODE_SUBJECT = ROOT / "tests" / "subjects" / "bash_tool.mjs"


# `tooluse run --all-reference --out DIR` (every reference subject passes, the reports are written)
# is checked on the tests' one whole reference run: tests/test_reports_reference_baseline.py.


def test_a_failing_must_check_exits_1_with_the_reproducer(capsys) -> None:
    code = main(["run", "--bash", f"{BROKEN}/bash_never_flags.py:factory",
                 "--check", "bash.errors.failure_flagged", "--timeout", "3"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  MUST   bash.errors.failure_flagged" in out
    assert '{"command": "false"}' in out and "received:" in out and "documented:" in out
    assert "FAIL: 0 passed, 1 failed" in out


def test_should_failures_count_only_with_strict(capsys) -> None:
    args = ["run", "--bash", f"{BROKEN}/bash_no_truncation.py:factory",
            "--check", "bash.output.large_output_truncated", "--timeout", "3"]
    assert main(args) == 0
    assert "(not blocking)" in capsys.readouterr().out
    assert main([*args, "--strict"]) == 1


def test_json_lines_output(capsys) -> None:
    assert main(["run", "--bash", "reference-bash", "--check", "bash.session.*", "--json",
                 "--timeout", "3"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["check_id"] for r in rows} == {i for i in CATALOG if i.startswith("bash.session.")}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.slow
def test_a_node_subject_passes_every_bash_check(capsys) -> None:
    code = main(["run", "--bash-cmd", f"node {NODE_SUBJECT}", "--timeout", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    n = sum(1 for i in CATALOG if i.startswith("bash."))
    assert f"cmd:bash_tool.mjs (bash_20250124): {n} checks: {n} pass" in out


@pytest.mark.parametrize("argv, words", [
    (["run"], "no subject to run"),
    (["run", "--bash", "tooluse_absent_mod:factory"], "no module named"),
    (["run", "--bash", "reference-bash", "--bash-type", "bash_20990101"], "bash_20250124"),
    (["run", "--bash", "reference-bash", "--check", "nothing.*"], "matches no check"),
    (["run", "--bash", "reference-bash", "--timeout", "0"], "positive"),
    (["run", "--bash", "reference-bash", "--check", "editor.*"], "no check applies"),
    (["run", "--bash-cmd", "node 'x"], "does not parse"),
    (["run", "--editor", "reference-bash"], "not an editor"),
    (["run", "--bash", "reference-bash", "--expected-failures", "x.txt"], "needs --out"),
    (["checks", "--family", "nope"], "bash"),
    (["checks", "--tool-type", "bash_20990101"], "bash_20250124"),
])
def test_usage_errors_exit_2_with_one_line(argv: list[str], words: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_checks_listing(capsys) -> None:
    assert main(["checks", "--family", "bash", "--tool-type", "bash_20241022"]) == 0
    out = capsys.readouterr().out
    assert "bash.session.cwd_persists  [MUST]" in out
    assert "source: Handle errors — https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool (Korean: " in out
    assert main(["checks", "--json", "--family", "bash"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == {i for i in CATALOG if i.startswith("bash.")}
    assert set(rows[0]) == {"id", "family", "severity", "applies_to", "source", "statement", "basis"}
    assert rows[0]["basis"]["language"] == "Korean" and rows[0]["basis"]["english"]


def test_progress_goes_to_stderr_and_quiet_silences_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26: ``--progress lines`` prints a line per finished check on stderr (stdout keeps
    the summary), ``-q`` prints none, and neither is part of the rerun line."""
    argv = ["run", "--bash", "reference-bash", "--check", "bash.session.cwd_persists",
            "bash.session.env_persists"]
    assert main([*argv, "--progress", "lines"]) == 0
    out, err = capsys.readouterr()
    assert sorted(ln.split()[3] for ln in err.splitlines() if ln.startswith("[")) == [
        "bash.session.cwd_persists", "bash.session.env_persists"], err
    assert "PASS: 2 passed" in out and "[1/2]" not in out
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().err == ""
    from conformance.reports.rerun import rerun_line
    from conformance.run import Run

    run = Run.from_argv(["run", "--bash", "reference-bash", "--progress", "lines", "-q",
                         "--timeout", "5"])
    assert rerun_line(run, "reference-bash", "x.y") == (
        "tooluse run --bash reference-bash --timeout 5 --check x.y")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_shown_once_with_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--out`` the reports listener shows no progress of its own: one line per check in
    ``lines`` mode, no rewritten bar drawn over it on a terminal (it was, and in CI logs every
    counter line came twice)."""
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["run", "--bash", "reference-bash", "--check", "bash.session.cwd_persists",
                 "bash.session.env_persists", "--out", str(tmp_path / "out"),
                 "--progress", "lines"]) == 0
    capsys.readouterr()
    text = err.getvalue()
    assert "\r" not in text and "\x1b" not in text, repr(text)
    lines = [ln for ln in text.splitlines() if ln.startswith("[")]
    assert sorted(ln.split()[3] for ln in lines) == [
        "bash.session.cwd_persists", "bash.session.env_persists"], text
    assert text.endswith("\n")


def test_tooluse_fixtures_lists_the_corpus_with_what_each_shows(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26, point 5: a listing to find a cassette by need (pause_turn, streams, errors,
    client and server tools together), names a user passes to serve/replay/mock as they are."""
    from simulator.cassette import default_fixtures_root, resolve_fixture

    assert main(["fixtures", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(list(default_fixtures_root().rglob("*.json")))
    by = {r["name"]: r for r in rows}
    pause = by["code_execution/code_execution_20250825/pause_turn_streamed.json"]
    assert {"stream", "pause_turn"} <= set(pause["features"]) and pause["title"]
    assert "mixed" in by["mixed/code_execution_20250825/deferred_server_result.json"]["features"]
    assert "error" in by["api_errors/messages/http_429_rate_limit.json"]["features"]
    assert by["bash/bash_20250124/one_command.json"]["features"] == []
    assert all(resolve_fixture(r["name"]).is_file() for r in rows)
    assert main(["fixtures", "--with", "pause_turn", "--with", "stream"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [ln.split()[0] for ln in out if ln.endswith("]")]
    assert names and all("pause_turn" in by[n]["features"] and "stream" in by[n]["features"]
                         for n in names)
    assert main(["fixtures", "--family", "nope"]) == 2
