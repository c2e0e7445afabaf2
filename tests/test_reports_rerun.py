"""The rerun command of a result (conformance.reports.rerun), rendered from the run's value
(conformance.run.Run) and the failing case's subject alone, and relativized reproducers."""

from __future__ import annotations

import shlex
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import conformance.checks  # noqa: F401  (registers every check)
from conformance.catalog import CATALOG
from conformance.cli import build_parser
from conformance.options import AGENT_REFERENCES
from conformance.reference import REFERENCE_SUBJECTS
from conformance.reports.rerun import rerun_command, rerun_line
from conformance.reproducers import HOME, WORKDIR, materialize, relativize, relativize_value
from conformance.results import CheckResult, Outcome
from conformance.run import Run, SubjectChoice
from conformance.subjects import sandbox
from conformance.subjects.launch import Confinement

CMD = {"name": "cmd:tool.py", "family": "bash", "tool_type": "bash_20250124",
       "spec": "cmd:/venv/bin/python /src/tool.py"}


def parsed(line: str) -> Run:
    """A printed line read back by the real ``tooluse`` parser (no environment)."""
    words = shlex.split(line)
    assert words[:2] == ["tooluse", "run"]
    return Run.from_args(build_parser().parse_args(words[1:]), {})


def test_a_command_subject_reruns_alone_with_the_run_options() -> None:
    run = {"argv": ["run", "--bash-cmd", "/venv/bin/python /src/tool.py", "--bash",
                    "reference-bash", "--timeout", "5", "--out", "r", "--check", "bash.*"],
           "strict": False}
    line = rerun_command(run, CMD, "bash.session.cwd_persists")
    assert shlex.split(line) == ["tooluse", "run", "--bash-cmd", "/venv/bin/python /src/tool.py",
                                 "--timeout", "5", "--check", "bash.session.cwd_persists"]


def test_a_typed_command_line_is_read_by_the_real_parser() -> None:
    """An older results file keeps argv as typed: argparse's abbreviations are understood."""
    run = {"argv": ["run", "--bash-cmd", "x", "--ch", "a.b", "--tim", "4", "--expected-failures",
                    "f.txt", "--jobs", "2", "--json", "--memory-limit", "1G", "--out=o"]}
    record = {"name": "cmd:x", "family": "bash", "tool_type": "bash_20250124", "spec": "cmd:x"}
    assert shlex.split(rerun_command(run, record, "c.d")) == [
        "tooluse", "run", "--bash-cmd", "x", "--timeout", "4", "--memory-limit", str(1024**3),
        "--check", "c.d"]


def test_names_tool_types_and_references() -> None:
    run = {"argv": [], "strict": True}
    named = {**CMD, "name": "my tool", "tool_type": "bash_20241022"}
    assert shlex.split(rerun_command(run, named, "x.y")) == [
        "tooluse", "run", "--bash-cmd", "/venv/bin/python /src/tool.py", "--name", "my tool",
        "--strict", "--check", "x.y"]
    ref = REFERENCE_SUBJECTS["reference-bash"]
    record = {"name": "reference-bash", "family": "bash", "tool_type": ref.tool_type,
              "spec": ref.spec}
    assert rerun_command({"argv": []}, record, "x.y") == (
        "tooluse run --bash reference-bash --check x.y")
    line = rerun_line(Run.from_argv(["--bash-type", "bash_20241022", "--bash-cmd", "my-bash",
                                     "--all-reference"]), "reference-bash", "x.y")
    assert line == "tooluse run --bash reference-bash --check x.y"  # its own type, not the run's


def test_a_bash_check_beside_a_loop_reruns_without_the_loop_and_keeps_its_name() -> None:
    """Issue 38: the line kept --loop-cmd and --loop-matching (starting the loop too) and
    dropped the subject's --name."""
    run = Run.from_argv(["run", "--bash-cmd", "python3 tool.py", "--name", "mine",
                         "--loop-cmd", "node loop.mjs", "--loop-matching", "tolerant",
                         "--timeout", "7", "--out", "reports"])
    line = rerun_line(run, "mine", "bash.session.cwd_persists")
    assert shlex.split(line) == ["tooluse", "run", "--bash-cmd", "python3 tool.py", "--name",
                                 "mine", "--timeout", "7", "--check", "bash.session.cwd_persists"]
    loop = shlex.split(rerun_line(run, "cmd:node loop.mjs", "loop.x"))
    assert loop == ["tooluse", "run", "--loop-cmd", "node loop.mjs", "--loop-matching",
                    "tolerant", "--timeout", "7", "--check", "loop.x"]


def test_other_families_rerun_alone_too() -> None:
    worker = {"name": "w", "family": "worker", "tool_type": "", "spec": "m:serve"}
    run = {"argv": ["run", "--worker", "m:serve", "--name", "w", "--bash", "reference-bash",
                    "--out", "o"]}
    assert rerun_command(run, worker, "worker.x") == (
        "tooluse run --worker m:serve --name w --check worker.x")
    assert rerun_command({"argv": ["pytest"]}, {**worker, "name": "m:serve"}, "worker.x") == (
        "tooluse run --worker m:serve --check worker.x")
    assert rerun_command({"argv": []}, {"name": "gone"}, "x.y") == ""


