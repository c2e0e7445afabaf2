"""Required headers (simulator.headers): a request without ``x-api-key`` (and no bearer token) is
answered 401 ``authentication_error``, one without ``anthropic-version`` 400, as the live API
answers; the option and the environment variable turn the checks off."""

from __future__ import annotations

import json

import pytest
from _simkit import body, cassette, exchange, message, text, user

from simulator.engine import Simulator
from simulator.headers import NO_API_KEY, NO_VERSION, replay_headers
from simulator.http import SimRequest

BODY = body([user("hi")])


def sim(**opts: object) -> Simulator:
    return Simulator(cassette(exchange(BODY, message([text("ok")]))), **opts)  # type: ignore[arg-type]


def ask(s: Simulator, headers: dict[str, str], path: str = "/v1/messages") -> tuple[int, object]:
    r = s(SimRequest("POST", path, {"content-type": "application/json", **headers},
                     body=json.dumps(BODY).encode()))
    return r.status, r.body


def test_no_api_key_is_answered_401_as_the_api_does() -> None:
    status, got = ask(sim(), {"anthropic-version": "2023-06-01"})
    assert status == 401
    assert isinstance(got, dict) and got["type"] == "error"
    assert got["error"] == {"type": "authentication_error", "message": NO_API_KEY}
    assert got["request_id"].startswith("req_")
    assert NO_API_KEY == "x-api-key header is required"


def test_no_version_is_answered_400_and_the_key_is_checked_first() -> None:
    status, got = ask(sim(), {"x-api-key": "k"})
    assert status == 400 and isinstance(got, dict)
    assert got["error"] == {"type": "invalid_request_error",
                            "message": "anthropic-version: header is required"} \
        == {"type": "invalid_request_error", "message": NO_VERSION}
    assert ask(sim(), {})[0] == 401
    assert ask(sim(), {"x-api-key": " ", "anthropic-version": "2023-06-01"})[0] == 401


def test_a_bearer_token_stands_for_the_key() -> None:
    assert ask(sim(), {"authorization": "Bearer tok", "anthropic-version": "2023-06-01"})[0] == 200
    assert ask(sim(), {"authorization": "Basic tok", "anthropic-version": "2023-06-01"})[0] == 401
    assert ask(sim(), {"authorization": "Bearer ", "anthropic-version": "2023-06-01"})[0] == 401


def test_count_tokens_is_checked_too() -> None:
    assert ask(sim(), {}, "/v1/messages/count_tokens")[0] == 401
    assert ask(sim(), {"x-api-key": "k", "anthropic-version": "2023-06-01"},
               "/v1/messages/count_tokens")[0] == 200


def test_the_checks_turn_off_by_option_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask(sim(check_headers=False), {})[0] == 200
    monkeypatch.setenv("TOOLUSE_HEADER_CHECKS", "0")
    assert ask(sim(), {})[0] == 200
    assert ask(sim(check_headers=True), {})[0] == 401  # the option wins over the environment


def test_a_refused_request_consumes_no_exchange() -> None:
    s = sim()
    assert ask(s, {})[0] == 401
    assert not s.served
    assert ask(s, {"x-api-key": "k", "anthropic-version": "2023-06-01"})[0] == 200


def test_replayed_requests_get_placeholders_only_where_the_recorder_dropped_them() -> None:
    got = replay_headers({"Anthropic-Version": "2024-01-01", "anthropic-beta": "x"})
    assert got == {"anthropic-version": "2024-01-01", "anthropic-beta": "x",
                   "x-api-key": "tooluse-replay"}


def test_serve_has_the_options() -> None:
    import argparse

    from conformance.cli.serve import add_parser, request_options
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    add_parser(sub, "serve")
    args = p.parse_args(["serve", "fixtures", "--no-header-checks", "--model", "a", "--model", "b"])
    assert request_options(args) == {"models": ("a", "b"), "check_headers": False}
    assert request_options(p.parse_args(["serve", "fixtures"])) == {}
