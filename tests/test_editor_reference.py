"""The reference editors pass every editor check, byte-exactly; the model agrees with them."""

from __future__ import annotations

from pathlib import Path

import pytest
from broken.editor_harness import failing, run_checks
from hypothesis import given, settings
from hypothesis import strategies as st

import conformance.checks.editor  # noqa: F401
from conformance.properties.editor_model import EditorModel, insert_outcomes, lines_of
from conformance.properties.strategies import edit_texts, file_contents
from conformance.reference.editor import (
    EDITOR_FACTORIES,
    FILE_NOT_FOUND,
    NO_MATCH,
    TextEditor,
)


@pytest.mark.parametrize("tool_type", sorted(EDITOR_FACTORIES))
def test_reference_passes_every_editor_check(tool_type: str) -> None:
    # the sandbox check watches a subject process; this harness calls the editor in-process
    results = run_checks(EDITOR_FACTORIES[tool_type], tool_type,
                         exclude={"editor.model.agrees_with_reference_model",
                                  "editor.sandbox.stays_in_its_case"})
    assert failing(results) == set()
    assert all(r.status == "pass" for r in results.values())


def test_documented_error_texts(tmp_path: Path) -> None:
    ed = TextEditor(tmp_path, tool_type="text_editor_20250429")
    (tmp_path / "f.txt").write_bytes(b"x\nx\nx\n")
    assert ed({"command": "view", "path": str(tmp_path / "nope")}) == \
        {"content": FILE_NOT_FOUND, "is_error": True}
    assert ed({"command": "str_replace", "path": str(tmp_path / "f.txt"), "old_str": "y",
               "new_str": "z"}) == {"content": NO_MATCH, "is_error": True}
    out = ed({"command": "str_replace", "path": str(tmp_path / "f.txt"), "old_str": "x",
              "new_str": "z"})
    assert out == {"content": "Error: Found 3 matches for replacement text. Please provide more "
                              "context to make a unique match.", "is_error": True}
    assert (tmp_path / "f.txt").read_bytes() == b"x\nx\nx\n"


