"""``tooluse serve`` you can see (issue 41): a line per request naming what answered it, the same
as JSON lines with ``--log``, ``POST /_tooluse/reset`` starting every conversation over, a
conversation picked by name (``x-tooluse-cassette``), and a family served deterministically."""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator.cassette import Cassette, parse_cassette
from simulator.engine import Simulator
from simulator.finder import AGAIN_HINT, CASSETTE_HEADER
from simulator.http import SimRequest
from simulator.routes import build
from simulator.serve_console import RESET_PATH, ServeConsole

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package
from benchmarks import conversation  # noqa: E402

HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01",
           "x-api-key": "test-key"}


def family() -> tuple[list[Cassette], list[bytes]]:
    """Two conversations that start with the same request and answer differently."""
    pairs = conversation.build(2)
    other = copy.deepcopy(pairs)
    for _, response in other:
        response["id"] = response["id"].replace("Bench", "Other")
    first = parse_cassette(conversation.as_cassette(pairs, "first"))
    second = parse_cassette(conversation.as_cassette(other, "second"))
    return [first, second], [json.dumps(r).encode() for r, _ in pairs]


def post(handler: Any, body: bytes, **headers: str) -> tuple[int, Any]:
    resp = handler(SimRequest("POST", "/v1/messages", {**HEADERS, **headers}, body=body))
    return resp.status, resp.body


def run_client(handler: Any, bodies: list[bytes], **headers: str) -> list[str]:
    """The ids of the answers a client gets running the conversation once."""
    out = []
    for body in bodies:
        status, answer = post(handler, body, **headers)
        assert status == 200, answer
        out.append(answer["id"])
    return out


def console(cassettes: list[Cassette], **options: Any) -> tuple[ServeConsole, io.StringIO,
                                                                 io.StringIO]:
    out, log = io.StringIO(), io.StringIO()
    return ServeConsole(lambda: build(cassettes, **options), out=out, log=log), out, log


def test_each_request_is_one_line_naming_what_answered_it() -> None:
    cassettes, bodies = family()
    serve, out, log = console(cassettes)
    run_client(serve, bodies)
    assert post(serve, b'{"model": "claude-opus-5-5", "max_tokens": 5, "messages": []}')[0] == 400
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert "POST /v1/messages 200 served: bench/bash_20250124/first #0" in lines[0]
    assert "served: bench/bash_20250124/first #1" in lines[1]
    assert " 400 rule: " in lines[2]
    entries = [json.loads(x) for x in log.getvalue().splitlines()]
    assert [e["outcome"] for e in entries] == ["served", "served", "rule"]
    assert entries[0]["cassette"] == "bench/bash_20250124/first" and entries[0]["exchange"] == 0
    assert all(e["request_id"] and e["time"] for e in entries)


def test_a_matcher_refusal_is_logged_with_its_one_line_difference() -> None:
    cassettes, bodies = family()
    serve, out, _ = console(cassettes[:1])
    changed = json.loads(bodies[0])
    changed["tools"][0]["name"] = "shell"  # the tools matcher: a tool the recording lacks
    changed["tools"][0]["type"] = "custom"
    changed["tools"][0]["input_schema"] = {"type": "object"}
    status, _ = post(serve, json.dumps(changed).encode())
    assert status == 400
    line = out.getvalue().strip()
    assert " 400 matcher: tools: " in line and "(cassette bench/bash_20250124/first #0)" in line, line


def test_after_a_reset_a_second_run_is_identical_to_the_first() -> None:
    cassettes, bodies = family()
    serve, out, _ = console(cassettes)
    first = run_client(serve, bodies)
    reset = serve(SimRequest("POST", RESET_PATH, {}, body=b""))
    assert reset.status == 200 and reset.body["type"] == "reset"
    assert run_client(serve, bodies) == first
    assert " reset: every conversation starts over (2 cassette(s))" in out.getvalue()
    assert serve(SimRequest("GET", RESET_PATH, {}, body=b"")).status == 405


def test_served_already_and_exhausted_name_repeat_and_the_reset() -> None:
    cassettes, bodies = family()
    sim = Simulator(cassettes[:1])
    run_client(sim.handle, bodies)
    status, body = post(sim.handle, bodies[0])
    assert status == 400 and AGAIN_HINT in body["error"]["message"]
    assert "--repeat" in AGAIN_HINT and RESET_PATH in AGAIN_HINT


def test_a_client_names_the_conversation_it_wants() -> None:
    cassettes, bodies = family()
    sim = Simulator(cassettes)
    second = run_client(sim.handle, bodies, **{CASSETTE_HEADER: "bench/bash_20250124/second"})
    assert second == ["msg_01Other0000", "msg_01Other0001"]
    status, body = post(sim.handle, bodies[0], **{CASSETTE_HEADER: "nope"})
    assert status == 400 and "names no cassette served here" in body["error"]["message"]
    assert "`bench/bash_20250124/first`" in body["error"]["message"]


@pytest.mark.parametrize("times", [2, 3])
def test_under_repeat_a_family_serves_a_client_the_same_conversation_each_run(times: int) -> None:
    cassettes, bodies = family()
    sim = Simulator(cassettes, replay="repeat")
    runs = [run_client(sim.handle, bodies) for _ in range(times)]
    assert all(r == runs[0] for r in runs), runs
    # the other conversation is still there, by name
    picked = run_client(sim.handle, bodies, **{CASSETTE_HEADER: "second"})
    assert picked == ["msg_01Other0000", "msg_01Other0001"]


def test_serve_parser_has_log_and_quiet(tmp_path: Path) -> None:
    import argparse

    from conformance.cli import serve as serve_cli
    sub = argparse.ArgumentParser().add_subparsers()
    parser = serve_cli.add_parser(sub, "serve")
    args = parser.parse_args(["ptc", "--log", str(tmp_path / "log.jsonl"), "--quiet"])
    assert args.log.endswith("log.jsonl") and args.quiet
