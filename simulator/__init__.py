"""The protocol simulator: registry, schemas, rules, state, replay engine and transports."""

from typing import Any

__version__ = "0.1.0"


def mock(*args: Any, **kwargs: Any) -> Any:
    """Serve cassettes to every ``httpx``/``httpx2`` client in this process (a context manager);
    see :func:`simulator.transports.mock.mock`. Imported lazily: ``import simulator`` stays light."""
    from .transports.mock import mock as _mock

    return _mock(*args, **kwargs)
