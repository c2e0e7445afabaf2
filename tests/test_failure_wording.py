"""Issue 41: a failure reads as text, not as Python. The model checks' block in the terminal keeps
its indentation and says each thing once; values are words or quoted text (``file now empty``,
``"a\\tb"``), never reprs (``b''``, ``[('error', b'\\n')]``); counts agree with their nouns
(``1 step``) in every renderer, through one helper (:mod:`conformance.wording`)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_reports_sample import SUBJECTS, sample_doc

from conformance.catalog import CATALOG
from conformance.properties.bash_model import INITIAL, Mismatch, SessionModel, compare
from conformance.properties.bash_read_back import documented_state
from conformance.reports import render_html, render_junit, render_markdown
from conformance.reports.summary import indented, print_summary, readable
from conformance.reproducers import describe_setup, setup_step
from conformance.results import CheckResult, Outcome, RunInfo
from conformance.runner import run_case
from conformance.subjects import factory_subject
from conformance.wording import one_of, plural, quoted, shown_bytes

HERE = Path(__file__).resolve().parent
MODEL_CHECK = "editor.model.agrees_with_reference_model"

#: What a Python repr of bytes or of a list of tuples looks like in a message.
REPR = re.compile(r"\bb'|\[\('|\('(?:error|success)'")


# -- the helpers ----------------------------------------------------------------------------------

def test_plural_agrees_with_the_count() -> None:
    assert plural(1, "step") == "1 step" and plural(2, "step") == "2 steps"
    assert plural(0, "check") == "0 checks"
    assert plural(1, "directory", "directories") == "1 directory"
    assert plural(3, "directory", "directories") == "3 directories"


def test_bytes_read_as_words_or_quoted_text() -> None:
    assert shown_bytes(None) == "absent" and shown_bytes(b"") == "empty"
    assert shown_bytes(b"y") == '"y"'
    assert shown_bytes(b"\n\n") == '"\\n\\n"'
    assert shown_bytes(b"a\tb\r\n") == '"a\\tb\\r\\n"'
    assert shown_bytes("é".encode()) == '"é"'  # readable text stays readable
    assert shown_bytes(b"\xff\x00") == '"\\xff\\x00"'  # a byte that is no UTF-8, a NUL
    assert shown_bytes(b"x" * 500, 10) == '"xxxxxxxxxx"… (490 more characters)'
    assert one_of(["a"]) == "a" and one_of(["a", "b", "a"]) == "one of: a; b"


@given(st.binary(max_size=64))
def test_any_bytes_show_on_one_printable_line(data: bytes) -> None:
    text = shown_bytes(data)
    assert text.isprintable() and "\n" not in text
    assert not REPR.search(text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf", "Co",
                                                             "Cn", "Zs"),
                                      blacklist_characters='"\\'), max_size=40))
def test_printable_text_is_shown_as_itself_between_quotes(text: str) -> None:
    assert quoted(text) == f'"{text}"'


# -- the model checks' messages -------------------------------------------------------------------

def _two_bugs(tmp_path: Path) -> CheckResult:
    subject = factory_subject(f"{HERE / 'model_editors.py'}:TwoBugs.factory", family="editor",
                              tool_type="text_editor_20250429")
    r = run_case(subject, CATALOG[MODEL_CHECK], timeout=3.0, tmp_root=tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    return r


def _terminal(r: CheckResult) -> str:
    out = io.StringIO()
    print_summary(SimpleNamespace(
        results=[r], blocking=lambda: [r], ok=False, strict=False, duration=1.0,
        plan=SimpleNamespace(info=RunInfo(subjects=[]), subjects=[]),
        counts=lambda: {"pass": 0, "fail": 1, "skip": 0, "error": 0}), out)
    return out.getvalue()


def test_the_editor_model_block_is_indented_said_once_and_plain(tmp_path: Path) -> None:
    r = _two_bugs(tmp_path)
    text = _terminal(r)
    block = text.split("\n\n")[0].splitlines()
    assert block[0].startswith("FAIL  MUST   " + MODEL_CHECK)
    # Every line of the failure's block sits under its heading, the message's too.
    assert all(line.startswith("      ") for line in block[1:]), text
    # The setup and the verification are the reproducer's, printed once after the message.
    for setup in (r.setup or []):
        assert text.count(describe_setup(setup)) == 1, text
    assert text.count("verified: replayed exactly") == 1 + r.message.count("verified: replayed")
    assert "1 tool input in order" in r.message and "1 tool inputs" not in text
    # Values in words: the file's content quoted, the alternatives listed, no repr.
    assert not REPR.search(text), text
    assert re.search(r'received:   (success|error) ".*"; file now ("|empty|absent)', text), text
    assert re.search(r"documented: one of: (success|error), file ", text), text


def test_the_bash_model_says_what_it_expected_in_words() -> None:
    m = SessionModel(base="/w")
    m.umask = {"0027"}
    m.functions["tu_fn_one"] = {"x 19"}
    shown = {"cwd": "/w", "umask": "0022", "fn:tu_fn_one": "@unset"}
    for n, allowed in m.variables.items():
        shown[f"var:{n}"], shown[f"env:{n}"] = "@unset", ""
        assert allowed == {(None, False)}
    for n in m.aliases:
        shown[f"alias:{n}"] = "@unset"
    for n in m.functions:
        shown.setdefault(f"fn:{n}", "@unset")
    for n in m.shopts:
        shown[f"shopt:{n}"] = f"shopt -u {n}"
    m.cwd = {INITIAL}
    found = {x.component: x for x in compare(m, shown)}
    assert found["umask"].allowed == "0027"
    assert found["fn"].allowed == '"x 19"' and found["fn"].shown == "unset"
    assert documented_state([found["umask"], found["fn"]]) == \
        'the umask: 0027; the function tu_fn_one: "x 19"'
    assert documented_state([Mismatch("missing", "umask", "(no @umask line)", "every @ line")]) \
        == "umask: every @ line"


def test_a_setup_step_is_described_as_text() -> None:
    assert describe_setup(setup_step(1, "$W/a.txt", data=b"one\n")).endswith('with "one\\n"')
    assert describe_setup(setup_step(1, "$W/a.txt", data=b"")).endswith(
        "with nothing (an empty file)")
    assert describe_setup(setup_step(2, "$W/b", data=b"\xff")).endswith('with "\\xff"')


def test_a_message_of_several_lines_keeps_the_indentation() -> None:
    assert indented("first\nsecond\n\n  third") == "      first\n      second\n\n        third"
    assert readable('success "x"; file now empty') == 'success "x"; file now empty'
    assert readable("two\nlines") == '"two\\nlines"'  # not one readable line: JSON, escaped


# -- one plural in every renderer -----------------------------------------------------------------

def test_every_renderer_says_1_step_and_1_check(tmp_path: Path, monkeypatch: Any) -> None:
    from conformance.pytest.items import describe

    r = CheckResult(check_id="editor.demo.view_line_numbers", subject=SUBJECTS[2].name,
                    tool_type=SUBJECTS[2].tool_type, family="editor", severity="MUST",
                    outcome=Outcome.FAIL, duration=0.1, message="one line\nand another",
                    reproducer=[{"command": "view", "path": "/w/a"}])
    doc = sample_doc(tmp_path, results=[r], monkeypatch=monkeypatch)
    texts = {"markdown": render_markdown(doc), "html": render_html(doc),
             "junit": render_junit(doc), "terminal": _terminal(r),
             "pytest": describe(CATALOG["bash.session.cwd_persists"], r)}
    for name, text in texts.items():
        assert not re.search(r"\b1 (steps|checks|tool inputs|lines|failures)\b", text), name
    assert "Reproducer (1 step)" in texts["markdown"] and "(1 step)" in texts["html"]
    assert "  one line\n  and another" in texts["pytest"]
