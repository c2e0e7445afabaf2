"""One composed handler for every transport: paths to the engine, the Files API, the Models API
and any mounted handler (Managed Agents).

    app = Routes(messages=Simulator(cassettes), files=FilesAPI.from_cassettes(cassettes))
    app.mount("/v1/sessions", sessions_handler)   # (path prefix, handler) pairs, first match wins

``/v1/messages`` and everything below it goes to the messages handler: the engine is the one
place that answers it (the Messages flow, ``count_tokens`` with the simulator's token estimate,
the API's 404 and 405 there); ``/v1/files``, ``/v1/models`` to their APIs; anything else is the
API's 404.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .cassette import Cassette, iter_corpus, load_cassette, resolve_fixture
from .errors import api_error, invalid_request, new_request_id, not_found
from .files_api import FilesAPI
from .http import EncodedResponse, Handler, SimRequest, SimResponse, SSEEvent
from .models_api import ModelsAPI

#: The SDK (2.10, ``lib/threads/_thread_state.py``) keeps a conversation server-side when a
#: request carries ``thread``; not in PROTOCOL.md yet [S].
THREADS_BETA = "message-threads-2026-08-12"
#: Fields a ``continue`` request leaves out because the thread keeps them [S].
THREAD_CREATE_ONLY_FIELDS = ("system", "tools")
#: Replies kept to be continued (bounded memory for ``tooluse serve``) [I].
MAX_THREADS = 1000


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


class Routes:
    """Dispatch by path prefix; ``mounts`` are tried first, in order."""

    def __init__(self, messages: Handler | None = None, *, files: Handler | None = None,
                 models: Handler | None = None,
                 mounts: Iterable[tuple[str, Handler]] = ()) -> None:
        self.mounts: list[tuple[str, Handler]] = list(mounts)
        self.messages = messages
        self._threads = MessageThreads(messages) if messages is not None else None
        self.files = files if files is not None else FilesAPI()
        self.models = models if models is not None else ModelsAPI()

    def mount(self, prefix: str, handler: Handler) -> None:
        """Send every request under ``prefix`` (e.g. ``/v1/sessions``) to ``handler``."""
        self.mounts.append((prefix, handler))

    def resolve(self, path: str) -> Handler | None:
        for prefix, handler in self.mounts:
            if _under(path, prefix):
                return handler
        if _under(path, "/v1/messages"):
            return self._threads
        if _under(path, "/v1/files"):
            return self.files
        if _under(path, "/v1/models"):
            return self.models
        return None

    def blocks(self, request: SimRequest) -> bool:
        """Whether the request goes to a mounted handler: those may block (long polls, event
        streams), so servers call them in threads rather than on their event loop."""
        return any(_under(request.path, prefix) for prefix, _ in self.mounts)

    def __call__(self, request: SimRequest) -> SimResponse:
        handler = self.resolve(request.path)
        return with_request_id(not_found() if handler is None else handler(request))


def with_request_id(response: SimResponse) -> SimResponse:
    """Every response carries a ``request-id`` header (PROTOCOL.md §5), the same id as the error
    body's ``request_id`` when there is one."""
    headers = {k.lower(): v for k, v in response.headers.items()}
    if type(response) is EncodedResponse and response.status < 400 and "request-id" in headers:
        response.headers = headers  # a recorded success: no error body to align (left unparsed)
        return response
    body = response.body
    in_body = body.get("request_id") if isinstance(body, dict) and body.get("type") == "error" else None
    rid = headers.get("request-id") or (in_body if isinstance(in_body, str) else None) or new_request_id()
    headers["request-id"] = rid
    if isinstance(body, dict) and body.get("type") == "error":
        body["request_id"] = rid
    response.headers = headers
    return response


