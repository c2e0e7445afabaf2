"""The model-based editor check: the references and unusual conformant editors agree with the
model; broken editors are caught with short, replayable reproducers; the run is bounded, quiet and
never ends in a harness error (several bugs, slow or crashing subjects, odd text)."""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from broken.editor_harness import InProcessSession, make_session
from broken.editor_kit import by_name

from conformance.catalog import CATALOG
from conformance.checks.editor_stateful import fixed_check_fails
from conformance.properties import editor as editor_properties
from conformance.properties import exploration
from conformance.properties.editor import ModelReport, explore_editor_model, run_editor_model
from conformance.properties.exploration import Budget
from conformance.reference.editor import EDITOR_FACTORIES, TextEditor
from conformance.reproducers import apply_setup
from conformance.results import Outcome
from conformance.runner import run_case
from conformance.session import allow_spawn
from conformance.subjects import factory_subject

HERE = Path(__file__).resolve().parent
MODEL_CHECK = "editor.model.agrees_with_reference_model"
EDITORS = HERE / "model_editors.py"


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"model_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _factory(cls: type[TextEditor], tool_type: str) -> Callable[..., TextEditor]:
    def make(workdir: Path, timeout: float | None = None) -> TextEditor:
        return cls(workdir, tool_type=tool_type)
    return make


def _session(cls: type[TextEditor], tool_type: str, workdir: Path, *,
             spawning: bool = True) -> InProcessSession:
    """An in-process session; with ``spawning``, one that can start fresh editors (as the
    runner's sessions can)."""
    factory = _factory(cls, tool_type)
    s = make_session(factory, tool_type, workdir)
    if spawning:
        allow_spawn(s, lambda wd: make_session(factory, tool_type, wd))
    return s


def _explore(cls: type[TextEditor], tool_type: str, workdir: Path, **kw: Any) -> ModelReport:
    s = _session(cls, tool_type, workdir)
    try:
        return explore_editor_model(s, **kw)
    finally:
        s.close()


def _run(spec: str, tool_type: str, tmp_path: Path, *, timeout: float = 3.0) -> Any:
    subject = factory_subject(spec, family="editor", tool_type=tool_type)
    return run_case(subject, CATALOG[MODEL_CHECK], timeout=timeout, tmp_root=tmp_path)


# -- conformant editors pass ----------------------------------------------------------------------

@pytest.mark.parametrize("tool_type", sorted(EDITOR_FACTORIES))
def test_reference_editor_agrees_with_model(tool_type: str, tmp_path: Path) -> None:
    s = make_session(EDITOR_FACTORIES[tool_type], tool_type, tmp_path)
    assert run_editor_model(s, max_examples=25) is None


def test_reference_editor_passes_through_the_runner(tmp_path: Path) -> None:
    r = _run("conformance.reference.editor:text_editor_20250728", "text_editor_20250728",
             tmp_path)
    assert r.outcome is Outcome.PASS, r.message
    assert "calls in" in r.observed and "examples" in r.observed
    assert "insert of a new_str ending in \\n: inserted as written" in r.observed


def test_phantom_last_line_is_reported(tmp_path: Path) -> None:
    cls = _load(HERE / "conformant" / "editor_phantom_line.py", "PhantomLastLine")
    report = _explore(cls, "text_editor_20250429", tmp_path, max_examples=80)
    assert report.findings == []
    assert "accepted (a phantom empty last line)" in report.observed


def test_the_vendors_insert_is_accepted_and_reported(tmp_path: Path) -> None:
    report = _explore(_load(EDITORS, "VendorInsert"), "text_editor_20250429", tmp_path,
                      max_examples=100)
    assert report.findings == [], report.findings[0]
    assert "split on \\n" in report.observed
    assert "accepted (a phantom empty last line)" in report.observed


