"""Companion endpoints: the Files API (with the documented download loop) and the Models API,
driven by the unmodified ``anthropic`` SDK through the composed routes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from simulator import registry
from simulator.cassette import parse_cassette
from simulator.engine import Simulator
from simulator.files_api import FilesAPI
from simulator.http import SimRequest, SimResponse
from simulator.models import MODELS, lookup
from simulator.routes import Routes, build
from simulator.transports import SimulatorTransport

MODEL = "claude-opus-4-6"
OUTPUT = "file_011CNha8iCJcU1wXNR6q4V8w"
UPLOADED = "file_011CPMxVD3fHLUhvTqtsQA5w"


def _cassette() -> Any:
    result = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1", "content": {
        "type": "bash_code_execution_result", "stdout": "", "stderr": "", "return_code": 0,
        "content": [{"type": "bash_code_execution_output", "file_id": OUTPUT}]}}
    return parse_cassette({
        "version": 1, "id": "test/files", "title": "files", "model": MODEL,
        "source": {"document": "test", "section": "files"},
        "files": {OUTPUT: {"filename": "chart.csv", "mime_type": "text/csv", "content": "a,b\n1,2\n"}},
        "exchanges": [{
            "request": {"method": "POST", "path": "/v1/messages", "body": {
                "model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": [
                    {"type": "container_upload", "file_id": UPLOADED}]}]}},
            "response": {"status": 200, "body": {"content": [result]}}}]})


@pytest.fixture
def client() -> Iterator[anthropic.Anthropic]:
    routes = Routes(lambda r: SimResponse(200, body={}), files=FilesAPI.from_cassettes([_cassette()]))
    with httpx2.Client(transport=SimulatorTransport(routes)) as http:
        yield anthropic.Anthropic(api_key="placeholder", http_client=http)


def _output_file_ids(content: list[dict[str, Any]]) -> list[str]:
    """The documented loop: every file_id in the code execution results."""
    ids = []
    for block in content:
        if block["type"].endswith("code_execution_tool_result"):
            for item in block["content"].get("content", []):
                if "file_id" in item:
                    ids.append(item["file_id"])
    return ids


def test_the_documented_download_loop_works(client: anthropic.Anthropic, tmp_path: Any) -> None:
    content = _cassette().exchanges[0].response["body"]["content"]
    for file_id in _output_file_ids(content):
        meta = client.beta.files.retrieve_metadata(file_id)
        client.beta.files.download(file_id).write_to_file(tmp_path / meta.filename)
    assert (tmp_path / "chart.csv").read_text() == "a,b\n1,2\n"
    assert meta.downloadable is True and meta.size_bytes == 8 and meta.mime_type == "text/csv"


def test_upload_metadata_list_delete(client: anthropic.Anthropic) -> None:
    uploaded = client.beta.files.upload(file=("notes.txt", b"hello", "text/plain"))
    assert uploaded.id.startswith("file_") and uploaded.filename == "notes.txt"
    assert uploaded.size_bytes == 5 and uploaded.downloadable is False
    listed = [f.id for f in client.beta.files.list()]
    assert listed[0] == uploaded.id and set(listed) == {uploaded.id, OUTPUT, UPLOADED}
    with pytest.raises(anthropic.BadRequestError, match="not downloadable"):
        client.beta.files.download(uploaded.id)
    assert client.beta.files.delete(uploaded.id).type == "file_deleted"
    with pytest.raises(anthropic.NotFoundError):
        client.beta.files.retrieve_metadata(uploaded.id)


def test_files_referenced_by_requests_exist_but_are_not_downloadable(client: anthropic.Anthropic) -> None:
    assert client.beta.files.retrieve_metadata(UPLOADED).downloadable is False


def test_list_pagination() -> None:
    api = FilesAPI()
    ids = [api.add(b"x", f"{i}.txt").id for i in range(5)]
    page = api(SimRequest("GET", "/v1/files", query={"limit": "2"})).body
    assert [f["id"] for f in page["data"]] == ids[::-1][:2] and page["has_more"] is True
    nxt = api(SimRequest("GET", "/v1/files", query={"limit": "2", "after_id": page["last_id"]})).body
    assert [f["id"] for f in nxt["data"]] == ids[::-1][2:4]


def test_upload_without_a_file_part_is_refused_like_the_api() -> None:
    resp = FilesAPI()(SimRequest("POST", "/v1/files", body=b"{}",
                                 headers={"content-type": "application/json"}))
    assert resp.status == 400 and resp.body["error"]["type"] == "invalid_request_error"
    assert resp.headers["request-id"] == resp.body["request_id"]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_models_api_capabilities_come_from_the_registry(client: anthropic.Anthropic, model: Any) -> None:
    info = client.models.retrieve(model.id)
    caps = info.capabilities
    assert info.id == model.id and info.display_name == model.display_name
    code_execution = any(t.accepts_model(model.id) for t in registry.of_family("code_execution"))
    assert caps.server_tools.code_execution.supported is code_execution
    # the top-level flag is programmatic tool calling, not the tool itself
    assert caps.code_execution.supported is (code_execution and model.ptc)


def test_haiku_4_5_has_the_tool_but_no_programmatic_calling(client: anthropic.Anthropic) -> None:
    caps = client.models.retrieve("claude-haiku-4-5").capabilities
    assert caps.server_tools.code_execution.supported and not caps.code_execution.supported


def test_models_list_and_unknown_model(client: anthropic.Anthropic) -> None:
    assert [m.id for m in client.models.list(limit=100)] == [m.id for m in MODELS]
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-nonexistent-9")
    assert lookup("claude-haiku-4-5") is not None


def test_routes_dispatch_and_answer_unknown_paths_like_the_api() -> None:
    seen: list[str] = []

    def messages(r: SimRequest) -> SimResponse:
        seen.append(r.path)
        return SimResponse(200, body={})

    routes = Routes(messages, mounts=[("/v1/sessions", lambda r: SimResponse(202, body={}))])
    assert routes(SimRequest("POST", "/v1/messages")).status == 200
    assert routes(SimRequest("POST", "/v1/messages/batches")).status == 200
    # count_tokens is below /v1/messages: the messages handler (the engine) answers it
    assert routes(SimRequest("POST", "/v1/messages/count_tokens")).status == 200
    assert routes(SimRequest("GET", "/v1/sessions/s1/events")).status == 202
    assert routes(SimRequest("GET", "/v1/models")).status == 200
    assert routes(SimRequest("GET", "/v1/sessionsX")).status == 404
    missing = routes(SimRequest("GET", "/v2/nothing"))
    assert missing.status == 404 and missing.body["error"]["type"] == "not_found_error"
    assert seen == ["/v1/messages", "/v1/messages/batches", "/v1/messages/count_tokens"]


def test_served_count_tokens_is_answered_by_the_engine_as_a_messages_request_is() -> None:
    """One place answers /v1/messages: through the routes (tooluse serve) count_tokens gets the
    engine's header checks, seeded request ids and added models, as the engine alone gives."""
    from _simkit import API_HEADERS

    counted = json.dumps({"model": "claude-opus-9",
                          "messages": [{"role": "user", "content": "hi"}]}).encode()

    def ask(handler: Any, headers: dict[str, str]) -> SimResponse:
        return handler(SimRequest("POST", "/v1/messages/count_tokens", headers, body=counted))

    served = build([_cassette()], models=["claude-opus-9"], seed=5)
    alone = Simulator([_cassette()], models=["claude-opus-9"], seed=5)
    for handler in (served, alone):
        assert ask(handler, {}).status == 401
        ok = ask(handler, API_HEADERS)
        assert ok.status == 200 and ok.body["input_tokens"] > 0
    assert ask(served, API_HEADERS).headers["request-id"] == \
        ask(alone, API_HEADERS).headers["request-id"]


