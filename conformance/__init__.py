"""tooluse-conformance: the conformance suite for Claude's tool-use protocol."""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the one version, from the installed metadata (pyproject.toml)
        from simulator import version

        return version()
    raise AttributeError(name)
