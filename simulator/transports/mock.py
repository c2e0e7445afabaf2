"""``simulator.mock(...)``: an unmodified ``anthropic.Anthropic()`` / ``AsyncAnthropic()`` talks
to the simulator in-process::

    with simulator.mock("fixtures/code_execution/...json") as sim:
        client = anthropic.Anthropic()
        client.messages.create(...)

Requests under the SDK's base URL (``$ANTHROPIC_BASE_URL``, else ``https://api.anthropic.com``) are
answered by the composed handler (:mod:`simulator.routes`) through respx, for ``httpx`` and
``httpx2`` clients alike. When no API key is set, a placeholder is set for the duration so the
SDK's own key check passes (nothing leaves the process). Engine options pass through, e.g.
``simulator.mock(source, matchers="tolerant")`` (the tolerant matcher set,
:mod:`simulator.matchers`) or ``simulator.mock(source, envelope="adversarial")`` (how streams are
enveloped: ``live``, ``minimal`` or ``adversarial``, :data:`simulator.envelope.PROFILES`; another
name raises ValueError naming these).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock as _patch

import respx

from ..cassette import Cassette
from ..http import Handler
from ..routes import Routes, build
from .respx_router import DEFAULT_BASE_URL, intercept

PLACEHOLDER_API_KEY = "tooluse-simulator-placeholder"


@dataclass
class MockedAPI:
    """What :func:`mock` yields: the composed handler, its parts and the respx routers."""

    routes: Routes
    base_url: str
    routers: list[respx.MockRouter] = field(default_factory=list)

    @property
    def simulator(self) -> Handler | None:
        """The engine answering ``/v1/messages``."""
        return self.routes.messages

    @property
    def calls(self) -> list[Any]:
        """Every intercepted ``(request, response)`` call, httpx and httpx2 together."""
        return [c for r in self.routers for c in r.calls]


@contextmanager
def mock(source: Cassette | Sequence[Cassette] | str | Path | Routes, *,
         base_url: str | None = None, mounts: Iterable[tuple[str, Handler]] | None = None,
         **engine_opts: Any) -> Iterator[MockedAPI]:
    """Serve ``source`` (a cassette, cassettes, a file or a directory, or a ready
    :class:`~simulator.routes.Routes`) to every ``httpx``/``httpx2`` client in this process."""
    routes = source if isinstance(source, Routes) else build(source, mounts=mounts, **engine_opts)
    url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    env = {} if os.environ.get("ANTHROPIC_API_KEY") else {"ANTHROPIC_API_KEY": PLACEHOLDER_API_KEY}
    with _patch.patch.dict(os.environ, env), intercept(routes, url) as routers:
        yield MockedAPI(routes, url, routers)
