"""``tooluse serve``: a handler behind a real HTTP server on loopback, for clients in any language.

:class:`ASGIApp` is a raw ASGI callable (no framework: this server is benchmarked); uvicorn serves
it (``httptools`` when installed, ``h11`` otherwise). :func:`start_server` runs one in a thread for
tests and returns ``(base_url, stop)``.

Handler calls run under one lock, so an engine that is not thread-safe is safe here. ``delay`` waits without blocking other requests; ``drop_after`` aborts
the connection mid-body, which a client sees as an incomplete read (``RemoteProtocolError``).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .errors import api_error
from .http import Handler, SimRequest, SimResponse, parse_query
from .wire import Dropped, body_chunks, is_lazy, next_chunk, response_headers

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

log = logging.getLogger("tooluse.server")


class ServerUnavailable(ImportError):
    """uvicorn is missing: the HTTP server is the ``serve`` extra of the distribution."""

    def __init__(self) -> None:
        super().__init__("the simulator's HTTP server needs uvicorn, which is not installed: "
                         "pip install 'tooluse-conformance[serve]'", name="uvicorn")


class DroppedConnection(Exception):
    """Raised inside the app to make the server abort the connection (a simulated drop)."""


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DroppedConnection)


class ASGIApp:
    """A raw ASGI app answering every HTTP request with ``handler``.

    ``threaded`` (a bool, or a predicate on the request) runs the handler in a worker thread
    without the lock: for handlers that block by design (the recording proxy, Managed Agents
    long polls and event streams). Otherwise the handler runs on the event loop under the lock
    (fastest; safe for an engine that is not thread-safe). The events of a lazy stream (a
    generator) are produced in a worker thread without the lock, so a stalled stream never
    blocks the server: a handler's generators must not touch shared state unguarded.
    """

    def __init__(self, handler: Handler, *,
                 threaded: bool | Callable[[SimRequest], bool] = False) -> None:
        self.handler = handler
        self.threaded = threaded
        self._lock = threading.Lock()

    def _call(self, request: SimRequest, locked: bool) -> SimResponse:
        try:
            if not locked:
                return self.handler(request)
            with self._lock:
                return self.handler(request)
        except Exception as e:  # an engine bug must not kill the server: answer like the API
            log.exception("handler failed on %s %s", request.method, request.path)
            return api_error(500, "api_error", f"simulator error: {type(e).__name__}: {e}")

    def _is_threaded(self, request: SimRequest) -> bool:
        return self.threaded(request) if callable(self.threaded) else self.threaded

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        limit = body_limit(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > limit:  # refused before it is read
            await self._send_plain(send, _too_large(scope["path"], limit))
            return
        parts: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:  # a chunked body past the limit: stop reading it
                await self._send_plain(send, _too_large(scope["path"], limit))
                return
            parts.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(parts)
        query, repeated = parse_query(scope["query_string"].decode("latin-1"))
        request = SimRequest(
            method=scope["method"], path=scope["path"],
            headers={k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
            query=query, body=body, repeated=repeated)
        threaded = self._is_threaded(request)
        resp: SimResponse = (await asyncio.to_thread(self._call, request, False) if threaded
                             else self._call(request, True))
        if resp.delay > 0:
            await asyncio.sleep(resp.delay)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response_headers(resp)]
        if resp.events is None:
            data = resp.body_bytes()
            headers.append((b"content-length", str(len(data)).encode()))
            await send({"type": "http.response.start", "status": resp.status, "headers": headers})
            if resp.drop_after == 0:
                raise DroppedConnection("simulated drop before the body")
            await send({"type": "http.response.body", "body": data})
            return
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        # A lazy stream may block between events (a stall): its steps run in a worker thread,
        # without the lock; a list of events is sent straight from the event loop.
        chunks, off_loop = body_chunks(resp), threaded or is_lazy(resp)
        # A client that goes away mid-stream: stop producing its events and close the stream
        # (uvicorn's send() ignores a gone client silently, so an endless stream would run on).
        gone = asyncio.Event()
        watcher = asyncio.ensure_future(_watch_disconnect(receive, gone))
        try:
            while not gone.is_set() and (chunk := (await asyncio.to_thread(next_chunk, chunks)
                                                   if off_loop else next_chunk(chunks))) is not None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except Dropped as e:
            raise DroppedConnection(str(e)) from None
        finally:
            watcher.cancel()
            _close_stream(chunks, resp)
        if not gone.is_set():
            await send({"type": "http.response.body", "body": b""})

    @staticmethod
    async def _send_plain(send: Send, resp: SimResponse) -> None:
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response_headers(resp)]
        data = resp.body_bytes()
        headers += [(b"content-length", str(len(data)).encode()), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        await send({"type": "http.response.body", "body": data})


async def _watch_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


def _close_stream(chunks: Any, resp: SimResponse) -> None:
    """Close the body generator and the response's event generator (their ``finally`` runs)."""
    for gen in (chunks, resp.events):
        close = getattr(gen, "close", None)
        if close is not None:
            try:
                close()
            except ValueError:  # still running in a worker thread: it ends when that step does
                pass