@pytest.mark.parametrize("name", ["InsertTextOnly", "NewStrOnly"])
def test_insert_field_of_20250728_is_free(name: str, tmp_path: Path) -> None:
    # NewStrOnly's refused inserts are editor.insert.accepts_insert_text's defect, set aside.
    report = _explore(_load(EDITORS, name), "text_editor_20250728", tmp_path,
                      fails=fixed_check_fails)
    assert report.findings == [], report.findings[0]


def test_undo_of_create_may_keep_the_created_file(tmp_path: Path) -> None:
    report = _explore(_load(EDITORS, "UndoKeepsCreated"), "text_editor_20250124", tmp_path,
                      max_examples=60)
    assert report.findings == [], report.findings[0]
    assert "undo_edit of a create: leaves the file as created" in report.observed


def test_a_json_result_is_read_decoded(tmp_path: Path) -> None:
    """An MCP editor's structured result (a JSON document as text) shows the lines decoded."""
    report = _explore(_load(EDITORS, "JsonResults"), "text_editor_20250429", tmp_path)
    assert report.findings == [], report.findings[0]
    bad = _explore(_load(EDITORS, "JsonResultsStaleView"), "text_editor_20250429",
                   tmp_path / "stale")
    assert bad.findings
    view = next(f for f in bad.findings if f.key.startswith("view"))
    # The headline and what was received are the decoded text: no JSON escapes of it.
    assert view.message.startswith("view did not show the file's line")
    assert '\\n' not in view.received and '{"output"' not in view.received, view.received


def test_headlines_say_what_the_subject_did(tmp_path: Path) -> None:
    """The headline is a behaviour in the docs' terms, never an escaping difference."""
    report = _explore(by_name("ReplacesAll").cls, "text_editor_20250429", tmp_path)
    several = next(f for f in report.findings if "several matches" in f.key)
    assert several.message.startswith("str_replace accepted an invalid command (the docs ask "
                                      "for an error: old_str occurs "), several.message
    report = _explore(by_name("EnsuresFinalNewline").cls, "text_editor_20250429",
                      tmp_path / "nl")
    wrong = next(f for f in report.findings if "wrong file content" in f.key)
    assert "left the wrong file content: line " in wrong.message
    assert "where the documented result has" in wrong.message, wrong.message


def test_the_seeds_sample_conventions_are_in_the_model() -> None:
    """Seed 001's sample replaces an empty old_str in an empty file (content.count("") is 1),
    and keeps one .backup (a second undo refused): the model accepts both, and the documented
    alternatives (refusing; several undo levels)."""
    from conformance.properties.editor_model import EditorModel

    m = EditorModel("text_editor_20250124", files={"f": b""})
    e = m.expect({"command": "str_replace", "path": "f", "old_str": "", "new_str": "x"})
    assert {(o.error, o.after) for o in e.outcomes} == {(False, b"x"), (True, b"")}
    m.files["g"] = b"ab"
    e = m.expect({"command": "str_replace", "path": "g", "old_str": "", "new_str": "x"})
    assert {(o.error, o.after) for o in e.outcomes} == {(True, b"ab")}
    m = EditorModel("text_editor_20250124", files={"f": b"a\n"})
    for new in (b"b\n", b"c\n"):
        m.commit("f", next(o for o in m.expect({"command": "create", "path": "f",
                                                "file_text": new.decode()}).outcomes
                           if not o.error))
    first = m.expect({"command": "undo_edit", "path": "f"})
    assert all(o.note is None or "after an undo" not in o.note[0] for o in first.outcomes)
    m.commit("f", first.outcomes[0])
    second = m.expect({"command": "undo_edit", "path": "f"})
    assert (True, b"b\n") in {(o.error, o.after) for o in second.outcomes}
    assert (False, b"a\n") in {(o.error, o.after) for o in second.outcomes}


def test_odd_text_is_no_harness_error(tmp_path: Path) -> None:
    report = _explore(_load(EDITORS, "OddText"), "text_editor_20250429", tmp_path,
                      max_examples=10)
    assert report.findings == [], report.findings[0]


