"""Adapters for the anthropic SDK's own tools, run through the editor checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from broken.editor_harness import make_session, run_checks

import conformance.checks.editor  # noqa: F401

sdk = pytest.importorskip("anthropic.lib.tools.agent_toolset")
from conformance.adapters import anthropic_sdk  # noqa: E402

T = "text_editor_20250728"


def test_memory_tool_adapter_maps_paths_and_is_caught_where_it_deviates() -> None:
    r = run_checks(anthropic_sdk.memory_tool_editor, T,
                   ids={"editor.str_replace.rejects_multiple_matches",
                        "editor.view.directory_lists_entries",
                        "editor.errors.returned_not_raised",
                        "editor.bytes.trailing_newline_preserved"})
    assert r["editor.str_replace.rejects_multiple_matches"].status == "pass"
    assert r["editor.view.directory_lists_entries"].status == "pass"
    # SDK 2.10: an input without a command raises NotImplementedError; insert adds a final newline.
    assert r["editor.errors.returned_not_raised"].status == "fail"
    assert r["editor.bytes.trailing_newline_preserved"].status == "fail"


def test_agent_toolset_editor_profile(tmp_path: Path) -> None:
    s = make_session(anthropic_sdk.agent_toolset_editor, T, tmp_path)
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    assert s.call({"command": "view", "path": str(tmp_path / "f.txt")}).text == "a\r\nb\r\n"
    r = s.call({"command": "str_replace", "path": str(tmp_path / "f.txt"), "old_str": "b",
                "new_str": "c"})
    assert not r.is_error and (tmp_path / "f.txt").read_bytes() == b"a\r\nc\r\n"
    r = s.call({"command": "insert", "path": str(tmp_path / "f.txt"), "insert_line": 0,
                "insert_text": "x"})
    assert r.is_error and "no equivalent" in r.text
    s.close()


def test_agent_toolset_bash_adapter(tmp_path: Path) -> None:
    s = make_session(anthropic_sdk.agent_toolset_bash, "bash_20250124", tmp_path)
    try:
        assert s.call({"command": "cd /; export X=7"}).is_error is False
        assert s.call({"command": "echo $X; pwd"}).text.split() == ["7", "/"]
    finally:
        s.close()
