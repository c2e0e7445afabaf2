"""Flaky is a verdict (issue 36): a failure whose reproducer does not reproduce, and that passes
when its check is run again alone, is ``flaky``: shown in every report with both observations (the
failing one, with its reproducer, and the passing re-run), not blocking by default, blocking with
``--fail-on-flaky``. A failure every time stays a FAIL."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import runner
from conformance.cli import main
from conformance.results import NOT_REPRODUCED, VERIFIED, CheckResult, Outcome, rejudged_note
from conformance.subjects import factory_subject

BROKEN = Path(__file__).resolve().parent / "broken"
CHECK = "bash.session.cwd_persists"


def _run(name: str, **kw: object) -> runner.RunSummary:
    subject = factory_subject(f"{BROKEN / name}.py:factory", family="bash", name=name)
    return runner.run([subject], checks=[CHECK], timeout=3.0, jobs=2, **kw)  # type: ignore[arg-type]


def test_a_failure_once_per_run_is_flaky_not_fail() -> None:
    summary = _run("once_per_run_forgets_cwd")
    [r] = summary.results
    assert r.outcome is Outcome.FLAKY, (r.outcome, r.message, r.rejudged)
    assert r.reproduced == NOT_REPRODUCED and r.reproducer  # the failing observation, kept
    assert r.rejudged is not None and r.rejudged["by"] == "rerun"
    assert r.rejudged["repeated"] is False
    assert r.rejudged["first"]["outcome"] == "fail" and r.rejudged["rerun"]["outcome"] == "pass"
    note = rejudged_note(r.rejudged)
    assert note.startswith("flaky: fail in the run") and "re-run alone after the run: pass" in note
    assert summary.exit_code == 0 and summary.blocking() == []  # not blocking by default


def test_fail_on_flaky_makes_it_block() -> None:
    summary = _run("once_per_run_forgets_cwd", fail_on_flaky=True)
    [r] = summary.results
    assert r.outcome is Outcome.FLAKY
    assert summary.blocking() == [r] and summary.exit_code == 1


@pytest.mark.parametrize("name", ["bash_forgets_cwd", "once_bash_forgets_cwd"])
def test_a_failure_every_time_stays_fail(name: str) -> None:
    """Always (its reproducer verified), or in every case's first instance (its reproducer does
    not reproduce, but the check run again alone fails again): a FAIL either way."""
    [r] = _run(name).results
    assert r.outcome is Outcome.FAIL, (r.message, r.rejudged)
    if r.reproduced == VERIFIED:
        assert r.rejudged is None
    else:
        assert r.rejudged is not None and r.rejudged["repeated"] is True
        assert rejudged_note(r.rejudged).endswith("the failure repeats")


def _flaky_record(subject: str = "s") -> CheckResult:
    return CheckResult(CHECK, subject, "bash_20250124", "bash", "MUST", Outcome.FLAKY,
                       message="the working directory did not persist", reproducer=[
                           {"command": "cd x"}], reproduced=NOT_REPRODUCED,
                       rejudged={"by": "rerun", "repeated": False,
                                 "first": {"outcome": "fail", "duration": 1.0,
                                           "message": "the working directory did not persist",
                                           "misses": []},
                                 "rerun": {"outcome": "pass", "duration": 0.5, "message": "",
                                           "misses": []}})


@pytest.mark.parametrize("fail_on_flaky", [False, True])
def test_every_report_format_shows_flaky_with_both_observations(
        tmp_path: Path, fail_on_flaky: bool) -> None:
    from conformance.reports import RunReports, load_results
    from conformance.reports.summary import print_summary
    from conformance.results import RunInfo, SubjectInfo

    info = RunInfo(subjects=[SubjectInfo("s", "bash", "bash_20250124", "cmd:tool")],
                   fail_on_flaky=fail_on_flaky, argv=["run", "--bash-cmd", "tool", "--name", "s"]
                   + (["--fail-on-flaky"] if fail_on_flaky else []))
    reports = RunReports(tmp_path, progress=False)
    reports.on_run_started(info)
    reports.on_check_finished(_flaky_record())
    reports.on_run_finished(complete=True)
    doc = load_results(tmp_path / "results.json").doc  # validates against the schema
    assert doc["summary"]["flaky"] == 1 and doc["summary"]["fail"] == 0
    assert doc["summary"]["blocking"] == int(fail_on_flaky)
    assert doc["summary"]["verdict"] == ("fail" if fail_on_flaky else "pass")
    assert reports.exit_code == int(fail_on_flaky)
    both = ["fail in the run", "re-run alone after the run: pass"]
    junit = ET.fromstring((tmp_path / "junit.xml").read_text())
    [case] = junit.iter("testcase")
    assert case.get("status") == "flaky"
    if fail_on_flaky:
        failure = case.find("failure")
        assert failure is not None and failure.get("type") == "flaky"
        text = failure.text or ""
    else:
        assert case.find("failure") is None and case.find("skipped") is None
        assert junit.get("failures") == "0"
        text = case.findtext("system-out") or ""
    assert all(w in text for w in both) and "--fail-on-flaky" in text, text
    assert '"command": "cd x"' in text  # the failing observation's reproducer
    md = (tmp_path / "report.md").read_text()
    assert "### Flaky (1)" in md and all(w in md for w in both)
    assert ("❌" in md) is fail_on_flaky
    html = (tmp_path / "report.html").read_text()
    assert 'id="flaky"' in html and 'class="cell flaky"' in html
    assert all(w in html for w in both)

    plan = runner.plan_run([], fail_on_flaky=fail_on_flaky)
    plan.info = info
    summary = runner.RunSummary(plan, [_flaky_record()], 1.0, fail_on_flaky=fail_on_flaky)
    import io

    out = io.StringIO()
    print_summary(summary, out)
    said = out.getvalue()
    assert said.startswith("FLAKY MUST") and all(w in said for w in both), said
    assert ("(not blocking)" in said) is not fail_on_flaky
    assert ("FAIL:" in said) is fail_on_flaky and "1 flaky" in said
    if fail_on_flaky:
        assert "--fail-on-flaky" in said  # the rerun line keeps the flag


def test_baselines_and_diff_handle_flaky(tmp_path: Path) -> None:
    from conformance.reports import apply_baseline, parse_baseline
    from conformance.reports.diff_results import _kind

    flaky = _flaky_record()
    listed = parse_baseline(f"s:{CHECK}\n")
    v = apply_baseline([flaky], listed)
    assert v.ok and v.known == [] and v.stale == []  # not a failure, and the entry not stale
    v = apply_baseline([flaky], parse_baseline(""), fail_on_flaky=True)
    assert not v.ok and v.new == [flaky]
    v = apply_baseline([flaky], listed, fail_on_flaky=True)
    assert v.ok and v.known == [flaky]
    assert _kind("pass", "flaky") == "flaky" and _kind("flaky", "pass") == "fixed"
    assert _kind("flaky", "fail") == "regression"
    assert _kind("pass", "flaky", flaky_fails=True) == "regression"


def test_the_flag_reaches_results_and_rerun_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--bash", f"{BROKEN / 'once_per_run_forgets_cwd'}.py:factory",
                 "--check", CHECK, "--timeout", "3", "--out", str(tmp_path / "out"), "-q"])
    printed = capsys.readouterr().out
    assert code == 0, printed  # flaky alone: exit 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["outcome"] for r in doc["results"]] == ["flaky"]
    assert doc["run"]["fail_on_flaky"] is False and "FLAKY" in printed
    code = main(["run", "--bash", f"{BROKEN / 'once_per_run_forgets_cwd'}.py:factory",
                 "--check", CHECK, "--timeout", "3", "--out", str(tmp_path / "out2"), "-q",
                 "--fail-on-flaky"])
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "rerun: tooluse run" in printed and "--fail-on-flaky" in printed


def test_matrix_cells_say_flaky_and_not_run(tmp_path: Path) -> None:
    """The matrix keeps both verdicts as cells of their own: flaky (with both observations and
    the rerun line) counted where the check applies but never as a failure; not-run left out of
    the review counts."""
    from conformance.matrix.config import SubjectEntry
    from conformance.matrix.execute import ColumnRun
    from conformance.matrix.model import build_matrix, validate_matrix
    from conformance.matrix.render_html import render_html
    from conformance.matrix.render_md import render_markdown
    from conformance.reports.results_file import new_document, result_record
    from conformance.results import RunInfo, SubjectInfo

    columns = []
    for name, outcome in (("racy", Outcome.FLAKY), ("dead", Outcome.NOT_RUN)):
        doc = new_document(RunInfo(subjects=[SubjectInfo(name, "bash", "bash_20250124",
                                                         f"cmd:{name}")],
                                   argv=["run", "--bash-cmd", name, "--name", name]))
        r = (_flaky_record(subject=name) if outcome is Outcome.FLAKY else CheckResult(
            CHECK, name, "bash_20250124", "bash", "MUST", outcome,
            message="the subject did not start: boom"))
        doc["results"].append(result_record(r))
        doc["run"]["complete"] = True
        columns.append(ColumnRun(SubjectEntry(name, "bash", "bash_20250124", command=name),
                                 "ran", results=doc))
    matrix = build_matrix(columns, out_root=tmp_path, config="m.toml", generated_at="now",
                          duration=1.0, patterns=[CHECK])
    validate_matrix(matrix)
    [row] = matrix["checks"]
    racy, dead = row["cells"]["racy"], row["cells"]["dead"]
    assert racy["outcome"] == "flaky" and "re-run alone after the run: pass" in racy["rejudged"]
    assert racy["reproducer"] and racy["rerun"].endswith(f"--check {CHECK}")
    assert dead["outcome"] == "not-run" and "did not start" in dead["message"]
    assert row["counts"]["fail"] == 0 and row["counts"]["applies"] == 1 and not row["review"]
    md = render_markdown(matrix)
    assert f"| `{CHECK}` | MUST | flaky ⏱ | not run | 0/1 |" in md, md
    assert f"- FLAKY `{CHECK}` (MUST)" in md
    html = render_html(matrix)
    assert "<td class=flaky><details><summary>flaky</summary>" in html
    assert "<td class=not-run><details><summary>not run</summary>" in html
