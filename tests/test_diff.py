"""`tooluse diff`: results files and recorded traffic (the model-upgrade report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_reports_sample import sample_doc, sample_results

from conformance.cli import main
from conformance.reports.diff import DiffInputError, detect_kind, diff_paths, render_markdown
from conformance.results import Outcome

SRC = {"document": "PROTOCOL.md", "section": "test"}
TOOLS = [{"name": "get_weather", "description": "w",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]


def _req(messages: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return {"method": "POST", "path": "/v1/messages", "headers": {"anthropic-version": "2023-06-01"},
            "body": {"model": model, "max_tokens": 100, "messages": messages, "tools": TOOLS}}


def _msg(content: list[dict[str, Any]], stop: str, model: str) -> dict[str, Any]:
    return {"status": 200, "headers": {}, "body": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}


def _cassette(path: Path, cid: str, model: str, exchanges: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "id": cid, "title": cid, "source": SRC, "model": model,
                                "exchanges": exchanges}))


def _weather_conversation(model: str, *, extra_field: bool, stream: bool) -> list[dict[str, Any]]:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
    if extra_field:
        tool_use["caller"] = {"type": "direct"}
    first: dict[str, Any] = _msg([{"type": "text", "text": "Checking."}, tool_use], "tool_use", model)
    if stream:
        events = [
            {"event": "message_start", "data": {"type": "message_start", "message": {
                **first["body"], "content": [], "stop_reason": None}}},
            {"event": "content_block_start", "data": {"type": "content_block_start", "index": 0,
                                                      "content_block": {"type": "text", "text": ""}}},
            {"event": "content_block_delta", "data": {"type": "content_block_delta", "index": 0,
                                                      "delta": {"type": "text_delta", "text": "Checking."}}},
            {"event": "content_block_start", "data": {"type": "content_block_start", "index": 1,
                                                      "content_block": {**tool_use, "input": {}}}},
            {"event": "content_block_delta", "data": {"type": "content_block_delta", "index": 1,
                                                      "delta": {"type": "input_json_delta",
                                                                "partial_json": "{\"city\": \"Oslo\"}"}}},
            {"event": "message_delta", "data": {"type": "message_delta",
                                                "delta": {"stop_reason": "tool_use"}}},
            {"event": "message_stop", "data": {"type": "message_stop"}},
        ]
        first = {"status": 200, "headers": {}, "events": events}
    user = {"role": "user", "content": "Weather in Oslo?"}
    assistant = {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, tool_use]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "4°C"}]}
    return [{"request": _req([user], model), "response": first},
            {"request": _req([user, assistant, answer], model),
             "response": _msg([{"type": "text", "text": "4°C"}], "end_turn", model)}]


@pytest.fixture
def traffic(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "today", tmp_path / "candidate"
    _cassette(a / "weather.json", "custom/weather", "model-a",
              _weather_conversation("model-a", extra_field=False, stream=False))
    _cassette(a / "short.json", "custom/short", "model-a",
              [{"request": _req([{"role": "user", "content": "hi"}], "model-a"),
                "response": _msg([{"type": "text", "text": "hello"}], "end_turn", "model-a")}])
    _cassette(b / "weather.json", "custom/weather", "model-b",
              _weather_conversation("model-b", extra_field=True, stream=True))
    # B's client answers a tool_use that is not in the previous assistant turn: the API took it
    # when it was recorded, the simulator's rules refuse it.
    orphan = [{"role": "user", "content": "hi"},
              {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone",
                                            "content": "x"}]}]
    _cassette(b / "orphan.json", "custom/orphan", "model-b",
              [{"request": _req(orphan, "model-b"),
                "response": _msg([{"type": "text", "text": "?"}], "max_tokens", "model-b")}])
    return a, b


def test_traffic_diff_reports_drift(traffic: tuple[Path, Path]) -> None:
    d = diff_paths(*traffic)
    assert d["kind"] == "traffic"
    assert d["block_fields"] == {"tool_use": {"appeared": ["caller"], "vanished": []}}
    assert d["stop_reasons"]["appeared"] == ["max_tokens"]
    assert d["stop_reasons"]["counts"]["end_turn"] == {"a": 2, "b": 1, "a_share": 0.6667,
                                                       "b_share": 0.3333}
    # the streamed tool_use was assembled from its deltas
    assert d["tools_called"]["counts"]["get_weather"] == {"a": 1, "b": 1, "a_share": 1.0,
                                                          "b_share": 1.0}
    assert d["turns"]["a"]["histogram"] == {"1": 1, "2": 1}
    assert d["turns"]["b"]["max"] == 2 and d["b"]["models"] == {"model-b": 2}


def test_traffic_diff_replays_requests_through_rules(traffic: tuple[Path, Path]) -> None:
    pytest.importorskip("simulator.rules", reason="the simulator's rule registry is not installed")
    d = diff_paths(*traffic)
    ref = d["refusals"]
    assert ref["a"]["by_rule"] == {}
    assert ref["b"]["by_rule"] == {"messages.tool_result.answers_previous_tool_use": 1}
    assert ref["b"]["accepted_when_recorded"] == 1
    assert ref["b"]["examples"][0]["cassette"] == "custom/orphan"
    assert ref["newly_refused_rules"] == ["messages.tool_result.answers_previous_tool_use"]
    md = render_markdown(d)
    assert "**Rules refusing only B's requests:** `messages.tool_result.answers_previous_tool_use`" in md
    assert "| `tool_use` | `caller` | — |" in md


def test_traffic_diff_of_the_bundled_corpus_with_itself_is_empty() -> None:
    root = Path(__file__).resolve().parent.parent / "fixtures"
    if not any(root.rglob("*.json")):
        pytest.skip("the fixture corpus is not there yet")
    d = diff_paths(root, root)
    for key in ("block_types", "stop_reasons", "error_codes", "tools_called"):
        assert not d[key]["appeared"] and not d[key]["vanished"]
    assert d["block_fields"] == {}
    # every refusal the rules produce on the corpus is one the API produced when recorded
    assert d["refusals"]["a"].get("accepted_when_recorded", 0) == 0, d["refusals"]["a"]["examples"]


def _results_pair(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    sample_doc(tmp_path / "a")
    after = sample_results()
    after[4].outcome = Outcome.PASS        # broken-editor view_line_numbers fixed
    after[0].outcome = Outcome.FAIL        # reference-bash session regressed
    after = [r for r in after if r.check_id != "bash.demo.restart_observed"]  # removed
    extra = sample_results()[3]
    extra.check_id = "editor.demo.brand_new"
    sample_doc(tmp_path / "b", results=[*after, extra])
    return tmp_path / "a" / "results.json", tmp_path / "b"


def test_results_diff(tmp_path: Path, snapshot: Any) -> None:
    a, b = _results_pair(tmp_path)
    d = diff_paths(a, b)  # B given as a run directory
    assert d["counts"] == {"regressions": 1, "fixed": 1, "flaky": 0, "changed": 0, "new": 1,
                           "removed": 1}
    reg = next(c for c in d["changed"] if c["kind"] == "regression")
    assert (reg["subject"], reg["check_id"], reg["before"], reg["after"]) == (
        "reference-bash", "bash.demo.session_persists", "pass", "fail")
    for side in ("a", "b"):  # volatile: versions and paths
        d[side].update(suite_version="<v>", anthropic_sdk_version="<v>", path=f"<{side}>")
    md = render_markdown(d)
    assert md == snapshot


def test_cli_diff_formats_out_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _results_pair(tmp_path)
    assert main(["diff", str(a), str(b)]) == 0
    assert "## tooluse diff: results" in capsys.readouterr().out
    out = tmp_path / "diff.json"
    assert main(["diff", str(a), str(b), "--format", "json", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["counts"]["regressions"] == 1
    assert main(["diff", str(a), str(b), "--fail-on-regression"]) == 1
    assert main(["diff", str(a), str(a), "--fail-on-regression"]) == 0


def test_cli_diff_refuses_mixed_or_bad_inputs(tmp_path: Path, traffic: tuple[Path, Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _results_pair(tmp_path)
    assert main(["diff", str(a), str(traffic[0])]) == 2
    err = capsys.readouterr().err
    assert "cannot compare results" in err and "Traceback" not in err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["diff", str(bad), str(a)]) == 2
    assert "neither a results.json" in capsys.readouterr().err
    assert main(["diff", str(tmp_path / "missing"), str(a)]) == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.json").write_text('{"version": 1}')
    assert main(["diff", str(broken), str(traffic[1])]) == 2
    assert "missing required field 'id'" in capsys.readouterr().err


def test_detect_kind(tmp_path: Path, traffic: tuple[Path, Path]) -> None:
    a, _ = _results_pair(tmp_path)
    assert detect_kind(a)[0] == "results"
    assert detect_kind(a.parent) == ("results", a)
    assert detect_kind(traffic[0])[0] == "traffic"
    assert detect_kind(traffic[0] / "weather.json")[0] == "traffic"
    with pytest.raises(DiffInputError, match="no such file"):
        detect_kind(tmp_path / "nope")


@pytest.mark.shared
def test_diff_of_captured_live_traffic(shared_dir: Path, tmp_path: Path) -> None:
    """Two slices of the real captures (linked, not copied): the SDK's vs pydantic-ai's traffic."""
    real = shared_dir / "real_traffic"
    if not real.is_dir():
        pytest.skip(f"{real} is absent")
    a, b = tmp_path / "pysdk", tmp_path / "llmanth"
    for d, prefix in ((a, "pysdk__"), (b, "llmanth__")):
        d.mkdir()
        for f in real.glob(f"{prefix}*.json"):
            (d / f.name).symlink_to(f)
    d = diff_paths(a, b)
    assert d["kind"] == "traffic" and d["a"]["cassettes"] > 5 and d["b"]["cassettes"] > 5
    # llm-anthropic's captures include code execution 20260521; the SDK's include PTC callers
    assert "code_execution_20260521" in d["tool_types"]["counts"]
    assert d["stop_reasons"]["counts"]["end_turn"]["a"] > 0
    assert d["turns"]["a"]["max"] >= 2  # tool-runner conversations span several requests
    text = render_markdown(d)
    assert "### Stop reasons" in text and "### Turns per conversation" in text


@pytest.mark.shared
def test_every_capture_is_read_and_replayed_without_crashing(shared_dir: Path) -> None:
    from conformance.reports.captures import load_capture_dir
    from conformance.reports.diff_traffic import collect_side

    real = shared_dir / "real_traffic"
    if not real.is_dir():
        pytest.skip(f"{real} is absent")
    cassettes = load_capture_dir(real)
    responses = sum(1 for p in real.glob("*.json")
                    if json.loads(p.read_text())["kind"] in ("response", "sse_events", "error"))
    assert sum(len(c.exchanges) for c in cassettes) == responses
    side = collect_side(cassettes)
    assert not [r for r in side.refusals if r.rule_id == "<rule crashed>"]
    assert side.stats.stop_reasons["tool_use"] > 50 and side.stats.tools_called
