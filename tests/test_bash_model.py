"""The model-based bash check (issue 24): the session model, the state machine on the reference and
on broken subjects (each found, with a minimal reproducer verified by replay), the set-aside of
defects the fixed checks report, determinism, and the time cap (incomplete, never a verdict).

Subjects run in-process (``broken.editor_harness.InProcessSession``) with a 1 s command timeout:
the runner-level runs (every broken and conformant subject against every bash check) are in
tests/test_bash_checks.py and tests/test_conformant_bash.py."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

import pytest
from broken.editor_harness import InProcessSession
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.catalog import CATALOG
from conformance.checks.bash_model import fixed_check_fails
from conformance.properties import bash_machine
from conformance.properties.bash_background import BACKGROUND_FORMS, Background
from conformance.properties.bash_commands import (
    PARTS,
    Cd,
    Command,
    DefAlias,
    DefFn,
    Setup,
    SetVar,
    Umask,
)
from conformance.properties.bash_errors import SYNTAX_ERRORS, SyntaxError_
from conformance.properties.bash_machine import (
    REPORTED_BY,
    BashModelReport,
    explore_bash_model,
    run_ops,
    verify,
)
from conformance.properties.bash_model import INITIAL, SessionModel, compare
from conformance.properties.bash_read_back import ReadBack
from conformance.properties.bash_restart import Restart
from conformance.properties.exploration import Budget
from conformance.reference.bash import BashTool
from conformance.results import NOT_REPRODUCED, VERIFIED
from conformance.session import allow_spawn

HERE = Path(__file__).resolve().parent
TIMEOUT = 1.0


def _factory(name: str) -> Any:
    if name == "reference":
        return BashTool
    path = HERE / (f"{name}.py" if "/" in name else f"broken/{name}.py")
    spec = importlib.util.spec_from_file_location(f"model_{name.replace('/', '_')}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.factory


def _session(name: str, workdir: Path) -> InProcessSession:
    factory = _factory(name)

    def open_(wd: Path) -> InProcessSession:
        return InProcessSession(wd, "bash_20250124", factory(wd, timeout=TIMEOUT), timeout=TIMEOUT)

    s = open_(workdir)
    allow_spawn(s, open_)
    return s


def _explore(name: str, workdir: Path, **kw: Any) -> BashModelReport:
    workdir.mkdir(parents=True, exist_ok=True)
    s = _session(name, workdir)
    try:
        return explore_bash_model(s, fails=fixed_check_fails, **kw)
    finally:
        s.close()


# --- the model -----------------------------------------------------------------------------------

def _shown(m: SessionModel, **over: str) -> dict[str, str]:
    out = {"cwd": m.base, "umask": "0022"}
    for n in m.variables:
        out[f"var:{n}"], out[f"env:{n}"] = "@unset", ""
    for n in m.functions:
        out[f"fn:{n}"] = "@unset"
    for n in m.aliases:
        out[f"alias:{n}"] = "@unset"
    for n in m.shopts:
        out[f"shopt:{n}"] = f"shopt -u {n}"
    return {**out, **over}


def test_restart_clears_exported_variables_and_may_keep_plain_ones(tmp_path: Path) -> None:
    m = SessionModel(str(tmp_path))
    m.set_var("TU_ALPHA", "kept", True)
    m.set_var("TU_BETA", "plain", None)
    m.restart()
    assert [x.component for x in compare(m.copy(), _shown(
        m, **{"var:TU_ALPHA": "kept", "env:TU_ALPHA": "x"}))] == ["var"]
    assert compare(m.copy(), _shown(m, **{"var:TU_BETA": "plain"})) == []
    assert compare(m.copy(), _shown(m)) == []


def test_after_a_timeout_state_is_kept_or_reset_and_the_read_back_decides(tmp_path: Path) -> None:
    m = SessionModel(str(tmp_path))
    sub = str(tmp_path / "alpha")
    m.cwd = {sub}
    m.functions["tu_fn_one"] = {"word"}
    m.after_timeout()
    assert m.cwd == {sub, INITIAL}
    assert compare(m, _shown(m, cwd=sub, **{"fn:tu_fn_one": "word"})) == []
    assert m.cwd == {sub} and m.functions["tu_fn_one"] == {"word"}
    wrong = compare(m, _shown(m, cwd=str(tmp_path / "gamma dir")))
    assert [x.component for x in wrong] == ["cwd", "fn"]


def test_every_key_set_aside_names_catalog_checks() -> None:
    assert {c for checks in REPORTED_BY.values() for c in checks} <= set(CATALOG)


# --- the machine ---------------------------------------------------------------------------------

def test_the_reference_agrees_and_the_run_is_the_same_every_time(tmp_path: Path) -> None:
    first = _explore("reference", tmp_path / "a")
    again = _explore("reference", tmp_path / "b")
    assert first.findings == [] and first.set_aside == {} and not first.incomplete, [
        (d.key, d.message, d.inputs) for d in first.findings]
    assert first.examples == again.examples >= 20
    assert first.calls == again.calls > 100


@pytest.mark.parametrize(("name", "key"), [
    ("bash_keeps_only_cwd_and_env", "state:"),
    ("bash_restarts_after_failure", "state:"),
    ("bash_restart_hangs_up", "restart:process"),
])
@pytest.mark.slow
def test_a_broken_subject_is_found_with_a_verified_minimal_reproducer(
        tmp_path: Path, name: str, key: str) -> None:
    report = _explore(name, tmp_path)
    assert report.findings, name
    d = report.findings[0]
    assert d.key.startswith(key), (d.key, d.message)
    assert d.reproduced == VERIFIED
    # The directories the example made are setup steps before input 1, never a tool call.
    assert [x["before_input"] for x in d.setup()] == [1, 1, 1]
    assert all(x.get("directory") for x in d.setup())
    assert len(d.inputs) <= 7 and not any("mkdir" in str(i) for i in d.inputs)
    # The reproducer shows the same disagreement on a fresh broken subject, none on the reference.
    for subject, bad in ((name, True), ("reference", False)):
        where = tmp_path / f"replay-{subject}"
        where.mkdir()
        s = _session(subject, where)
        try:
            again = run_ops(s, d.ops, where)
        finally:
            s.close()
        assert (again is not None and again.key == d.key) is bad, (subject, again)


def test_a_defect_a_fixed_check_reports_is_set_aside(tmp_path: Path) -> None:
    """bash_forgets_env loses the environment between calls: env_persists reports it; what the
    model check sees of it (exported and shell variables, functions...) is not counted again."""
    report = _explore("bash_forgets_env", tmp_path, max_examples=8)
    assert report.findings == []
    assert set(report.set_aside) == {"bash.session.env_persists"}


def test_a_shell_a_syntax_error_ends_is_restarted_as_a_model_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calibration (issue 24, the SDK agent toolset's bash): a syntax error that ends the shell,
    after which commands get an empty error with no word of a restart, is
    syntax_error_recovers' SHOULD to judge; the model check restarts and asserts only that the
    restart brings the session back."""
    factory = _factory("conformant/bash_syntax_error_ends_shell")
    session_class = factory.__globals__["Session"]
    original, deaths = session_class.run, []

    def run(self: Any, command: str) -> tuple[str, int | None]:
        was = self.dead
        out = original(self, command)
        if self.dead and not was:
            deaths.append(command)
        return out

    monkeypatch.setattr(session_class, "run", run)

    def open_(wd: Path) -> InProcessSession:
        return InProcessSession(wd, "bash_20250124", factory(wd, timeout=TIMEOUT), timeout=TIMEOUT)

    s = open_(tmp_path)
    allow_spawn(s, open_)
    try:
        report = explore_bash_model(s, fails=fixed_check_fails)
    finally:
        s.close()
    assert report.findings == [] and report.set_aside == {}, [d.message for d in report.findings]
    assert deaths  # the examples did end the shell with a syntax error


