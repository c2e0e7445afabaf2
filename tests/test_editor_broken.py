"""The harness catches each deliberately broken editor with exactly the check it targets."""

from __future__ import annotations

import pytest
from broken.editor_harness import failing, run_checks
from broken.editor_kit import BROKEN, Broken, check_applies

import conformance.checks.editor  # noqa: F401
from conformance.catalog import CATALOG, Severity

MODEL_CHECK = "editor.model.agrees_with_reference_model"
UNDER_RUNNER = {"TextModeIO", "ErrorsAsSuccess", "RaisesOnBadInput", "ShellDirectoryView",
                "RaisesOnRelativePath",
                "UndoSucceedsWithoutRestoring", "BinaryViewExits"}


@pytest.mark.parametrize("b", BROKEN, ids=lambda b: b.name)
def test_broken_editor_fails_exactly_its_check(b: Broken) -> None:
    assert check_applies(b), f"{b.target} does not apply to {b.tool_type}"
    # The model-based check catches many of them too; it is tested in test_stateful_editor.py.
    exclude = set() if b.target == MODEL_CHECK else {MODEL_CHECK}
    results = run_checks(b.factory, b.tool_type, exclude=exclude)
    assert failing(results) == {b.target}, {
        k: v.failure.message[:300] for k, v in results.items() if v.failure}


@pytest.mark.parametrize("b", [b for b in BROKEN if b.target != MODEL_CHECK], ids=lambda b: b.name)
def test_the_model_check_leaves_each_broken_editor_to_its_target(b: Broken) -> None:
    """One defect, one check (issue 36): the model check sees many of these defects (tabs
    expanded, every match replaced, a final newline added, an insert one line off, ...), and
    sets each aside as the defect of the fixed check that reports it: never a second FAIL."""
    out = run_checks(b.factory, b.tool_type, ids={MODEL_CHECK})[MODEL_CHECK]
    assert out.status != "fail", out.failure.message[:600] if out.failure else out


def test_every_must_editor_check_has_a_broken_editor() -> None:
    targets = {b.target for b in BROKEN}
    musts = {c.id for c in CATALOG.values()
             if c.family == "editor" and c.severity is Severity.MUST}
    assert musts - targets == set()


def test_failure_message_shows_received_documented_and_reproducer() -> None:
    b = next(b for b in BROKEN if b.target == "editor.str_replace.rejects_multiple_matches")
    out = run_checks(b.factory, b.tool_type, ids={b.target})[b.target]
    assert out.failure is not None
    assert "Error: Found 3 matches" in str(out.failure.documented)
    assert "Successfully replaced" in str(out.failure.received)
    assert out.failure.reproducer[-1]["command"] == "str_replace"
    assert out.failure.reproducer[-1]["old_str"] == "x = 1"


@pytest.mark.slow
def test_broken_editors_under_the_real_runner() -> None:
    """The same exactness through ``conformance.runner`` (subject host process, deadlines), for
    one broken editor per area (all of them would take minutes of subprocesses)."""
    from conformance import runner
    from conformance.subjects import factory_subject

    subjects = [factory_subject(b.spec, family="editor", tool_type=b.tool_type, name=b.name,
                                options={"max_characters": 2000}
                                if b.tool_type == "text_editor_20250728" else None)
                for b in BROKEN if b.name in UNDER_RUNNER]
    subjects.append(factory_subject("conformance.reference.editor:text_editor_20250124",
                                    family="editor", tool_type="text_editor_20250124",
                                    name="reference"))
    ids = sorted(c.id for c in CATALOG.values() if c.family == "editor" and c.id != MODEL_CHECK)
    summary = runner.run(subjects, checks=ids, timeout=10.0, jobs=4)
    failed: dict[str, set[str]] = {s.name: set() for s in subjects}
    messages = {}
    for r in summary.results:
        assert r.outcome.value != "error", (r.subject, r.check_id, r.message)
        if r.outcome.value == "fail":
            failed[r.subject].add(r.check_id)
            messages[(r.subject, r.check_id)] = (r.message[:200], str(r.received)[:200])
    expected = {b.name: {b.target} for b in BROKEN if b.name in UNDER_RUNNER}
    assert failed == {**expected, "reference": set()}, messages
