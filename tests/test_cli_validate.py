"""``tooluse validate``: output format, exit codes, kinds, captures and cassettes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "P"}}


def _write(tmp_path: Path, name: str, data: Any) -> str:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(p)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["validate", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_valid_file_exits_0_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, _write(tmp_path, "b.json", TOOL_USE), "--strict") == (0, "", "")


def test_violations_are_printed_as_file_pointer_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, "b.json", {**TOOL_USE, "caller": {"type": "code_execution_20260521",
                                                           "tool_id": "srvtoolu_1"}})
    code, out, err = _run(capsys, f, "--strict")
    assert code == 1 and err == ""
    assert out.startswith(f"{f}:/caller/type: ") and "[ptc.caller.type]" in out


def test_lenient_notes_do_not_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, "b.json", {"type": "bash_code_execution_tool_result",
                                    "tool_use_id": "srvtoolu_1", "content": {
                                        "type": "bash_code_execution_tool_result_error",
                                        "error_code": "container_expired"}})
    code, out, _ = _run(capsys, f)
    assert code == 0 and f"{f}:/content/error_code: info: legacy error_code" in out
    assert _run(capsys, f, "-q") == (0, "", "")
    assert _run(capsys, f, "--strict")[0] == 1


@pytest.mark.parametrize("content,reason", [
    ("{broken", "broken JSON at line 1 column 2"),
    ("\xff", None),
])
def test_broken_json_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       content: str, reason: str | None) -> None:
    p = tmp_path / "x.json"
    if reason is None:
        p.write_bytes(b"\xff\xfe{")
        reason = "not UTF-8 text"
    else:
        p.write_text(content)
    code, out, err = _run(capsys, str(p))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and reason in err and "Traceback" not in err


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(tmp_path / "nope.json"), str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'nope.json'}: error: no such file" in err
    assert "is a directory" in err


def test_exit_2_wins_over_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, "bad.json", {"type": "tool_result"})
    assert _run(capsys, bad, str(tmp_path / "nope.json"))[0] == 2
    assert _run(capsys, str(tmp_path / "nope.json"), bad)[0] == 2


def test_kind_option_and_undetectable_json(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, "input.json", {"command": "undo_edit", "path": "/a"})
    code, _, err = _run(capsys, f)
    assert code == 2 and "pass --kind" in err
    assert _run(capsys, f, "--kind", "tool_input:text_editor_20250124")[0] == 0
    code, out, _ = _run(capsys, f, "--kind", "tool_input:text_editor_20250429")
    assert code == 1 and f"{f}:/command: unknown command" in out


def test_unknown_kind_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["validate", "--kind", "blob", _write(tmp_path, "a.json", {})])
    assert e.value.code == 2


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"type": "tool_result"})))
    code, out, _ = _run(capsys, "-")
    assert code == 1 and out.startswith("-:/: 'tool_use_id' is a required property")


def test_capture_wrapper_pointers_point_into_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capture = {"source": "x", "kind": "request", "note": "", "data": {
        "method": "POST", "url": "https://api.anthropic.com/v1/messages",
        "body": {"model": "m", "max_tokens": 0, "messages": []}}}
    f = _write(tmp_path, "cap.json", capture)
    code, out, _ = _run(capsys, f)
    assert code == 1 and out.startswith(f"{f}:/data/body/max_tokens: ")
    files_api = {**capture, "data": {"method": "GET", "url": "https://api.anthropic.com/v1/files/f",
                                     "body": None}}
    code, _, err = _run(capsys, _write(tmp_path, "files.json", files_api))
    assert code == 0 and "skipped" in err


def test_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette: dict[str, Any] = {"version": 1, "id": "t/x", "title": "t",
                "source": {"document": "PROTOCOL.md", "section": "1"},
                "exchanges": [{"request": {"method": "POST", "path": "/v1/messages", "body": {
                    "model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}},
                    "response": {"status": 200, "events": [
                        {"event": "ping", "data": {"type": "ping"}},
                        {"event": "error", "data": {"type": "error", "error": {
                            "type": "overloaded_error", "message": "Overloaded"}}}]}}]}
    assert _run(capsys, _write(tmp_path, "c.json", cassette), "--strict")[0] == 0
    cassette["exchanges"][0]["response"]["events"][0] = {"event": "ping", "data": {"type": "pong"}}
    f = _write(tmp_path, "c2.json", cassette)
    code, out, _ = _run(capsys, f)
    assert code == 1 and out.startswith(f"{f}:/exchanges/0/response/events/0/data/type: ")
    f3 = _write(tmp_path, "c3.json", {"version": 1, "exchanges": []})
    code, out, _ = _run(capsys, f3)
    assert code == 1 and "[cassette.format]" in out


def test_real_traffic_captures_validate(shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shared_dir / "real_traffic"
    files = sorted(str(p) for p in root.glob("*.json"))
    if not files:
        pytest.skip(f"no captures in {root}")
    code, out, err = _run(capsys, *files)
    assert code == 0, out[:2000]
    assert err.count("skipped") == 18
