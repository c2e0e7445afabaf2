"""Conventions of real implementations the suite accepts (issue 15, calibration on the matrix).

- ``tests/conformant/bash_terminal_line_editing.py``: commands typed into a terminal, where
  control characters are line-editing keys (SWE-ReX, OpenHands' tmux terminal). The output checks
  send commands in printable ASCII (``bash.output.roundtrip`` prints its text through printf
  escapes), so this subject passes them.
- ``tests/conformant/bash_screen_rendering.py``: output returned as a terminal screen shows it
  (OpenHands' tmux terminal reads the pane): tabs as spaces, bell dropped, backspace applied. The
  MUST output checks print text without control characters; ``bash.output.control_characters``
  (INFO) reports the convention.
- ``tests/conformant/editor_size_limit.py``: an editor that refuses files and lines past a size
  limit with an error (the ``anthropic`` SDK's agent toolset does, at 256 KiB); the large-file
  and long-line checks accept the refusal and report it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from broken.editor_harness import run_checks
from hypothesis import given, settings
from hypothesis import strategies as st

import conformance.checks.editor  # noqa: F401
from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.checks.bash_output import printf_command
from conformance.results import Outcome
from conformance.subjects import factory_subject

CONFORMANT = Path(__file__).resolve().parent / "conformant"


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30))
def test_printf_command_is_printable_ascii_and_prints_the_text(text: str) -> None:
    command = printf_command(text)
    assert all(0x20 <= ord(c) < 0x7F for c in command), command
    out = subprocess.run(["bash", "-c", command], capture_output=True, check=True).stdout
    assert out == text.encode() + b"\n"


def test_terminal_line_editing_subject_mangles_control_characters() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tle", CONFORMANT / "bash_terminal_line_editing.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # what a terminal does to a command holding ^H, ^G and ^U: the convention is real
    assert mod.typed("printf '%s\\n' 'a\x08b\x07c'") == "printf '%s\\n' 'bc'"
    assert mod.typed("echo lost\x15echo kept") == "echo kept"


def test_terminal_line_editing_subject_passes_the_output_checks() -> None:
    subject = factory_subject(f"{CONFORMANT / 'bash_terminal_line_editing.py'}:factory",
                              family="bash", name="terminal-line-editing")
    summary = runner.run([subject], checks=["bash.output.*", "bash.session.*"], timeout=3.0,
                         jobs=4)
    bad = {r.check_id: r.message for r in summary.results
           if r.outcome in (Outcome.FAIL, Outcome.ERROR)
           and CATALOG[r.check_id].severity is not Severity.INFO}
    assert bad == {}
    assert {r.check_id for r in summary.results} >= {"bash.output.roundtrip"}


@pytest.mark.parametrize(("name", "convention"), [
    ("bash_screen_rendering", "rendered as a terminal shows them"),
    ("bash_terminal_line_editing", "returned as printed"),
])
def test_screen_rendering_passes_and_the_convention_is_reported(name: str,
                                                                convention: str) -> None:
    subject = factory_subject(f"{CONFORMANT / name}.py:factory", family="bash", name=name)
    summary = runner.run([subject], checks=["bash.output.*"], timeout=3.0, jobs=4)
    by_id = {r.check_id: r for r in summary.results}
    bad = {i: r.message for i, r in by_id.items() if r.outcome in (Outcome.FAIL, Outcome.ERROR)}
    assert bad == {}
    assert convention in by_id["bash.output.control_characters"].observed


@pytest.mark.parametrize("check_id", ["editor.bytes.large_file_preserved",
                                      "editor.bytes.long_lines_preserved"])
def test_a_size_limit_is_accepted_and_reported(check_id: str) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("esl", CONFORMANT / "editor_size_limit.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def make(workdir: Path, timeout: float | None = None) -> object:
        return mod.SizeLimited(workdir, tool_type="text_editor_20250728")

    out = run_checks(make, "text_editor_20250728", ids={check_id})[check_id]
    assert out.status == "pass", out
    assert "refused with an error (a size limit)" in out.observed
    assert "str_replace" in out.observed


def test_the_reference_editor_handles_every_size() -> None:
    from conformance.reference.editor import EDITOR_FACTORIES

    out = run_checks(EDITOR_FACTORIES["text_editor_20250728"], "text_editor_20250728",
                     ids={"editor.bytes.large_file_preserved"})
    assert out["editor.bytes.large_file_preserved"].observed == "large file: every command handled"
