"""One composed handler for every transport: paths to the engine, the Files API, the Models API
and any mounted handler (Managed Agents).

    app = Routes(messages=Simulator(cassettes), files=FilesAPI.from_cassettes(cassettes))
    app.mount("/v1/sessions", sessions_handler)   # (path prefix, handler) pairs, first match wins

``/v1/messages`` and everything below it goes to the messages handler (the engine answers unknown
paths there); ``/v1/files``, ``/v1/models`` to their APIs; anything else is the API's 404.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .cassette import Cassette, iter_corpus, load_cassette
from .errors import not_found
from .files_api import FilesAPI
from .http import Handler, SimRequest, SimResponse
from .models_api import ModelsAPI


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
            return self.messages
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
        if handler is None:
            return not_found()
        return handler(request)


def load_cassettes(source: Cassette | Sequence[Cassette] | str | Path) -> list[Cassette]:
    """Cassettes from a cassette, a list of them, a cassette file or a directory of them."""
    if isinstance(source, Cassette):
        return [source]
    if isinstance(source, str | Path):
        path = Path(source)
        return [load_cassette(path)] if path.is_file() else list(iter_corpus(path))
    return list(source)


def managed_agents_mounts() -> list[tuple[str, Handler]]:
    """A live Managed Agents simulation on its paths (empty when that package is absent)."""
    try:
        from .managed_agents import PATH_PREFIXES, ManagedAgentsSimulator
    except ImportError:  # pragma: no cover
        return []
    sim = ManagedAgentsSimulator()
    return [(prefix, sim) for prefix in PATH_PREFIXES]


def build(source: Cassette | Sequence[Cassette] | str | Path, *,
          mounts: Iterable[tuple[str, Handler]] | None = None, **engine_opts: Any) -> Routes:
    """The whole simulated API for some cassettes: engine, Files API, Models API, and ``mounts``
    (default: :func:`managed_agents_mounts`)."""
    from .engine import Simulator  # the engine is optional for the other routes

    cassettes = load_cassettes(source)
    return Routes(Simulator(cassettes, **engine_opts), files=FilesAPI.from_cassettes(cassettes),
                  mounts=managed_agents_mounts() if mounts is None else mounts)
