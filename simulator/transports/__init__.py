"""Thin adapters around a :data:`simulator.http.Handler`: respx, httpx2 and httpx transports.

The HTTP server lives in :mod:`simulator.server`; the composed handler in :mod:`simulator.routes`.
"""

from __future__ import annotations

from .httpx2_transport import AsyncSimulatorTransport, SimulatorTransport
from .mock import MockedAPI, mock
from .respx_router import DEFAULT_BASE_URL, Httpcore2Mocker, add_routes, intercept, side_effect

__all__ = [
    "DEFAULT_BASE_URL",
    "AsyncSimulatorTransport",
    "Httpcore2Mocker",
    "MockedAPI",
    "SimulatorTransport",
    "add_routes",
    "intercept",
    "mock",
    "side_effect",
]
