"""Issue 23: the tolerant matcher set is one name on every surface that matches requests:
``Simulator``/``simulator.mock``, ``tooluse serve``/``tooluse replay --matching``, model mode, and
the loop harness (``run_loop(matching=...)``, ``--loop-matching``, ``tooluse_matching``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import pytest

import simulator
from conformance.cli import build_parser
from conformance.cli.replay import describe
from conformance.cli.serve import engine_options
from conformance.loops import BY_ID, loop_subject, run_loop
from conformance.reference.loop import loop as reference_loop
from simulator.engine import NORMALISED_HEADER
from simulator.http import SimRequest
from simulator.model_mode import ModelModeHandler
from simulator.routes import build, load_cassettes

PTC = "ptc/code_execution_20260120/pause_resume.json"


def framework_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tools as pydantic-ai sends them: client tools first, ``additionalProperties: false``."""
    out = copy.deepcopy(tools)
    for t in out:
        if "input_schema" in t:
            t["input_schema"]["additionalProperties"] = False
    return sorted(out, key=lambda t: "input_schema" not in t)


#: What every client sends (simulator.headers; the key is a placeholder).
API_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}


def first_request() -> dict[str, Any]:
    [c] = load_cassettes(PTC)
    body: dict[str, Any] = copy.deepcopy(c.exchanges[0].request["body"])
    body["tools"] = framework_tools(body["tools"])
    return body


def post(handler: Any, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    return handler(SimRequest("POST", "/v1/messages", {**API_HEADERS, **(headers or {})}, {},
                              json.dumps(body).encode()))


def test_mock_takes_the_set_by_name() -> None:
    body = first_request()
    with simulator.mock(PTC) as api:
        with pytest.raises(anthropic.BadRequestError, match="matcher `tools`"):
            anthropic.Anthropic().messages.create(**body)
    with simulator.mock(PTC, matchers="tolerant") as api:
        raw = anthropic.Anthropic().messages.with_raw_response.create(**body)
        assert "tools: order" in raw.headers[NORMALISED_HEADER]
        assert raw.parse().stop_reason == "tool_use"
        assert api.simulator is not None and api.simulator.served[0].normalised  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", ["serve", "replay"])
def test_serve_and_replay_take_matching(command: str) -> None:
    args = build_parser().parse_args([command, PTC, "--matching", "tolerant"])
    assert engine_options(args) == {"matchers": "tolerant"}
    assert engine_options(build_parser().parse_args([command, PTC])) == {}
    routes = build(PTC, **engine_options(args))
    resp = post(routes, first_request())
    assert resp.status == 200
    line = describe(SimRequest("POST", "/v1/messages", {}, {}, b"{}"), resp)
    assert "[normalised: tools: order" in line


def test_an_unknown_set_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["serve", PTC, "--matching", "loose"])
    assert e.value.code == 2 and "invalid choice: 'loose'" in capsys.readouterr().err


def test_model_mode_opening_takes_a_string_or_one_text_block() -> None:
    body = first_request()
    body["model"] = "claude-sonnet-4-6"  # model mode answers whatever the model
    body["messages"][0]["content"] = [{"type": "text", "text": body["messages"][0]["content"]}]
    exact = ModelModeHandler(load_cassettes(PTC))
    body_exact = copy.deepcopy(body)
    [c] = load_cassettes(PTC)
    body_exact["tools"] = c.exchanges[0].request["body"]["tools"]
    assert post(exact, body_exact).status == 400  # the opening compared verbatim
    assert exact.shared.mismatches[0].matcher == "opening"
    # the one-line difference names the first message's content (issue 37)
    assert exact.shared.mismatches[0].line.startswith("messages[0].content: recorded \"")
    tolerant = ModelModeHandler(load_cassettes(PTC), matchers="tolerant")
    resp = post(tolerant, body)
    assert resp.status == 200, resp.body
    notes = tolerant.shared.served[0].normalised
    assert any(n.startswith("opening: ") for n in notes) and any("tools: order" in n for n in notes)
    # with the scenario header, the per-cassette engine is tolerant too (and starts over alike)
    header = {"x-tooluse-scenario": c.id}
    assert post(tolerant, body, header).status == 200
    assert post(tolerant, body, header).status == 200


def reformatting_loop(client: Any, params: dict[str, Any], run_tool: Any = None) -> Any:
    """The reference loop, with its tools formatted as pydantic-ai formats them."""
    return reference_loop(client, {**params, "tools": framework_tools(params["tools"])}, run_tool)


def test_the_loop_harness_takes_matching() -> None:
    scenario = BY_ID["loop.ptc.pause_resume"]
    exact = run_loop(reformatting_loop, scenario)
    assert exact.refusals and exact.refusals[0].matcher == "tools"
    assert exact.mismatches[0][0].startswith("request 0 does not match the recording: tools")
    tolerant = run_loop(reformatting_loop, scenario, matching="tolerant")
    assert not tolerant.mismatches and not tolerant.violations and not tolerant.unserved
    assert tolerant.normalised and tolerant.normalised[0].startswith("exchange 0: tools: order")


def test_a_loop_subject_takes_matching_from_the_option_or_the_loop() -> None:
    spec = "tests.test_matching_surfaces:reformatting_loop"
    assert loop_subject(spec).matching_of(reformatting_loop) == "exact"
    assert loop_subject(spec, matching="tolerant").matching_of(reformatting_loop) == "tolerant"
    reformatting_loop.tooluse_matching = "tolerant"  # type: ignore[attr-defined]
    try:
        assert loop_subject(spec).matching_of(reformatting_loop) == "tolerant"
        assert loop_subject(spec, matching="exact").matching_of(reformatting_loop) == "exact"
    finally:
        del reformatting_loop.tooluse_matching  # type: ignore[attr-defined]
    args = build_parser().parse_args(["run", "--loop", spec, "--loop-matching", "tolerant"])
    assert args.loop_matching == "tolerant"


def test_a_loop_check_run_tolerant_says_what_was_normalised() -> None:
    from conformance import runner
    from conformance.results import Outcome

    spec = "tests.test_matching_surfaces:reformatting_loop"
    exact = runner.run([loop_subject(spec)], checks=["loop.ptc.pause_resume"], jobs=1)
    # refused by a matcher, not by a rule: not judged (SKIP), naming the first difference
    [refused] = exact.results
    assert refused.outcome is Outcome.SKIP, refused.message
    assert refused.message.startswith("not judged: request 0 does not match the recording: tools")
    summary = runner.run([loop_subject(spec, matching="tolerant")],
                         checks=["loop.ptc.pause_resume"], jobs=1)
    [result] = summary.results
    assert result.outcome is Outcome.PASS, result.message
    assert result.observed.startswith("requests matched after normalising their formatting")
    assert "tools: order" in result.observed
