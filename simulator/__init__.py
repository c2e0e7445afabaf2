"""The protocol simulator: registry, schemas, rules, state, replay engine and transports."""

from typing import Any

#: The distribution the packages ship in; its metadata holds the one version (pyproject.toml).
DISTRIBUTION = "tooluse-conformance"


def version() -> str:
    """The installed distribution's version (``0+unknown`` when run from an uninstalled tree)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        return _version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on demand: ``import simulator`` stays light
        return version()
    raise AttributeError(name)


def mock(*args: Any, **kwargs: Any) -> Any:
    """Serve cassettes to every ``httpx``/``httpx2`` client in this process (a context manager);
    see :func:`simulator.transports.mock.mock`. Imported lazily: ``import simulator`` stays light."""
    from .transports.mock import mock as _mock

    return _mock(*args, **kwargs)
