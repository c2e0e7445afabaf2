"""The model-based editor check: the references agree with the model; broken editors are caught
with a shrunk, replayable reproducer."""

from __future__ import annotations

from pathlib import Path

import pytest
from broken.editor_harness import make_session
from broken.editor_kit import by_name

from conformance.reference.editor import EDITOR_FACTORIES, TextEditor
from conformance.stateful import run_editor_model


@pytest.mark.parametrize("tool_type", sorted(EDITOR_FACTORIES))
def test_reference_editor_agrees_with_model(tool_type: str, tmp_path: Path) -> None:
    s = make_session(EDITOR_FACTORIES[tool_type], tool_type, tmp_path)
    assert run_editor_model(s, max_examples=25) is None


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
        answers.append([(editor(dict(x)), _bytes(x["path"])) for x in found.reproducer])
    assert answers[0] != answers[1]


def _bytes(path: str) -> bytes | None:
    p = Path(path)
    return p.read_bytes() if p.is_file() else None


def test_minimized_reproducer_is_short_and_replays(tmp_path: Path) -> None:
    from conformance.stateful import replay

    cls = by_name("StaleViewCache").cls
    s = make_session(lambda w, timeout=None: cls(w, tool_type="text_editor_20250429"),
                     "text_editor_20250429", tmp_path)
    found = run_editor_model(s, max_examples=40)
    assert found is not None
    # create, view (cached), an edit, the view that shows the stale text.
    assert [x["command"] for x in found.reproducer][-1] == "view"
    assert len(found.reproducer) <= 4
    fresh = make_session(lambda w, timeout=None: cls(w, tool_type="text_editor_20250429"),
                         "text_editor_20250429", tmp_path)
    assert replay(fresh, found.steps, tmp_path / "again") is not None
    reference = make_session(lambda w, timeout=None: TextEditor(w, tool_type="text_editor_20250429"),
                             "text_editor_20250429", tmp_path)
    assert replay(reference, found.steps, tmp_path / "reference") is None


def test_strategies_cover_the_byte_properties() -> None:
    from hypothesis import find, settings

    from conformance.strategies import file_contents, file_names

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