class _LosesOnlyTheDirectory(BashTool):
    """After a syntax error its shell is in `/` and keeps everything else: neither the state
    kept nor a fresh session's."""

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        answer = super().__call__(tool_input)
        if "syntax error" in str(answer["content"]):
            self.session.run("cd /")
        return answer


def _ops_through_a_syntax_error() -> list[Any]:
    state = Command([Cd("alpha"), SetVar("TU_ALPHA", "kept", "export"), Umask("027"),
                     DefAlias("tu_al_one", "word")], "; ")
    return [Setup(), state, SyntaxError_(SYNTAX_ERRORS.index("echo )")), ReadBack()]


@pytest.mark.parametrize(("name", "agrees"), [
    ("reference", True),  # the shell lives: the state kept
    ("conformant/bash_restart_on_death", True),  # it dies, is replaced: a fresh session
    ("conformant/bash_seed003_session", True),  # seed 003's own BashSession, completed
    ("loses-only-the-directory", False),  # neither
])
def test_after_a_syntax_error_the_state_is_kept_or_a_fresh_sessions_as_a_whole(
        tmp_path: Path, name: str, agrees: bool) -> None:
    """Issue 36: a syntax error (`echo )`) ends a non-interactive bash fed through a pipe (seed
    003's own design); a tool that replaces the shell and says so is followed by a fresh session.
    The probe after the error is a read-back: the state kept, or a fresh session's as a whole,
    from there on; judged by what the session shows, not by the answers' words."""
    factory = _LosesOnlyTheDirectory if name == "loses-only-the-directory" else _factory(name)
    s = InProcessSession(tmp_path, "bash_20250124", factory(tmp_path, timeout=TIMEOUT),
                         timeout=TIMEOUT)
    try:
        d = run_ops(s, _ops_through_a_syntax_error(), tmp_path)
    finally:
        s.close()
    if agrees:
        assert d is None, (d.key, d.message, d.received)
    else:
        assert d is not None and d.key.startswith("state:"), d
        assert "nor a fresh session's" in d.message


