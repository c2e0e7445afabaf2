"""A request body the API cannot read is answered in the API's words (simulator.json_body),
through the engine and through count_tokens alike (issue 25: wording from the API's families,
never a parser's or the simulator's own sentence)."""

from __future__ import annotations

import json

import pytest
from _simkit import WEATHER, body, error_of, post, two_turns, user

from simulator.engine import Simulator
from simulator.json_body import NOT_AN_OBJECT, lone_surrogate, not_valid_json

PATHS = ["/v1/messages", "/v1/messages/count_tokens"]


def answer(raw: bytes, path: str = "/v1/messages") -> tuple[int, str, str]:
    return error_of(Simulator(two_turns())(post(raw, path=path)))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("raw", "message"), [
    # the live form: 'The request body is not valid JSON: <reason>: line L column C (char P)'
    (b"{nope", "The request body is not valid JSON: Expecting property name enclosed in double "
               "quotes: line 1 column 2 (char 1)"),
    (b"", "The request body is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    # anthropics/claude-code#77525: a raw control character inside a string
    (b'{"model":"x\x01"}', "The request body is not valid JSON: unexpected control character in "
                          "string: line 1 column 12 (char 11)"),
    # anthropics/claude-code#6464, #8272: a high surrogate escape with no low one after it
    (b'{"model":"m","messages":[{"role":"user","content":"a\\ud83d"}]}',
     "The request body is not valid JSON: no low surrogate in string: line 1 column 53 (char 52)"),
    (b'{"a":"\\udc00"}', "The request body is not valid JSON: no high surrogate in string: "
                         "line 1 column 7 (char 6)"),
    (b"[1]", NOT_AN_OBJECT),
    (b"null", NOT_AN_OBJECT),
])
def test_a_body_the_api_cannot_read_gets_its_words(raw: bytes, message: str, path: str) -> None:
    assert answer(raw, path) == (400, "invalid_request_error", message)


def test_lines_and_columns_count_characters() -> None:
    raw = '{\n  "model": "é\\ud800"}'.encode()
    assert lone_surrogate(raw) == "no low surrogate in string: line 2 column 14 (char 15)"
    try:
        json.loads('{\n "a": 1,,}')
    except json.JSONDecodeError as e:
        assert not_valid_json(e) == ("The request body is not valid JSON: Expecting property name "
                                     "enclosed in double quotes: line 2 column 9 (char 10)")


@pytest.mark.parametrize("text", [
    "\U0001f600 a pair written as escapes", "a backslash then u: \\ud800", "\\\\ud800 escaped twice",
])
def test_well_formed_text_is_not_refused(text: str) -> None:
    raw = json.dumps(body([user(text)], tools=[WEATHER])).encode()  # ensure_ascii: escapes
    assert lone_surrogate(raw) is None
    assert json.loads(raw)["messages"][0]["content"] == text


def test_the_checks_leave_other_bodies_alone() -> None:
    assert lone_surrogate(b'{"a":"\\ud83d\\ude00","b":"\\\\udc00","c":"\\u00e9"}') is None
    assert lone_surrogate(b'{"a":"\\uD83D\\uDE00"}') is None
    assert lone_surrogate(b'{"a":"\\uD83D"}') is not None