def test_effort_levels_and_context_window_per_model(client: anthropic.Anthropic) -> None:
    """The Models API reports each model's effort levels (xhigh included) and context window;
    the effort rule refuses exactly the levels it reports unsupported (real_traffic pydai__369:
    Opus 4.6 has max but not xhigh)."""
    from simulator.rules import RULES, RuleContext
    from simulator.state import SimState
    info = client.models.retrieve("claude-opus-4-6")
    caps = info.capabilities
    assert caps is not None and caps.effort.supported
    assert caps.effort.max.supported and caps.effort.xhigh is not None
    assert not caps.effort.xhigh.supported
    assert info.max_input_tokens == lookup("claude-opus-4-6").context_window  # type: ignore[union-attr]
    effort = RULES["effort.supported_level"].check
    for m in MODELS:
        levels = client.models.retrieve(m.id).capabilities.effort  # type: ignore[union-attr]
        for level in ("low", "medium", "high", "xhigh", "max"):
            supported = getattr(levels, level) is not None and getattr(levels, level).supported
            body = {"model": m.id, "max_tokens": 10, "messages": [],
                    "output_config": {"effort": level}}
            refused = effort(RuleContext(body, {}, SimState())) is not None
            assert refused == (bool(m.effort) and not supported), (m.id, level)