@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(parts=st.lists(PARTS, min_size=1, max_size=4), joiner=st.sampled_from(("; ", "\n")),
       error=st.sampled_from(SYNTAX_ERRORS))
def test_any_state_survives_a_syntax_error_kept_or_fresh_as_a_whole(
        parts: list[Any], joiner: str, error: str) -> None:
    """Over generated state: the reference (its shell lives) and a tool restarted on death (the
    seed's design: `echo )` ends the shell; an open quote or `for`/`if` waits until the
    deadline, which restarts it) both agree with the model after any syntax error."""
    ops = [Setup(), Command(parts, joiner), SyntaxError_(SYNTAX_ERRORS.index(error)), ReadBack()]
    for name in ("reference", "conformant/bash_restart_on_death"):
        with tempfile.TemporaryDirectory() as where:
            base = Path(where)
            s = InProcessSession(base, "bash_20250124", _factory(name)(base, timeout=TIMEOUT),
                                 timeout=TIMEOUT)
            try:
                d = run_ops(s, ops, base)
            finally:
                s.close()
            assert d is None, (name, d.key, d.message, d.received)


def test_the_time_cap_makes_a_run_incomplete_not_a_verdict(tmp_path: Path) -> None:
    report = _explore("reference", tmp_path, cap=0.5)
    assert report.incomplete and report.findings == []
    assert report.examples < 20