# -- broken editors are caught --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["StaleViewCache", "InsertZeroAfterFirst"])
def test_broken_editor_disagrees_with_a_replayable_reproducer(name: str, tmp_path: Path) -> None:
    cls = by_name(name).cls

    def factory(workdir: Path, timeout: float | None = None) -> TextEditor:
        return cls(workdir, tool_type="text_editor_20250429")

    s = make_session(factory, "text_editor_20250429", tmp_path)
    found = run_editor_model(s, max_examples=40)
    assert found is not None
    assert found.reproducer and all("command" in x and "path" in x for x in found.reproducer)
    assert found.received and found.documented
    assert "Received:" in str(found) and "Documented:" in str(found)
    # Replaying the reproducer on fresh editors: the reference and the broken one part ways.
    answers = []
    for make in (lambda w: TextEditor(w, tool_type="text_editor_20250429"), factory):
        for f in tmp_path.rglob("*"):
            if f.is_file():
                f.unlink()
        editor = make(tmp_path)
        seen = []
        for i, x in enumerate(found.reproducer, 1):
            apply_setup(found.setup, i, tmp_path)  # files planted before input i, as printed
            seen.append((editor(dict(x)), _bytes(x["path"])))
        answers.append(seen)
    assert answers[0] != answers[1]
    # What was planted is stated as setup, never as a tool call.
    assert all(x["before_input"] >= 1 and "path" in x for x in found.setup)


def _bytes(path: str) -> bytes | None:
    p = Path(path)
    return p.read_bytes() if p.is_file() else None


def test_minimized_reproducer_is_short_and_replays(tmp_path: Path) -> None:
    from conformance.properties.editor_reproducers import replay

    cls = by_name("StaleViewCache").cls
    s = _session(cls, "text_editor_20250429", tmp_path)
    found = run_editor_model(s, max_examples=40)
    assert found is not None
    # create, view (cached), an edit, the view that shows the stale text (and a setup step).
    assert [x["command"] for x in found.reproducer][-1] == "view"
    assert len(found.reproducer) <= 6
    fresh = _session(cls, "text_editor_20250429", tmp_path / "fresh")
    assert replay(fresh, found.steps, tmp_path / "fresh") is not None
    reference = _session(TextEditor, "text_editor_20250429", tmp_path / "ref")
    assert replay(reference, found.steps, tmp_path / "ref") is None


def test_two_bugs_are_two_findings_each_with_a_short_reproducer(tmp_path: Path) -> None:
    report = _explore(_load(EDITORS, "TwoBugs"), "text_editor_20250429", tmp_path,
                      max_examples=60)
    keys = {f.key for f in report.findings}
    assert any(k.startswith("view") for k in keys) and any(k.startswith("create") for k in keys)
    assert all(0 < len(f.reproducer) <= 30 for f in report.findings)
    # Paths are in the check's directory, not in an example's (removed) one.
    assert all(Path(x["path"]).parent == tmp_path for f in report.findings
               for x in f.reproducer)


