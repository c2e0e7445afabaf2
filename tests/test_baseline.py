"""Expected-failure baselines: known failures pass, new ones fail, stale entries fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_reports_sample import sample_results

from conformance.reports import BaselineError, apply_baseline, load_baseline, parse_baseline
from conformance.results import Outcome


def test_parse_entries_comments_and_subject_with_colons() -> None:
    b = parse_baseline("# known gaps\n\neditor.demo.view_line_numbers   # everywhere\n"
                       "pkg.mod:factory:editor.demo.undo_edit_refused\n")
    assert [(e.subject, e.check_id, e.line) for e in b.entries] == [
        (None, "editor.demo.view_line_numbers", 3),
        ("pkg.mod:factory", "editor.demo.undo_edit_refused", 4)]


@pytest.mark.parametrize(("text", "words"), [
    ("editor.demo.a editor.demo.b\n", "one entry per line"),
    (":editor.demo.a\n", "empty subject or check id"),
    ("subject:\n", "empty subject or check id"),
    ("notacheck\n", "is not a check id"),
    ("editor.demo.a\neditor.demo.a\n", "listed twice (first on line 1)"),
])
def test_parse_errors_name_line_and_fix(text: str, words: str) -> None:
    with pytest.raises(BaselineError, match=r"expected\.txt:\d+: ") as e:
        parse_baseline(text, "expected.txt")
    assert words in str(e.value)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="expected-failures file not found"):
        load_baseline(tmp_path / "nope.txt")


def test_known_failures_do_not_fail_the_run() -> None:
    b = parse_baseline("broken-editor:editor.demo.view_line_numbers\n"
                       "editor.demo.str_replace_multiple_matches\n"
                       "editor.demo.undo_edit_refused\n")
    v = apply_baseline(sample_results(), b)
    assert v.ok and v.exit_code == 0 and not v.new and not v.stale
    assert sorted(r.check_id for r in v.known) == ["editor.demo.str_replace_multiple_matches",
                                                   "editor.demo.undo_edit_refused",
                                                   "editor.demo.view_line_numbers"]


def test_new_failure_fails_the_run() -> None:
    b = parse_baseline("editor.demo.view_line_numbers\n")
    v = apply_baseline(sample_results(), b)
    assert not v.ok and v.exit_code == 1
    # the unlisted MUST failure and the harness error are new; the SHOULD one does not gate
    assert sorted(r.check_id for r in v.new) == ["editor.demo.str_replace_multiple_matches",
                                                 "editor.demo.undo_edit_refused"]
    assert any(line.startswith("  NEW   broken-editor:editor.demo.str_replace") for line in v.lines())


def test_strict_makes_should_failures_new() -> None:
    b = parse_baseline("editor.demo.view_line_numbers\neditor.demo.str_replace_multiple_matches\n"
                       "editor.demo.undo_edit_refused\n")
    assert apply_baseline(sample_results(), b).ok
    v = apply_baseline(sample_results(), b, strict=True)
    assert [r.check_id for r in v.new] == ["editor.demo.outside_workdir_refused"]


def test_entry_that_now_passes_is_stale_and_fails_the_run() -> None:
    b = parse_baseline("editor.demo.view_line_numbers\neditor.demo.str_replace_multiple_matches\n"
                       "editor.demo.undo_edit_refused\n"
                       "reference-editor:editor.demo.view_line_numbers\n")
    v = apply_baseline(sample_results(), b)
    assert [str(e) for e in v.stale] == ["reference-editor:editor.demo.view_line_numbers"]
    assert not v.new and not v.ok
    assert "now passes: remove it from the baseline" in "\n".join(v.lines())


def test_fixed_failure_makes_its_entry_stale() -> None:
    results = sample_results()
    for r in results:
        if r.outcome is Outcome.FAIL:
            r.outcome = Outcome.PASS
    b = parse_baseline("broken-editor:editor.demo.view_line_numbers\n")
    v = apply_baseline(results, b)
    assert [str(e) for e in v.stale] == ["broken-editor:editor.demo.view_line_numbers"]


def test_entry_matching_nothing_is_a_warning_only() -> None:
    b = parse_baseline("editor.demo.view_line_numbers\neditor.demo.str_replace_multiple_matches\n"
                       "editor.demo.undo_edit_refused\nbash.demo.not_run_here\n"
                       "other-subject:editor.demo.view_line_numbers\n")
    v = apply_baseline(sample_results(), b)
    assert v.ok
    assert [str(e) for e in v.unmatched] == ["bash.demo.not_run_here",
                                             "other-subject:editor.demo.view_line_numbers"]


def test_skipped_only_entry_is_not_stale() -> None:
    v = apply_baseline(sample_results(), parse_baseline("bash.demo.restart_observed\n"))
    assert not v.stale and not v.unmatched


# --- through `tooluse run --expected-failures` -------------------------------------------------

BROKEN = Path(__file__).parent / "broken" / "bash_forgets_cwd.py"


@pytest.mark.parametrize(("baseline", "code", "words"), [
    ("", 1, "1 new"),
    ("bash.session.cwd_persists  # known\n", 0, "1 known failure, 0 new, 0 stale"),
    ("bash.session.cwd_persists\nbash.session.env_persists\n", 1, "STALE bash.session.env_persists"),
])
def test_run_with_expected_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    baseline: str, code: int, words: str) -> None:
    pytest.importorskip("conformance.runner", reason="the runner is not there yet")
    if not BROKEN.exists():
        pytest.skip("the deliberately broken bash subject is not there")
    from conformance.catalog import CATALOG
    from conformance.cli import main

    if not {"bash.session.cwd_persists", "bash.session.env_persists"} <= set(CATALOG):
        pytest.skip("the bash session checks are not in the catalog")
    (tmp_path / "expected.txt").write_text(baseline)
    out = tmp_path / "out"
    rc = main(["run", "--bash", f"{BROKEN}:factory", "--check", "bash.session.cwd_persists",
               "bash.session.env_persists", "--out", str(out),
               "--expected-failures", str(tmp_path / "expected.txt")])
    assert rc == code
    assert words in capsys.readouterr().out
    assert (out / "baseline-verdict.json").exists() and (out / "junit.xml").exists()
