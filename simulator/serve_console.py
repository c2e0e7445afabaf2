"""What ``tooluse serve`` shows of each request, and its reset (issue 41: "a server you can see").

:class:`ServeConsole` wraps the simulated API (:class:`~simulator.routes.Routes`, built by a
function so it can be built again):

- one line per request on a stream (stderr for ``tooluse serve``): the time, the method and path,
  the status, and what answered it: the exchange served (``ptc/several_pauses #2``), the rule
  that refused it (``rule messages.tool_result_first: ...``), the matcher that did (with the
  one-line difference), or "every recorded exchange has been served";
- the same as JSON lines in a log file (``--log FILE``), one object per request;
- ``POST /_tooluse/reset`` builds the simulated API again: every conversation starts over (the
  cursors, containers and pending calls of the old one are gone), so a client run twice gets
  the same conversation.

The wrapper reads the engine's own events (:mod:`simulator.events`) for the request, by its
request id; it changes no answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TextIO

from .errors import api_error
from .events import Event, ExchangeServed, FaultInjected, Mismatch, Rejected, RuleViolated
from .http import SimRequest, SimResponse, json_headers
from .secrets import SecretScanner

#: The path that starts every conversation over.
RESET_PATH = "/_tooluse/reset"


@dataclass(frozen=True)
class Entry:
    """One request as the console reports it."""

    time: str
    method: str
    path: str
    status: int
    request_id: str | None
    #: What answered: ``served``, ``rule``, ``matcher``, ``exhausted``, ``fault``, ``rejected``,
    #: ``reset`` or ``other`` (a route without the replay engine: files, models, sessions).
    outcome: str
    detail: str
    cassette: str | None = None
    exchange: int | None = None

    def line(self) -> str:
        return (f"{self.time[11:19]} {self.method} {self.path} {self.status} "
                f"{self.outcome}: {self.detail}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def describe(request: SimRequest, response: SimResponse, events: list[Event],
             now: datetime | None = None) -> Entry:
    """The console's entry for ``request``, from the answer and the engine's events for it."""
    rid = response.headers.get("request-id") or next(
        (v for k, v in response.headers.items() if k.lower() == "request-id"), None)
    mine = [e for e in events if rid is None or e.request_id == rid] or events
    stamp = (now or datetime.now(UTC)).isoformat(timespec="milliseconds")
    entry = partial(Entry, stamp, request.method, request.path, response.status, rid)
    served = next((e for e in mine if isinstance(e, ExchangeServed)), None)
    fault = next((e for e in mine if isinstance(e, FaultInjected)), None)
    if fault is not None:
        return entry(outcome="fault", detail=f"{fault.fault} injected",
                     cassette=fault.cassette_id, exchange=fault.exchange_index)
    refused = next((e for e in mine if isinstance(e, RuleViolated) and e.answered), None)
    if refused is not None and response.status >= 400:
        return entry(outcome="rule", detail=f"{refused.rule_id}: {refused.message}")
    if served is not None:
        how = " (again)" if served.repeated else " (retry)" if served.replayed else ""
        return entry(outcome="served",
                     detail=f"{served.cassette_id} #{served.exchange_index}{how}",
                     cassette=served.cassette_id, exchange=served.exchange_index)
    mismatch = next((e for e in mine if isinstance(e, Mismatch)), None)
    if mismatch is not None and mismatch.matcher == "exhausted":
        return entry(outcome="exhausted", detail=mismatch.line)
    if mismatch is not None:
        return entry(outcome="matcher",
                     detail=f"{mismatch.matcher}: {mismatch.line} (cassette "
                            f"{mismatch.cassette_id} #{mismatch.exchange_index})",
                     cassette=mismatch.cassette_id, exchange=mismatch.exchange_index)
    rejected = next((e for e in mine if isinstance(e, Rejected)), None)
    if rejected is not None:
        return entry(outcome="rejected", detail=rejected.reason)
    error = response.body.get("error") if isinstance(response.body, dict) else None
    detail = str(error.get("message")) if isinstance(error, dict) else "answered"
    return entry(outcome="other", detail=detail)


class ServeConsole:
    """The simulated API with a line per request and a reset (see the module docstring)."""

    def __init__(self, build: Callable[[], Any], *, out: TextIO | None = None,
                 log: TextIO | None = None) -> None:
        self._build = build
        self.routes = build()
        self.out, self.log = out, log
        self.resets = 0
        self._write = threading.Lock()
        #: Nothing a client sent as a credential reaches the console or the log (a key pasted as
        #: a model name is quoted back by the API's own message).
        self._secrets = SecretScanner.with_patterns()

    def blocks(self, request: SimRequest) -> bool:
        """Which requests the server runs in threads: the wrapped routes' answer."""
        blocks = getattr(self.routes, "blocks", None)
        return bool(blocks(request)) if callable(blocks) else False

    @property
    def engine(self) -> Any:
        """The replay engine behind ``/v1/messages`` (None when the routes have none)."""
        threads = getattr(self.routes, "messages", None)
        return getattr(threads, "handler", threads)

    def __call__(self, request: SimRequest) -> SimResponse:
        if request.path.rstrip("/") == RESET_PATH:
            return self._reset(request)
        engine = self.engine
        mark = engine.mark() if hasattr(engine, "mark") else None
        response: SimResponse = self.routes(request)
        events = engine.events_since(mark) if mark is not None else []
        self._report(describe(request, response, events))
        return response

    def _reset(self, request: SimRequest) -> SimResponse:
        if request.method != "POST":
            return api_error(405, "invalid_request_error",
                             f"Method `{request.method}` is not allowed on {RESET_PATH}; send "
                             "the request with POST.", headers={"allow": "POST"})
        self.routes = self._build()
        self.resets += 1
        cassettes = len(getattr(self.engine, "cassettes", ()))
        response = SimResponse(200, headers=json_headers(),
                               body={"type": "reset", "cassettes": cassettes,
                                     "resets": self.resets})
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        self._report(Entry(stamp, request.method, request.path, 200, None, "reset",
                           f"every conversation starts over ({cassettes} cassette(s))"))
        return response

    def _report(self, entry: Entry) -> None:
        entry = replace(entry, detail=self._secrets.redact_text(entry.detail))
        with self._write:
            if self.out is not None:
                print(entry.line(), file=self.out, flush=True)
            if self.log is not None:
                self.log.write(json.dumps(entry.to_json(), ensure_ascii=False) + "\n")
                self.log.flush()


__all__ = ["RESET_PATH", "Entry", "ServeConsole", "describe"]