class MessageThreads:
    """Server-held conversations (``thread``, beta ``message-threads-2026-08-12``), which the SDK's
    tool runner uses by default: a ``{"type": "create"}`` request is stored under its reply's id;
    a ``{"type": "continue", "previous_message_id": ...}`` request, which sends only the new
    messages (none after ``pause_turn``) and no ``system``/``tools``, is expanded back to the full
    request before ``handler`` (the replay engine) sees it. Requests without ``thread`` pass as
    they are. Error messages and statuses for thread errors are inferred [I]; the SDK reads only
    ``error.details.error_code``.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self._stored: dict[str, dict[str, Any]] = {}
        self._continued: set[str] = set()

    def __call__(self, request: SimRequest) -> SimResponse:
        threaded = b'"thread"' in request.body and request.path.rstrip("/") == "/v1/messages"
        body = _json_object(request) if threaded else None
        thread = body.get("thread") if body is not None else None
        if body is None or not isinstance(thread, dict):
            return self.handler(request)
        params = {k: v for k, v in body.items() if k != "thread"}
        kind = thread.get("type")
        if kind == "continue":
            previous = str(thread.get("previous_message_id"))
            stored = self._stored.get(previous)
            if stored is None:
                return _thread_error("thread_not_found", f"No thread holds message {previous}; "
                                     "start a new thread with the full history.")
            if previous in self._continued:
                return _thread_error("thread_already_continued", f"Message {previous} was already "
                                     "continued; continue from the latest reply.")
            params = {**{f: stored[f] for f in THREAD_CREATE_ONLY_FIELDS if f in stored}, **params,
                      "messages": [*stored["messages"], *(params.get("messages") or [])]}
            self._continued.add(previous)
        elif kind != "create":
            return invalid_request(f"thread.type must be 'create' or 'continue', got {kind!r}")
        headers = {k: v for k, v in request.headers.items() if k != "content-length"}
        expanded = SimRequest(request.method, request.path, headers, dict(request.query),
                              json.dumps(params).encode(), dict(request.repeated))
        response = self.handler(expanded)
        if response.status != 200:
            return response
        if response.events is not None:
            response.events = self._remember_stream(params, response.events)
        elif isinstance(response.body, dict):
            self._remember(params, response.body)
        return response

    def _remember(self, params: dict[str, Any], reply: dict[str, Any]) -> None:
        if isinstance(reply.get("id"), str):
            history = [*params.get("messages", []),
                       {"role": "assistant", "content": reply.get("content", [])}]
            self._stored[reply["id"]] = {**params, "messages": history}
            while len(self._stored) > MAX_THREADS:  # a long-running server: oldest go first
                oldest = next(iter(self._stored))
                del self._stored[oldest]
                self._continued.discard(oldest)

    def _remember_stream(self, params: dict[str, Any],
                         events: Iterable[SSEEvent]) -> Iterator[SSEEvent]:
        from .sse import assemble_message

        seen = []
        for event in events:
            seen.append(event)
            yield event
        try:
            self._remember(params, assemble_message(seen))
        except ValueError:  # a stream that ended in an error event holds no reply to continue
            pass


def _json_object(request: SimRequest) -> dict[str, Any] | None:
    try:
        body = request.json()
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _thread_error(code: str, message: str) -> SimResponse:
    response = api_error(400, "invalid_request_error", message)
    response.body["error"]["details"] = {"error_code": code}
    return response


def load_cassettes(source: Cassette | Sequence[Cassette] | str | Path) -> list[Cassette]:
    """Cassettes from a cassette, a list of them, a cassette file or a directory of them (by
    path, or by name in the corpus: ``"ptc"``, ``"ptc/<tool type>/<scenario>.json"``)."""
    if isinstance(source, Cassette):
        return [source]
    if isinstance(source, str | Path):
        path = resolve_fixture(source)
        return [load_cassette(path)] if path.is_file() else list(iter_corpus(path))
    return list(source)


def managed_agents_mounts(*, log_limit: int | None = None) -> list[tuple[str, Handler]]:
    """A live Managed Agents simulation on its paths; ``log_limit`` bounds its request log as
    the engine's (a long-running server)."""
    from .managed_agents import PATH_PREFIXES, ManagedAgentsSimulator
    sim = ManagedAgentsSimulator(log_limit=log_limit)
    return [(prefix, sim) for prefix in PATH_PREFIXES]


def build(source: Cassette | Sequence[Cassette] | str | Path, *,
          mounts: Iterable[tuple[str, Handler]] | None = None, **engine_opts: Any) -> Routes:
    """The whole simulated API for some cassettes: engine, Files API, Models API, and ``mounts``
    (default: :func:`managed_agents_mounts`)."""
    from .engine import Simulator  # the engine is optional for the other routes

    cassettes = load_cassettes(source)
    return Routes(Simulator(cassettes, **engine_opts), files=FilesAPI.from_cassettes(cassettes),
                  mounts=managed_agents_mounts(log_limit=engine_opts.get("log_limit"))
                  if mounts is None else mounts)