def test_a_restart_that_hangs_up_is_seen_by_the_job_it_left(tmp_path: Path) -> None:
    import os
    import signal

    nohup = next(i for i, (f, _) in enumerate(BACKGROUND_FORMS) if f.startswith("nohup {job} >"))
    for name, found in (("bash_restart_hangs_up", "restart:process"), ("reference", None)):
        where = tmp_path / name
        where.mkdir()
        s = _session(name, where)
        try:
            d = run_ops(s, [Setup(), Background(nohup), Restart(), ReadBack()], where)
        finally:
            s.close()
            for pid_file in where.glob("heartbeat-*.pid"):  # the job the hang-up left running
                try:
                    os.kill(int(pid_file.read_text()), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        assert (d.key if d else None) == found


def test_a_reproducer_is_replayed_as_printed_and_labelled(tmp_path: Path) -> None:
    """verify() replays the printed reproducer on a fresh subject of the session it is given:
    the broken subject shows the disagreement again (verified), a subject that does not have the
    defect (the reference, standing for one that failed only once) does not (did not
    reproduce)."""
    where = tmp_path / "found"
    where.mkdir()
    s = _session("bash_keeps_only_cwd_and_env", where)
    try:
        d = run_ops(s, [Setup(), Command([DefFn("tu_fn_one", "word")], "; "), ReadBack()],
                    where)
    finally:
        s.close()
    assert d is not None and d.key == "state:fn", d and d.message
    for subject, label in (("bash_keeps_only_cwd_and_env", VERIFIED),
                           ("reference", NOT_REPRODUCED)):
        case = tmp_path / f"case-{subject}"
        case.mkdir()
        fresh = _session(subject, case)
        try:
            # A cap load cannot hit (conftest's): the label rests on the replay alone.
            assert verify(fresh, Budget(bash_machine.MIN_CAP_SECONDS), d) == label, subject
        finally:
            fresh.close()


def test_the_check_reports_a_time_cap_stop_as_incomplete(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.catalog import CheckIncomplete
    from conformance.checks.bash_model import agrees_with_session_model
    from conformance.properties import bash_machine

    monkeypatch.setattr(bash_machine, "MIN_CAP_SECONDS", 0.5)
    monkeypatch.setattr(bash_machine, "CAP_TIMEOUTS", 0)
    s = _session("reference", tmp_path)
    try:
        with pytest.raises(CheckIncomplete, match="hard time cap ended the model check"):
            agrees_with_session_model(s)
    finally:
        s.close()


# --- only a disagreement that repeats is a FAIL (issue 21's rule) -------------------------------

def _disagreement(key: str, message: str, reproduced: str, base: Path) -> Any:
    from conformance.properties.bash_step import Disagreement

    d = Disagreement(key, message, {"content": ""}, "every @ line")
    d.inputs, d.base, d.reproduced = [{"command": f"cd {base}"}], str(base), reproduced
    d.ops = [Setup()]
    return d


@pytest.mark.parametrize("aside", [False, True])
def test_findings_that_did_not_reproduce_do_not_fail_the_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aside: bool) -> None:
    from conformance.catalog import CheckFailure, CheckSkipped, Rejudged
    from conformance.checks import bash_model

    def report(*findings: Any) -> BashModelReport:
        set_aside = {"bash.errors.failure_flagged": [findings[0]]} if aside else {}
        return BashModelReport(list(findings), set_aside, 20, 300, 4.0, False,
                               replay_seconds=0.5)

    lost = _disagreement("missing", "a read-back came back without its @ lines",
                         NOT_REPRODUCED, tmp_path / "example-3")
    kept = _disagreement("state:fn", "tu_fn_one was lost", VERIFIED, tmp_path / "example-5")
    s = _session("reference", tmp_path)
    try:
        # Every finding did not reproduce: a pass carrying the re-judging (or a skip, when
        # another check reports something it found), never a FAIL.
        monkeypatch.setattr(bash_model, "explore_bash_model", lambda *a, **k: report(lost))
        if aside:
            with pytest.raises(CheckSkipped, match="did not reproduce"):
                bash_model.agrees_with_session_model(s)
        else:
            got = bash_model.agrees_with_session_model(s)
            assert isinstance(got, Rejudged), got
            record = got.record()
            assert record["by"] == "replay" and record["repeated"] is False
            assert "a read-back came back without its @ lines" in record["first"]["message"]
            assert record["first"]["duration"] == 4.0 and record["rerun"]["duration"] == 0.5
        # One repeats: a FAIL on it alone, the other listed as not counted.
        monkeypatch.setattr(bash_model, "explore_bash_model", lambda *a, **k: report(lost, kept))
        with pytest.raises(CheckFailure) as failed:
            bash_model.agrees_with_session_model(s)
        assert failed.value.message.startswith("tu_fn_one was lost")
        assert "distinct disagreements" not in failed.value.message
        assert "1 more disagreement did not reproduce" in failed.value.message
        assert failed.value.reproduced == VERIFIED
    finally:
        s.close()


def test_a_command_written_relative_to_a_lost_directory_is_the_cwd_checks(tmp_path: Path) -> None:
    """bash_forgets_cwd starts every command in the case directory: after `cd alpha`, `cd beta`
    fails. The model expected it to succeed, but the failure is the lost directory's, which
    bash.session.cwd_persists reports (one defect, one check), not a wrong is_error flag."""
    from conformance.properties.bash_commands import Cd
    from conformance.properties.bash_machine import reported_by

    s = _session("bash_forgets_cwd", tmp_path)
    try:
        d = run_ops(s, [Setup(), Command([Cd("alpha")], "; "), Command([Cd("alpha/beta")], "; ")],
                    tmp_path)
    finally:
        s.close()
    assert d is not None and d.key == "flag:success-flagged@cwd", d and (d.key, d.message)
    assert d.inputs[-1] == {"command": "cd beta"}
    assert reported_by(d.key) == ("bash.errors.failure_flagged", "bash.session.cwd_persists")
    assert reported_by("flag:success-flagged") == ("bash.errors.failure_flagged",)


def test_a_reproducer_with_a_quoted_path_is_verified_as_printed(tmp_path: Path) -> None:
    """``cd '.../gamma dir'`` is printed with ``$TOOLUSE_WORKDIR`` outside the single quotes (a
    shell expands it); the replay turns it back into the command the steps send, so the
    finding is still verified on the broken subject."""
    from conformance.properties.bash_commands import Cd
    from conformance.reproducers import relativize_inputs

    where = tmp_path / "found"
    where.mkdir()
    s = _session("bash_keeps_only_cwd_and_env", where)
    try:
        d = run_ops(s, [Setup(), Command([Cd("gamma dir"), DefFn("tu_fn_one", "word")], "; "),
                        ReadBack()], where)
    finally:
        s.close()
    assert d is not None and d.key == "state:fn", d and d.message
    case = tmp_path / "case"
    case.mkdir()
    printed = relativize_inputs(d.reproducer(str(case)), case)
    assert "''\"$TOOLUSE_WORKDIR\"'/gamma dir'" in printed[0]["command"], printed
    fresh = _session("bash_keeps_only_cwd_and_env", case)
    try:
        assert verify(fresh, Budget(60.0), d) == VERIFIED
    finally:
        fresh.close()


def test_a_state_message_names_the_state_in_plain_words() -> None:
    from conformance.properties.bash_read_back import _named

    assert _named("umask", "umask") == "the umask"
    assert _named("fn", "tu_fn_one") == "the function tu_fn_one"
    assert _named("cwd", "working directory") == "the current working directory"


def test_examples_without_a_fresh_subject_leave_the_run_incomplete_not_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh subject that does not start, tried twice, is no verdict on the tool (on a loaded
    CI runner a tmux subject's start once failed this way and was reported as a FAIL): the run
    is incomplete and says why; one unlucky start is simply tried again."""
    from conformance.properties import bash_machine
    from conformance.properties.bash_step import Disagreement

    tries: list[str] = []

    def never(self: object, label: str = "example", ahead: int = 0) -> object:
        tries.append(label)
        raise Disagreement("start", "a fresh subject did not start", "SubjectStartError: x",
                           "a subject that starts")

    run = bash_machine._Run.__new__(bash_machine._Run)
    run.pool = type("P", (), {"open": never})()
    run.budget = type("B", (), {"charge": lambda *a, **k: None})()
    run.generated, run.found, run.examples, run.calls, run.start_failed = [[], []], {}, 0, 0, ""
    run.execute()
    assert tries == ["example", "example"] and run.found == {}
    assert "did not start" in run.start_failed and "SubjectStartError" in run.start_failed
    report = bash_machine.BashModelReport([], {}, 1, 0, 0.0, True, start_failed=run.start_failed)
    from conformance.checks.properties import model_check_incomplete

    said = str(model_check_incomplete(2, report.note(), [], start_failed=report.start_failed))
    assert said.startswith("no fresh subject started for an example, twice (a fresh subject")
    assert "after 0 calls in 1 examples" in said and "hard time cap" not in said
