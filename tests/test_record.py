"""Recording: the simulator itself as upstream, secrets planted in headers, query and body;
none reaches disk, and a cassette still holding one is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
import sim_cassettes as sc
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.cassette import load_cassette
from simulator.http import SimRequest, SimResponse
from simulator.record import Recorder, SecretLeak, save_cassette
from simulator.secrets import REDACTED, SecretScanner, find_secrets, redact
from simulator.server import start_server

API_KEY = "sk-ant-api03-PLANTED-header-0001"
QUERY_SECRET = "qsecret-PLANTED-0002"
BODY_SECRET = "sk-ant-api03-PLANTED-body-0003"
ENV_SECRET = "envsecret-PLANTED-0004"
CUSTOM_SECRET = "corp-778899"
PLANTED = (API_KEY, QUERY_SECRET, BODY_SECRET, ENV_SECRET, CUSTOM_SECRET)


@pytest.fixture
def upstream() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """The simulator (engine + routes) on a real port, noting the headers it receives."""
    from simulator.routes import build

    routes = build([sc.weather()])
    received: list[dict[str, str]] = []

    def handler(request: SimRequest) -> SimResponse:
        received.append({**request.headers, **{f"?{k}": v for k, v in request.query.items()}})
        return routes(request)

    url, stop = start_server(handler)
    yield url, received
    stop()


def _conversation(base_url: str) -> None:
    client = anthropic.Anthropic(api_key=API_KEY, base_url=base_url, max_retries=0,
                                 default_headers={"x-api-key": API_KEY})
    question = {"role": "user", "content": f"Weather in Paris? my key is {BODY_SECRET}"}
    first = client.messages.create(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                   messages=[question],  # type: ignore[list-item]
                                   extra_query={"key": QUERY_SECRET, "token": QUERY_SECRET})
    tool_use = next(b for b in first.content if b.type == "tool_use")
    follow_up = [question, {"role": "assistant", "content": first.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id,
                                               "content": f"18C ({ENV_SECRET}, {CUSTOM_SECRET})"}]}]
    with client.messages.stream(model=sc.MODEL, max_tokens=1024, tools=[sc.WEATHER_TOOL],
                                messages=follow_up) as stream:  # type: ignore[arg-type]
        assert stream.get_final_text() == sc.ANSWER


def test_recording_through_the_proxy_never_writes_a_secret(
        upstream: tuple[str, list[dict[str, str]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_TEST_TOKEN", ENV_SECRET)
    upstream_url, received = upstream
    recorder = Recorder(upstream_url, tmp_path / "out",
                        scanner=SecretScanner.with_patterns([r"corp-\d{6}"]))
    proxy_url, stop = start_server(recorder, threaded=True)
    try:
        _conversation(proxy_url)
    finally:
        stop()
        recorder.close()
    # the upstream did get the credentials: the proxy forwards them, it only never writes them
    assert f"Bearer {API_KEY}" in received[0]["authorization"] and received[0]["?key"] == QUERY_SECRET
    files = sorted((tmp_path / "out").rglob("*.json"))
    assert files == recorder.written and recorder.refused == []
    assert files[0].relative_to(tmp_path / "out").as_posix().startswith("recorded/custom/")
    raw = files[0].read_bytes()
    for secret in PLANTED:
        assert secret.encode() not in raw
    for header in (b"x-api-key", b"authorization", b'"key"', b'"token"'):
        assert header not in raw.lower()
    recorded = load_cassette(files[0])
    assert find_secrets(recorded.raw) == []
    assert len(recorded.exchanges) == 2 and recorded.streamed and recorded.model == sc.MODEL
    assert recorded.exchanges[1].is_stream
    assert REDACTED in json.dumps(recorded.raw)


def test_a_recorded_cassette_replays(upstream: tuple[str, list[dict[str, str]]],
                                     tmp_path: Path) -> None:
    import simulator

    recorder = Recorder(upstream[0], tmp_path)
    proxy_url, stop = start_server(recorder, threaded=True)
    try:
        _conversation(proxy_url)
    finally:
        stop()
        recorder.close()
    (path,) = recorder.written
    with simulator.mock(path) as api:
        _conversation(api.base_url)
        assert api.simulator is not None and api.simulator.done  # type: ignore[attr-defined]


def test_each_new_conversation_gets_its_own_cassette(tmp_path: Path) -> None:
    replies = iter([sc.message("msg_1", [{"type": "text", "text": "a"}], "end_turn"),
                    sc.message("msg_2", [{"type": "text", "text": "b"}], "end_turn")])
    url, stop = start_server(lambda r: SimResponse(200, body=next(replies)))
    recorder = Recorder(url, tmp_path)
    try:
        for _ in range(2):
            body = json.dumps(sc.request([sc.QUESTION])["body"]).encode()
            recorder(SimRequest("POST", "/v1/messages", {"content-type": "application/json"},
                                body=body))
    finally:
        stop()
        recorder.close()
    assert len(recorder.written) == 2
    assert [load_cassette(p).exchanges[0].response["body"]["id"] for p in recorder.written] == [
        "msg_1", "msg_2"]


def test_save_refuses_a_cassette_that_still_holds_a_secret(tmp_path: Path) -> None:
    cassette = {"version": 1, "id": "x", "title": "x", "source": {"document": "d", "section": "s"},
                "exchanges": [{"request": {"method": "POST", "path": "/v1/messages",
                                           "headers": {"x-api-key": API_KEY}},
                               "response": {"status": 200, "body": {"note": BODY_SECRET}}}]}
    target = tmp_path / "leak.json"
    with pytest.raises(SecretLeak) as info:
        save_cassette(cassette, target, SecretScanner())
    assert not target.exists() and not list(tmp_path.iterdir())
    message = str(info.value)
    assert "/exchanges/0/request/headers/x-api-key" in message and "/exchanges/0/response/body/note" in message
    assert API_KEY not in message and BODY_SECRET not in message


def test_upstream_unreachable_is_an_api_shaped_502(tmp_path: Path) -> None:
    recorder = Recorder("http://127.0.0.1:9", tmp_path)
    resp = recorder(SimRequest("GET", "/v1/models"))
    recorder.close()
    assert resp.status == 502 and resp.body["error"]["type"] == "api_error"
    assert list(tmp_path.iterdir()) == []


# --- the scanner ----------------------------------------------------------------------------------

def _scan(obj: Any) -> list[tuple[str, str]]:
    return SecretScanner(use_environment=False).find(obj)


def test_scanner_finds_credentials_by_context() -> None:
    obj = {"request": {"headers": {"x-api-key": "k1", "authorization": "Bearer abc",
                                   "anthropic-admin-key": "k2", "anthropic-version": "2023-06-01"},
                       "query": {"key": "v", "beta": "true"},
                       "body": {"mcp_servers": [{"authorization_token": "t"}],
                                "messages": [{"content": "sk-ant-api03-xyz"}]}}}
    kinds = {kind for _, kind in _scan(obj)}
    assert kinds == {"header:x-api-key", "header:authorization", "header:anthropic-admin-key",
                     "query:key", "field:authorization_token", "pattern:sk-ant-[A-Za-z0-9_-]+"}


def test_scanner_has_no_false_positives_on_protocol_fields() -> None:
    clean = {"response": {"headers": {"anthropic-ratelimit-tokens-remaining": "100",
                                      "request-id": "req_1"},
                          "body": {"content": [{"type": "thinking", "signature": "EqQBCkgIA..."},
                                               {"type": "tool_use", "input": {"key": "name",
                                                                              "token": "abc"}}]}},
             "request": {"headers": {}, "query": {"beta": "true"}, "body": {"key": "x"}}}
    assert _scan(clean) == []


def test_redaction_removes_what_the_scanner_finds() -> None:
    obj = {"headers": {"Authorization": "Bearer abcdefghijkl", "content-type": "json"},
           "query": {"token": "t", "limit": "2"}, "body": {"text": "use sk-ant-abc-123 now",
                                                           "password": "hunter2"}}
    clean = SecretScanner(use_environment=False).redact(obj)
    assert clean == {"headers": {"content-type": "json"}, "query": {"limit": "2"},
                     "body": {"text": f"use {REDACTED} now", "password": REDACTED}}
    assert _scan(clean) == []


def test_environment_values_and_custom_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)
    found = find_secrets({"a": f"x{ENV_SECRET}y", "b": CUSTOM_SECRET}, patterns=[r"corp-\d{6}"])
    assert ("/a", "env:MY_SERVICE_TOKEN") in found and ("/b", r"pattern:corp-\d{6}") in found
    assert find_secrets(redact({"a": ENV_SECRET, "b": CUSTOM_SECRET}, patterns=[r"corp-\d{6}"]),
                        patterns=[r"corp-\d{6}"]) == []


# --- the command ----------------------------------------------------------------------------------

def _tooluse(*args: str) -> subprocess.Popen[str]:
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(("args", "message"), [
    (["--upstream", "ftp://x", "--out", "o"], "is not an http(s) URL"),
    (["--upstream", "https://x", "--out", "o", "--secret-pattern", "("], "is not a valid regex"),
])
def test_record_usage_errors(args: list[str], message: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    assert main(["record", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_tooluse_record_proxies_and_writes(tmp_path: Path) -> None:
    url, stop = start_server(lambda r: SimResponse(200, body={"data": [], "has_more": False}))
    proc = _tooluse("record", "--upstream", url, "--out", str(tmp_path), "--port", "0")
    try:
        assert proc.stdout is not None
        proxy = proc.stdout.readline().strip()
        import httpx2

        r = httpx2.get(f"{proxy}/v1/models", headers={"x-api-key": API_KEY}, timeout=10)
        assert r.json() == {"data": [], "has_more": False}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        stop()
    (written,) = tmp_path.rglob("*.json")
    assert API_KEY.encode() not in written.read_bytes() and f"wrote {written}" in err


def test_downloaded_files_are_kept_and_served_on_replay(tmp_path: Path) -> None:
    from simulator.cassette import load_cassette as load
    from simulator.files_api import FilesAPI, StoredFile
    from simulator.routes import Routes

    png = b"\x89PNG\r\n\x1a\n\x00\xff binary"
    files = FilesAPI([StoredFile("file_011Chart", "chart.png", "image/png", png, True,
                                 "2026-01-01T00:00:00Z")])
    url, stop = start_server(Routes(lambda r: SimResponse(404, body={}), files=files))
    recorder = Recorder(url, tmp_path)
    try:
        for path in ("/v1/files/file_011Chart", "/v1/files/file_011Chart/content"):
            assert recorder(SimRequest("GET", path, {"x-api-key": API_KEY})).status == 200
    finally:
        stop()
        recorder.close()
    (path,) = recorder.written
    assert API_KEY.encode() not in path.read_bytes()
    replayed = FilesAPI.from_cassettes([load(path)]).files["file_011Chart"]
    assert (replayed.content, replayed.filename, replayed.mime_type) == (png, "chart.png", "image/png")
    assert replayed.downloadable


# --- property: whatever the JSON, redaction leaves nothing the scanner finds ------------------------

_SECRETS = st.sampled_from([API_KEY, BODY_SECRET, "Bearer abcdefghijklmnop", ENV_SECRET])
_KEYS = st.sampled_from(["text", "headers", "query", "body", "x-api-key", "authorization", "key",
                         "token", "api_key", "password", "signature", "input", "content"])
_TEXT = st.one_of(st.text(max_size=20), _SECRETS, st.builds(lambda a, s, b: a + s + b,
                                                            st.text(max_size=5), _SECRETS,
                                                            st.text(max_size=5)))
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), _TEXT),
                     lambda inner: st.one_of(st.lists(inner, max_size=4),
                                             st.dictionaries(_KEYS, inner, max_size=4)),
                     max_leaves=20)


@settings(max_examples=40, deadline=None)
@given(_JSON)
def test_redaction_leaves_nothing_to_find(obj: Any) -> None:
    scanner = SecretScanner(literals={ENV_SECRET: "TEST_ENV"}, use_environment=False)
    clean = scanner.redact(obj)
    assert scanner.find(clean) == []
    assert not any(s in json.dumps(clean) for s in (API_KEY, BODY_SECRET, ENV_SECRET))