# --- the round trip: any run, any check ----------------------------------------------------------

_WORD = st.text(string.ascii_letters + string.digits + "-_./=:'\" \u00e9", min_size=1,
                max_size=12)
_COMMAND = st.lists(_WORD, min_size=1, max_size=4).map(shlex.join)
_MODULE = st.from_regex(r"[a-z][a-z0-9_]{0,6}(\.[a-z][a-z0-9_]{0,6}){0,2}", fullmatch=True)
_FACTORY = st.one_of(
    st.builds(lambda m, a: f"{m}:{a}", _MODULE, _MODULE),
    st.builds(lambda d, f, a: f"{d}/{f}.py:{a}", _MODULE, _MODULE, _MODULE))
_NAME = st.text(string.ascii_letters + string.digits + " -_.#:@", min_size=1,
                max_size=14).filter(lambda t: bool(t.strip()))


def _spec(family: str) -> st.SearchStrategy[str]:
    refs = sorted([n for n, r in REFERENCE_SUBJECTS.items() if r.family == family]
                  + [n for n, (f, _) in AGENT_REFERENCES.items() if f == family])
    return st.one_of(_FACTORY, st.sampled_from(refs)) if refs else _FACTORY


@st.composite
def _choice(draw: st.DrawFn) -> SubjectChoice:
    family = draw(st.sampled_from(("bash", "editor", "worker", "loop")))
    kind = draw(st.sampled_from(("spec", "cmd")))
    value = draw(_COMMAND if kind == "cmd" else _spec(family))
    return SubjectChoice(family, kind, value, draw(st.none() | _NAME))


_ENV_NAME = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: not sandbox.is_credential(n))
_LIMIT = st.none() | st.integers(1, 2**40)


@st.composite
def runs(draw: st.DrawFn) -> Run:
    """Any run the options can express."""
    seconds = st.floats(0.001, 10_000, allow_nan=False, allow_infinity=False)
    return Run(
        subjects=tuple(draw(st.lists(_choice(), max_size=5))),
        all_reference=draw(st.booleans()),
        bash_type=draw(st.none() | st.sampled_from(("bash_20250124", "bash_20241022"))),
        editor_type=draw(st.none() | st.sampled_from(("text_editor_20250728",
                                                       "text_editor_20250429"))),
        editor_max_characters=draw(st.none() | st.integers(1, 10**6)),
        loop_matching=draw(st.none() | st.sampled_from(("exact", "tolerant"))),
        checks=tuple(draw(st.lists(st.sampled_from(sorted(CATALOG)), max_size=2))),
        strict=draw(st.booleans()), fail_on_flaky=draw(st.booleans()),
        timeout=draw(seconds), startup_timeout=draw(seconds),
        jobs=draw(st.none() | st.integers(1, 16)),
        confinement=Confinement(
            mode=draw(st.sampled_from(sandbox.MODES)), memory=draw(_LIMIT),
            cpu=draw(_LIMIT), file_size=draw(_LIMIT), processes=draw(_LIMIT),
            pass_env=tuple(draw(st.lists(_ENV_NAME, max_size=3)))),
        out=draw(st.none() | st.just(Path("reports"))), json=draw(st.booleans()),
        progress=draw(st.sampled_from(("auto", "off", "lines"))))


@settings(max_examples=300, deadline=None)
@given(runs(), st.data())
def test_the_rerun_line_parses_back_to_that_subject_and_that_check(run: Run,
                                                                  data: st.DataObject) -> None:
    named = run.named()
    if not named:
        assert rerun_line(run, "anything", "x.y") == ""
        return
    choice, name = data.draw(st.sampled_from(named))
    check_id = data.draw(st.sampled_from(sorted(CATALOG)))
    back = parsed(rerun_line(run, name, check_id))
    [(again, again_name)] = back.named()  # exactly one subject
    assert again_name == name
    assert (again.family, again.value) == (choice.family, choice.value)
    assert again.kind == ("cmd" if choice.kind == "cmd" else "spec")
    assert back.checks == (check_id,)  # exactly that check
    assert back.case == run.case  # the same timeouts, sandbox and limits
    assert (back.strict, back.fail_on_flaky) == (run.strict, run.fail_on_flaky)
    if choice.kind != "ref":  # the family's options go with it; a reference has its own
        assert back.loop_matching == (run.loop_matching if choice.family == "loop" else None)
        assert back.editor_max_characters == (run.editor_max_characters
                                              if choice.family == "editor" else None)
    assert not (back.all_reference or back.out or back.json) and back.progress == "auto"
    assert parsed(shlex.join(["tooluse", "run", *back.words()])) == back  # a fixed point


@settings(max_examples=100, deadline=None)
@given(runs())
def test_a_run_parses_back_from_its_words(run: Run) -> None:
    """The words of any run are what the options table reads back into that run."""
    assert Run.from_argv(run.words(), {}) == run


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
