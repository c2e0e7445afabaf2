"""Hostile requests for the simulator: strategies and a checker shared by the bounded test and
the longer ``nox -s fuzz`` run.

Every request must get a 4xx in the API's error shape (or a 200 when it happens to be a valid
request the cassette expects): never a 5xx, never an exception out of the handler.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from simulator.http import SimRequest, SimResponse

JSONScalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(JSONScalar, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                           max_leaves=20)

BLOCK_TYPES = ["text", "tool_use", "tool_result", "server_tool_use", "image", "no_such_block",
               "code_execution_tool_result", "container_upload", "", "thinking"]


def _block() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(BLOCK_TYPES)},
                              optional={"id": st.text(max_size=12), "tool_use_id": st.text(max_size=12),
                                        "text": json_values, "input": json_values,
                                        "content": json_values, "name": st.text(max_size=12)}),
        json_values,
    )


def _message() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool", 7]),
                               "content": st.one_of(st.text(max_size=30), st.lists(_block(), max_size=4),
                                                    json_values)}),
        json_values,
    )


def _tool() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["bash_20250124", "code_execution_20260120",
                                                        "text_editor_20250728", "custom", "bogus_1"]),
                               "name": st.sampled_from(["bash", "code_execution", "x", ""])},
                              optional={"allowed_callers": json_values, "strict": json_values,
                                        "input_schema": json_values}),
        json_values,
    )


message_bodies = st.fixed_dictionaries(
    {},
    optional={"model": st.one_of(st.sampled_from(["claude-opus-5-5", "claude-haiku-4-5"]), json_values),
              "max_tokens": st.one_of(st.integers(-5, 10**6), json_values),
              "messages": st.one_of(st.lists(_message(), max_size=5), json_values),
              "tools": st.one_of(st.lists(_tool(), max_size=4), json_values),
              "tool_choice": json_values, "container": json_values, "stream": json_values},
)


def _deep(depth: int) -> bytes:
    return b'{"model":"m","max_tokens":1,"messages":' + b"[" * depth + b"]" * depth + b"}"


raw_bodies = st.one_of(
    message_bodies.map(lambda b: json.dumps(b).encode()),
    st.binary(max_size=200),                                   # anything, incl. invalid UTF-8
    st.sampled_from([b"", b"{", b"null", b"[]", b'"x"', b"\xff\xfe{}", b'{"model": NaN}',
                     b'{"a":1,"a":2}', _deep(5000), _deep(100_000)]),
    st.text(max_size=200).map(str.encode),
)

METHODS = ["POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "BREW"]
PATHS = ["/v1/messages", "/v1/messages/", "/v1/messages/count_tokens", "/v1/messages/batches",
         "/v1/files", "/v1/files/file_nope/content", "/v1/models", "/v1/models/nope",
         "/v1/sessions/sess_x/events", "/v1/environments/env_x/work/poll", "/", "/v2/messages",
         "/v1/../etc/passwd", "/v1/messages?x=%zz", "//", "/v1/%00"]
#: Most sets carry the key and version every client sends (else the engine answers 401/400
#: before reading the body: simulator.headers); two sets lack them, and get those answers.
_KEY = {"x-api-key": "fuzz-key", "anthropic-version": "2023-06-01"}
HEADER_SETS = [{}, {"content-type": "application/json"},
               {"content-type": "application/json", **_KEY},
               {"content-type": "text/plain", "anthropic-beta": "no-such-beta,,", **_KEY},
               {"content-type": "application/json", **_KEY, "anthropic-version": "1999-01-01",
                "anthropic-beta": "code-execution-2025-05-22"}]

#: Half of the requests go to ``POST /v1/messages`` (where the rules and the JSON parsing are),
#: the other half anywhere, with any method.
requests = st.one_of(
    st.builds(lambda h, b: SimRequest("POST", "/v1/messages", dict(h), body=b),
              st.sampled_from(HEADER_SETS), raw_bodies),
    st.builds(lambda m, p, h, b: SimRequest(m, p, dict(h), body=b),
              st.sampled_from(METHODS), st.sampled_from(PATHS), st.sampled_from(HEADER_SETS),
              raw_bodies),
)


def check_response(req: SimRequest, resp: SimResponse) -> None:
    """The API's contract for bad input: 4xx with its error body, never 5xx."""
    assert isinstance(resp, SimResponse), type(resp)
    assert resp.status < 500, (req.method, req.path, req.body[:80], resp.status, resp.body)
    assert resp.headers.get("request-id", "").startswith("req_"), (req.method, req.path, resp.headers)
    if resp.status >= 400:
        body = resp.body
        if isinstance(body, bytes | bytearray):
            body = json.loads(body)
        assert isinstance(body, dict) and body.get("type") == "error", body
        err = body["error"]
        assert isinstance(err.get("type"), str) and isinstance(err.get("message"), str), body
        assert body.get("request_id") == resp.headers["request-id"], (body, resp.headers)
        assert "Traceback" not in err["message"], err["message"]
    elif resp.events is not None:
        for _ in resp.events:  # a stream must be consumable without raising
            pass


def category(req: SimRequest) -> str:
    """A coarse label for counting what a fuzz run tried (``nox -s fuzz`` prints the counts)."""
    body = req.body
    if req.path.split("?")[0].rstrip("/") not in ("/v1/messages", "/v1/messages/count_tokens"):
        return "other path"
    if req.method != "POST":
        return "wrong method"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid UTF-8"
    if body.count(b"[") > 1000:
        return "deeply nested"
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return "broken JSON"
    if not isinstance(parsed, dict):
        return "JSON not an object"
    if "content-type" not in req.headers or "anthropic-version" not in req.headers:
        return "message body, missing headers"
    return "message body"