#: Request size limits by path prefix (PROTOCOL.md §5: 413 over Messages 32 MB, Batch 256 MB,
#: Files 500 MB); the body is not read past them.
BODY_LIMITS = (("/v1/files", 500 * 1024 * 1024), ("/v1/messages/batches", 256 * 1024 * 1024))
DEFAULT_BODY_LIMIT = 32 * 1024 * 1024


def body_limit(path: str) -> int:
    return next((n for prefix, n in BODY_LIMITS if path.startswith(prefix)), DEFAULT_BODY_LIMIT)


def _too_large(path: str, limit: int) -> SimResponse:
    return api_error(413, "request_too_large", f"Request exceeds the maximum allowed number of "
                     f"bytes ({limit} for {path}); send a smaller body (or a valid "
                     "content-length).")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def base_url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(handler: Handler, host: str = "127.0.0.1", port: int = 0, *,
                threaded: bool | Callable[[SimRequest], bool] | None = None) -> tuple[Any, socket.socket]:
    """A configured ``uvicorn.Server`` and its bound, listening socket (``port=0``: a free port).

    ``threaded=None`` asks the handler: a :class:`~simulator.routes.Routes` runs its mounted
    handlers (Managed Agents) in threads and the rest on the event loop. Raises
    :class:`ServerUnavailable` when the ``serve`` extra is not installed.
    """
    try:
        import uvicorn
    except ImportError as e:
        raise ServerUnavailable() from e

    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
    if threaded is None:  # a Routes handler knows which of its paths block
        threaded = getattr(handler, "blocks", False)
    config = uvicorn.Config(ASGIApp(handler, threaded=threaded), lifespan="off",
                            access_log=False, log_level="warning", server_header=False,
                            timeout_graceful_shutdown=1, http=_api_shaped_http_protocol())
    return uvicorn.Server(config), _bind(host, port)


def _api_shaped_http_protocol() -> type[Any]:
    """uvicorn's HTTP protocol, answering bytes that are not HTTP with the API's error shape
    (a 400 ``invalid_request_error`` with a ``request-id``) rather than a plain-text 400."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class APIShapedProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type, unused-ignore]
        def send_400_response(self, msg: str) -> None:
            resp = api_error(400, "invalid_request_error", f"{msg.rstrip('.')}: the bytes sent are "
                             "not a well-formed HTTP/1.1 request; send one.")
            data = resp.body_bytes()
            head = [b"HTTP/1.1 400 Bad Request", b"content-type: application/json",
                    b"request-id: " + resp.headers["request-id"].encode(),
                    b"content-length: " + str(len(data)).encode(), b"connection: close"]
            self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + data)
            self.transport.close()

    return APIShapedProtocol


def start_server(handler: Handler, host: str = "127.0.0.1", port: int = 0, *,
                 threaded: bool | Callable[[SimRequest], bool] | None = None) -> tuple[str, Callable[[], None]]:
    """Serve ``handler`` from a background thread; returns ``(base_url, stop)``."""
    server, sock = make_server(handler, host, port, threaded=threaded)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="tooluse-server", daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.01)
    if not server.started:
        raise RuntimeError(f"the simulator server did not start on {host}:{port}")

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()

    return base_url_of(sock), stop