def test_two_bugs_through_the_runner_fail_with_both_reproducers(tmp_path: Path) -> None:
    r = _run(f"{EDITORS}:TwoBugs.factory", "text_editor_20250429", tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert "distinct disagreements" in r.message and "Disagreement 2" in r.message
    assert 0 < len(r.reproducer) <= 30
    assert "$TOOLUSE_WORKDIR" in r.reproducer[0]["path"]


def test_a_crash_fails_its_example_with_a_real_reproducer(tmp_path: Path) -> None:
    r = _run(f"{EDITORS}:CrashOnInsertAtStart.factory", "text_editor_20250429", tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert "faulted" in r.message
    last = r.reproducer[-1]
    assert last["command"] == "insert" and last["insert_line"] == 0
    assert len(r.reproducer) <= 3  # a file to insert into, then the insert


@pytest.mark.slow
def test_a_hang_fails_its_example_and_the_run_ends(tmp_path: Path) -> None:
    r = _run(f"{EDITORS}:HangOnInsertAtStart.factory", "text_editor_20250429", tmp_path,
             timeout=0.5)
    assert r.outcome is Outcome.FAIL, r.message
    assert "hung" in r.message
    assert r.reproducer[-1]["command"] == "insert" and r.reproducer[-1]["insert_line"] == 0


def test_an_unreliable_editor_is_a_failure_not_a_harness_error(tmp_path: Path) -> None:
    # It refuses one valid call in five at random, so a finding's replay on a fresh subject may
    # or may not show it again: a FAIL when it does, else a pass that carries the replay's record
    # and names the finding it did not count (issue 24: only a finding that repeats fails). Never
    # an error of the harness, never a silent pass.
    # Its random refusals fail fixed checks too (a path check, str_replace's): a finding whose
    # kind such a check reports is set aside, a SKIP naming them (one defect, one check).
    r = _run(f"{EDITORS}:Unreliable.factory", "text_editor_20250429", tmp_path)
    assert r.outcome in (Outcome.FAIL, Outcome.PASS, Outcome.SKIP), r.message
    if r.outcome is Outcome.SKIP:
        assert "not counted again" in r.message and "editor." in r.message
    elif r.outcome is Outcome.FAIL:
        assert "refused a valid command" in r.message
    else:
        assert r.rejudged and r.rejudged["by"] == "replay" and not r.rejudged["repeated"]
        assert "refused a valid command" in r.rejudged["first"]["message"]
        assert "did not show again" in r.rejudged["rerun"]["message"]
        # Whether Hypothesis itself saw a replay answer differently ("answered differently when
        # an example was replayed" in r.observed) depends on where the random refusals fell: the
        # CI at decb8fb got a pass without it. The re-judged record above is what must hold.


# -- bounded and quiet ----------------------------------------------------------------------------

def test_a_slow_editor_hits_the_hard_cap_and_is_incomplete(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # timeout 0.5 s: a hard cap of max(MIN_CAP_SECONDS, 20 timeouts); 40 examples of 0.3 s calls
    # need minutes. Incomplete: neither a pass nor a failure. The cap's floor is lowered from
    # 60 s to 5 s here, so the test does not sit out a minute of real time (issue 21): the same
    # path (the runner, the subject's process, the cap ending generation) in a twelfth of it.
    monkeypatch.setattr(editor_properties, "MIN_CAP_SECONDS", 5.0)
    monkeypatch.setattr(exploration, "MIN_BUDGET_SECONDS", 5.0)
    r = _run(f"{EDITORS}:Slow.factory", "text_editor_20250429", tmp_path, timeout=0.5)
    assert r.outcome is Outcome.INCOMPLETE, r.message
    assert "hard time cap" in r.message and "neither a pass nor a failure" in r.message
    assert r.duration < 300  # generous: the cap is 5 s (a loaded machine)


def test_budget_stops_generation_and_keeps_what_was_found(tmp_path: Path) -> None:
    # The calls end it (150), never the clock: the time cap is the tests' generous one (conftest).
    report = _explore(_load(EDITORS, "TwoBugs"), "text_editor_20250429", tmp_path,
                      max_examples=1000, budget=Budget(seconds=editor_properties.MIN_CAP_SECONDS, calls=150))
    assert report.budget.ran_out and report.ended == "stopped"
    assert report.findings and all(len(f.reproducer) <= 30 for f in report.findings)


def test_without_spawning_the_one_session_is_reused(tmp_path: Path) -> None:
    s = _session(TextEditor, "text_editor_20250429", tmp_path, spawning=False)
    report = explore_editor_model(s, max_examples=10)
    assert report.findings == []


def test_nothing_reaches_the_terminal(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    report = _explore(_load(EDITORS, "TwoBugs"), "text_editor_20250429", tmp_path,
                      max_examples=40)
    assert report.findings
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_strategies_cover_the_byte_properties() -> None:
    from hypothesis import find, settings

    from conformance.properties.strategies import file_contents, file_names

    quick = settings(max_examples=500, database=None)
    assert b"\r\n" in find(file_contents(), lambda d: b"\r\n" in d, settings=quick)
    assert b"\t" in find(file_contents(), lambda d: b"\t" in d, settings=quick)
    find(file_contents(), lambda d: d and not d.endswith(b"\n"), settings=quick)
    odd = find(file_contents(), lambda d: not _utf8(d), settings=quick)
    assert not _utf8(odd)
    assert any(c in find(file_names(), lambda n: any(c in n for c in ";$`'\""), settings=quick)
               for c in ";$`'\"")


def _utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


# -- one defect, one check: newline translation is crlf_preserved's --------------------------------

def test_newline_translation_alone_is_left_to_crlf_preserved(tmp_path: Path) -> None:
    tool_type = "text_editor_20250728"
    r = _run(f"{EDITORS}:TranslatesNewlines.factory", tool_type, tmp_path)
    assert r.outcome is Outcome.SKIP, r.message
    assert "editor.bytes.crlf_preserved" in r.message and "not a pass" in r.message
    # and the defect is the catalog's other check's
    crlf = run_case(factory_subject(f"{EDITORS}:TranslatesNewlines.factory", family="editor",
                                    tool_type=tool_type),
                    CATALOG["editor.bytes.crlf_preserved"], timeout=3.0, tmp_root=tmp_path)
    assert crlf.outcome is Outcome.FAIL, crlf.message


def test_a_second_bug_beside_newline_translation_still_fails(tmp_path: Path) -> None:
    r = _run(f"{EDITORS}:TranslatesNewlinesAndCachesViews.factory", "text_editor_20250728",
             tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert "view" in r.message.splitlines()[0]


def test_a_bug_that_needs_a_cr_without_newline_translation_fails(tmp_path: Path) -> None:
    r = _run(f"{EDITORS}:DropsCarriageReturnsOfNewText.factory", "text_editor_20250728", tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert "crlf_preserved" not in r.message


# -- deterministic: the same findings at any speed ---------------------------------------------------

def _findings(report: ModelReport) -> list[tuple[str, str, str, Any, Any, str]]:
    return [(f.key, f.message, f.received, f.reproducer, f.setup, f.reproduced)
            for f in report.findings]


@pytest.mark.slow
def test_findings_are_identical_at_different_speeds(tmp_path: Path) -> None:
    """The same subject, once as it is and once slowed down (every call sleeps): the same
    examples, findings, shrunk reproducers and verification (a count of examples and of shrink
    tries, never a clock)."""
    fast_cls = _load(EDITORS, "TwoBugs")

    class SlowTwoBugs(fast_cls):  # type: ignore[misc, valid-type]
        def __call__(self, tool_input: dict[str, Any]) -> Any:
            time.sleep(0.004)
            return super().__call__(tool_input)

    reports = []
    for name, cls in (("fast", fast_cls), ("slow", SlowTwoBugs)):
        (tmp_path / name).mkdir()
        reports.append(_explore(cls, "text_editor_20250429", tmp_path / name))
    fast, slow = reports
    assert fast.findings and not fast.incomplete and not slow.incomplete
    moved = [tuple(str(v).replace(str(tmp_path / "slow"), str(tmp_path / "fast")) for v in f)
             for f in _findings(slow)]
    assert [tuple(str(v) for v in f) for f in _findings(fast)] == moved
    assert fast.budget.used == slow.budget.used and fast.budget.examples == slow.budget.examples
    assert all(f.reproduced == "verified" for f in fast.findings)


def test_shrunk_reproducer_carries_no_bytes_its_bug_does_not_need(tmp_path: Path) -> None:
    report = _explore(_load(EDITORS, "TwoBugs"), "text_editor_20250429", tmp_path)
    for f in report.findings:
        texts = [str(v) for x in f.reproducer for k, v in x.items()
                 if k in ("file_text", "old_str", "new_str", "insert_text")]
        texts += [str(x.get("text", x.get("bytes", ""))) for x in f.setup]
        assert all(len(t) <= 4 for t in texts), (f.key, f.reproducer, f.setup)
        assert all(Path(x["path"]).name in {"a.txt", "b.txt", "c.txt"}
                   for x in [*f.reproducer, *f.setup]), f.reproducer


def test_a_finding_that_does_not_replay_on_a_fresh_subject_is_labelled_so(tmp_path: Path
                                                                          ) -> None:
    """An editor that goes wrong only after many calls (state the reproducer cannot set up):
    the finding is reported, its reproducer marked 'did not reproduce'."""
    report = _explore(_load(EDITORS, "WornOut"), "text_editor_20250429", tmp_path)
    assert report.findings
    assert all(f.reproduced == "did not reproduce" for f in report.findings)


@pytest.mark.slow(60)
def test_findings_that_all_did_not_reproduce_are_re_judged_not_failed(tmp_path: Path) -> None:
    """Issue 21's rule: only a failure that repeats is a FAIL. Every finding of the worn-out
    editor did not reproduce on a fresh subject, so the check does not fail, never silently: in
    a run (the check run again alone finds again only what does not reproduce) the result is
    ``flaky`` (issue 36), carrying ``rejudged`` (by replay, ``alone``), which every report
    format prints. (The price: a defect no short reproducer sets up, such as this wear after 150
    calls, is such a verdict, not a FAIL.)"""
    from conformance.results import rejudged_note

    r = _run(f"{EDITORS}:WornOut.factory", "text_editor_20250429", tmp_path)
    assert r.outcome is Outcome.FLAKY, r.message
    assert r.rejudged is not None and r.rejudged["by"] == "replay" and "alone" in r.rejudged
    assert r.rejudged["repeated"] is False and r.rejudged["first"]["outcome"] == "fail"
    assert re.search(r"\d+ disagreements?: ", r.rejudged["first"]["message"])
    assert rejudged_note(r.rejudged).startswith("re-judged by replay")


@pytest.mark.parametrize("fails", [1, 2], ids=["one-unlucky-start", "never-starts"])
def test_a_fresh_editor_that_does_not_start_is_tried_again_then_incomplete(
        tmp_path: Path, fails: int) -> None:
    """A fresh subject for the examples that does not start is no verdict on the editor (a start
    can fail on a loaded machine): it is tried once more; twice not started ends the check
    incomplete and says why, never a FAIL with no tool input."""
    factory = _factory(TextEditor, "text_editor_20250429")
    s = make_session(factory, "text_editor_20250429", tmp_path)
    tries: list[Path] = []

    def start(wd: Path) -> Any:
        tries.append(wd)
        if len(tries) <= fails:
            raise OSError("subject did not answer its readiness call")
        return make_session(factory, "text_editor_20250429", wd)

    allow_spawn(s, start)
    try:
        report = explore_editor_model(s, max_examples=5)
    finally:
        s.close()
    assert not [f for f in report.findings if "start" in f.key]
    if fails == 1:
        assert not report.incomplete and not report.start_failed and report.findings == []
    else:
        assert len(tries) == 2 and report.incomplete and report.findings == []
        assert report.start_failed == "OSError: subject did not answer its readiness call"
        from conformance.checks.properties import model_check_incomplete

        said = str(model_check_incomplete(5, report.budget.note(), [],
                                          start_failed=report.start_failed))
        assert said.startswith("no fresh subject started for an example, twice (OSError")
