"""``tooluse lint-fixtures``: the corpus lints clean, and each kind of broken cassette is reported
with its file and a JSON pointer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from simulator.lint import STEPS, Problem, lint_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ONE_COMMAND = "bash/bash_20250124/one_command"
BASH_RUN = "code_execution/code_execution_20250825/bash_run"


def test_the_whole_corpus_lints_clean() -> None:
    report = lint_paths(FIXTURES)
    assert report.checked > 200
    assert report.problems == []


def _copy(tmp_path: Path, cid: str) -> tuple[Path, dict[str, Any]]:
    dest = tmp_path / f"{cid}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / f"{cid}.json", dest)
    return dest, json.loads(dest.read_text(encoding="utf-8"))


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _problems(tmp_path: Path, step: str | None = None) -> list[Problem]:
    report = lint_paths(tmp_path)
    return [p for p in report.problems if step is None or p.step == step]


def test_a_copy_of_a_clean_cassette_stays_clean(tmp_path: Path) -> None:
    _copy(tmp_path, ONE_COMMAND)
    assert _problems(tmp_path) == []


def test_broken_json_names_file_and_position(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path, ONE_COMMAND)
    path.write_text(path.read_text(encoding="utf-8")[:-20], encoding="utf-8")
    [p] = _problems(tmp_path)
    assert (p.path, p.pointer, p.step) == (str(path), "/", "load")
    assert "broken JSON at line" in p.message


def test_wrong_block_shape_is_a_schema_problem_with_its_pointer(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, BASH_RUN)
    del data["exchanges"][0]["response"]["body"]["content"][2]["content"]["return_code"]
    _write(path, data)
    ptrs = {p.pointer for p in _problems(tmp_path, "schema")}
    assert "/exchanges/0/response/body/content/2/content" in ptrs or \
        "/exchanges/0/response/body/content/2/content/return_code" in ptrs, ptrs


def test_planted_secret_is_reported_at_its_header(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, ONE_COMMAND)
    data["exchanges"][1]["request"]["headers"]["x-api-key"] = "sk-ant-api03-" + "A" * 40
    _write(path, data)
    found = _problems(tmp_path, "secrets")
    assert found and all(p.path == str(path) for p in found)
    assert "/exchanges/1/request/headers/x-api-key" in {p.pointer for p in found}


def test_a_response_that_does_not_replay_is_reported(tmp_path: Path) -> None:
    """The recorded follow-up answers an id Claude never used: the engine refuses it with 400."""
    path, data = _copy(tmp_path, ONE_COMMAND)
    data["exchanges"][1]["request"]["body"]["messages"][2]["content"][0]["tool_use_id"] = "toolu_01Nope"
    _write(path, data)
    [p] = _problems(tmp_path, "replay")
    assert p.pointer == "/exchanges/1/response/status"
    assert "replayed status 400, recorded 200" in p.message


def test_an_expect_rule_the_request_does_not_break_is_reported(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, "bash/bash_20250124/reject_wrong_name")
    data["exchanges"][0]["request"]["body"]["tools"][0]["name"] = "bash"
    _write(path, data)
    [p] = _problems(tmp_path, "replay")
    assert p.pointer == "/exchanges/0/expect_rule"
    assert "tools.fixed_type_name" in p.message


def test_a_response_the_sdk_cannot_parse_is_reported(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, ONE_COMMAND)
    data["exchanges"][0]["response"]["body"]["stop_reason"] = "finished"
    _write(path, data)
    assert "/exchanges/0/response/body/stop_reason" in {p.pointer for p in _problems(tmp_path, "sdk")}


def test_a_broken_stream_is_reported_by_reassembly(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, BASH_RUN + "_streamed")
    events = data["exchanges"][0]["response"]["events"]
    i = next(k for k, e in enumerate(events) if e["data"].get("delta", {}).get("type") == "input_json_delta"
             and e["data"]["delta"]["partial_json"])
    events[i]["data"]["delta"]["partial_json"] = "{\"comm"
    _write(path, data)
    sdk = [p for p in _problems(tmp_path, "sdk") if "input_json_delta" in p.message]
    assert sdk and sdk[0].pointer.startswith("/exchanges/0/response/events/")


def test_id_must_match_the_path_and_tags_the_traffic(tmp_path: Path) -> None:
    path, data = _copy(tmp_path, ONE_COMMAND)
    data["tags"]["stop_reasons"] = ["end_turn"]
    path.rename(path.with_name("renamed.json"))
    _write(path.with_name("renamed.json"), data)
    msgs = {p.pointer: p.message for p in _problems(tmp_path, "identity")}
    assert "does not match the file path" in msgs["/id"]
    assert "tool_use" in msgs["/tags/stop_reasons"]


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, data = _copy(tmp_path, ONE_COMMAND)
    assert main(["lint-fixtures", str(tmp_path)]) == 0
    data["exchanges"][0]["response"]["body"]["content"] = "not a list"
    _write(path, data)
    assert main(["lint-fixtures", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:/exchanges/0/response/body/content" in out
    assert main(["lint-fixtures", str(tmp_path / "nowhere")]) == 2
    assert main(["lint-fixtures", str(tmp_path), "--skip", "replay", "--skip", "sdk",
                 "--skip", "schema", "--skip", "identity"]) == 0
    assert STEPS[0] == "load"


def test_several_targets_are_linted_in_one_run(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Like ruff or mypy: every path given is linted, one summary; a bad path is a usage error
    before anything is linted."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    _copy(good, ONE_COMMAND)
    path, data = _copy(bad, ONE_COMMAND)
    data["exchanges"][0]["response"]["body"]["content"] = "not a list"
    _write(path, data)
    assert main(["lint-fixtures", str(good), str(good)]) == 0
    assert "2 cassette(s) linted: clean" in capsys.readouterr().err
    assert main(["lint-fixtures", str(good), str(bad)]) == 1
    out, err = capsys.readouterr()
    assert str(path) in out and "2 cassette(s) linted:" in err and "in 1 file(s)" in err
    assert main(["lint-fixtures", str(good), str(tmp_path / "nowhere")]) == 2
    assert "linted" not in capsys.readouterr().err


def test_a_file_linted_alone_is_checked_against_its_last_three_path_parts(tmp_path: Path) -> None:
    path, _ = _copy(tmp_path, ONE_COMMAND)
    assert lint_paths(path).problems == []
    moved = tmp_path / "bash" / "bash_20250124" / "other_name.json"
    path.rename(moved)
    [p] = [p for p in lint_paths(moved).problems if p.step == "identity"]
    assert (p.path, p.pointer) == (str(moved), "/id")