def test_undo_refused_on_later_versions_and_kept_on_earlier(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\n")
    for tool_type, refused in (("text_editor_20250124", False), ("text_editor_20250728", True)):
        ed = TextEditor(tmp_path, tool_type=tool_type)
        ed({"command": "str_replace", "path": str(tmp_path / "f.txt"), "old_str": "a",
            "new_str": "b"})
        assert ed({"command": "undo_edit", "path": str(tmp_path / "f.txt")})["is_error"] is refused
        (tmp_path / "f.txt").write_bytes(b"a\n")


def test_max_characters_only_on_20250728(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_characters"):
        TextEditor(tmp_path, tool_type="text_editor_20250429", max_characters=10)
    with pytest.raises(ValueError, match="not a text editor tool type"):
        TextEditor(tmp_path, tool_type="bash_20250124")


@settings(max_examples=40, deadline=None)
@given(data=file_contents(), text=edit_texts(), where=st.integers(0, 8))
def test_reference_insert_is_one_of_the_model_outcomes(tmp_path_factory: pytest.TempPathFactory,
                                                       data: bytes, text: str,
                                                       where: int) -> None:
    d = tmp_path_factory.mktemp("ins")
    line = min(where, len(lines_of(data)))
    (d / "f").write_bytes(data)
    out = TextEditor(d, tool_type="text_editor_20250728")(
        {"command": "insert", "path": str(d / "f"), "insert_line": line, "insert_text": text})
    assert not out["is_error"]
    assert (d / "f").read_bytes() in insert_outcomes(data, line, text.encode())


@settings(max_examples=40, deadline=None)
@given(data=file_contents(), old=st.text("ab\n\r", min_size=1, max_size=3), new=edit_texts())
def test_reference_str_replace_agrees_with_model(tmp_path_factory: pytest.TempPathFactory,
                                                 data: bytes, old: str, new: str) -> None:
    d = tmp_path_factory.mktemp("rep")
    path = str(d / "f")
    (d / "f").write_bytes(data)
    model = EditorModel("text_editor_20250429", files={path: data})
    tool_input = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
    expectation = model.expect(tool_input)
    out = TextEditor(d, tool_type="text_editor_20250429")(tool_input)
    assert expectation.matching(out["is_error"], (d / "f").read_bytes()) is not None


def test_directory_view_lists_without_a_shell(tmp_path: Path) -> None:
    weird = tmp_path / f"$(touch {tmp_path}/PWNED)"
    weird.mkdir(parents=True)
    (weird / "inside.txt").write_bytes(b"x")
    out = TextEditor(tmp_path, tool_type="text_editor_20250728")(
        {"command": "view", "path": str(weird)})
    assert not out["is_error"] and "inside.txt" in out["content"]
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(("data", "line", "text", "want"), [
    (b"", 0, b"x", b"x"),
    (b"a\nb", 2, b"c", b"a\nb\nc"),              # still no final newline
    (b"a\nb", 2, b"c\n", b"a\nb\nc"),
    (b"a\r\nb\r\n", 1, b"m", b"a\r\nm\r\nb\r\n"),  # the file's own terminator
    (b"a\rb\nc\n", 1, b"m\n", b"a\rb\nm\nc\n"),     # a lone CR does not end a line
])
def test_insert_after_line_keeps_everything_else(data: bytes, line: int, text: bytes,
                                                 want: bytes) -> None:
    from conformance.reference.editor_text import insert_after_line

    assert insert_after_line(data, line, text) == want
    assert want in insert_outcomes(data, line, text)


def test_view_range_over_a_long_line_file_and_truncation(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"x" * 50 + b"\n" + b"tail\n")
    ed = TextEditor(tmp_path, tool_type="text_editor_20250728", max_characters=20)
    out = ed({"command": "view", "path": str(tmp_path / "f.txt")})
    assert out["content"].startswith("1: " + "x" * 17) and "tail" not in out["content"]
    assert "truncated to 20 characters" in out["content"]


def test_max_characters_check_skips_without_a_declared_limit(tmp_path: Path) -> None:
    from broken.editor_harness import make_session

    from conformance.catalog import CATALOG, CheckSkipped

    s = make_session(EDITOR_FACTORIES["text_editor_20250728"], "text_editor_20250728", tmp_path)
    with pytest.raises(CheckSkipped, match="max_characters"):
        CATALOG["editor.view.max_characters_truncates"].func(s)


def test_undo_of_a_create_as_created_is_the_created_text() -> None:
    """An editor that keeps each created text as a version (the vendor's reference): create 'x',
    create '' over it, undo twice. The first undo leaves '' (as created), the second writes 'x'
    back, the text of the create it undoes; the file as it is then ('') is not that text. The
    model once took 'as created' for the current content and failed this conformant editor (a
    case the model check reached once its examples no longer depended on the process)."""
    path = "/w/a.txt"
    model = EditorModel("text_editor_20250124")
    steps: list[tuple[dict[str, str], bytes]] = [
        ({"command": "create", "path": path, "file_text": "x"}, b"x"),
        ({"command": "create", "path": path, "file_text": ""}, b""),
        ({"command": "undo_edit", "path": path}, b""),
        ({"command": "undo_edit", "path": path}, b"x")]
    for tool_input, after in steps:
        outcome = model.expect(tool_input).matching(False, after)
        assert outcome is not None, (tool_input, after)
        model.commit(path, outcome)
    # ... and an editor that restores the state before each create ends with no file.
    model = EditorModel("text_editor_20250124")
    for tool_input, after in [*steps[:2], (steps[2][0], b"x"), (steps[3][0], b"")]:
        outcome = model.expect(tool_input).matching(False, after)
        assert outcome is not None, (tool_input, after)
        model.commit(path, outcome)
    assert model.files.get(path) in (None, b"")


@given(st.binary(max_size=40), st.binary(max_size=40), st.binary(max_size=8))
def test_the_first_difference_of_two_byte_strings(common: bytes, a: bytes, b: bytes) -> None:
    """What the editor.bytes checks locate an edit by (a halving search, issue 21): the index
    of the first differing byte, or the shorter one's length."""
    from conformance.checks.editor_bytes import _first_difference

    x, y = common + a, common + b
    pairs = enumerate(zip(x, y, strict=False))
    want = next((k for k, (p, q) in pairs if p != q), min(len(x), len(y)))
    assert _first_difference(x, y) == want == _first_difference(y, x)
