"""The headers every API request carries, judged as the live API judges them.

- No ``x-api-key`` (and no ``Authorization: Bearer`` token) → 401 ``authentication_error``
  ``x-api-key header is required``. Live answers quoted in public reports: n8n-io/n8n#37930
  (``{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is
  required"},"request_id":…}``), karthink/gptel#354 (HTTP/2 401, same message). The shared
  captures show the sibling answer for a wrong key (401 ``invalid x-api-key``: real_traffic
  pydai__234, rubyllm__030); the simulator checks no key's value [I].
- No ``anthropic-version`` → 400 ``invalid_request_error`` ``anthropic-version: header is
  required`` (PipedreamHQ/pipedream#9697, envoyproxy/ai-gateway#1909, both quoting the body).
  The key is checked first: a request with neither gets the 401 [I].

Clients that cannot send them (a test driving the engine directly, a replay of recorded requests
whose recorder dropped the key) turn the check off: ``Simulator(check_headers=False)``,
``tooluse serve --no-header-checks``, or ``TOOLUSE_HEADER_CHECKS=0``. Replays of recorded
requests add :data:`REPLAY_HEADERS` instead (:func:`replay_headers`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import api_error
from .http import SimResponse

NO_API_KEY = "x-api-key header is required"
NO_VERSION = "anthropic-version: header is required"
#: The environment variable that turns the checks off (``0``, ``false``, ``no``, ``off``).
CHECKS_ENV = "TOOLUSE_HEADER_CHECKS"
#: What a replay of a recorded request sends when the recorder dropped them (cassettes never
#: keep a key: simulator.secrets). The value is a placeholder, not a credential.
REPLAY_HEADERS = {"x-api-key": "tooluse-replay", "anthropic-version": "2023-06-01"}


def checks_on_by_default() -> bool:
    """False when ``$TOOLUSE_HEADER_CHECKS`` turns the checks off."""
    return os.environ.get(CHECKS_ENV, "").strip().lower() not in ("0", "false", "no", "off")


def has_credentials(headers: Mapping[str, str]) -> bool:
    """An ``x-api-key``, or an ``Authorization: Bearer`` token (lower-case header names)."""
    if headers.get("x-api-key", "").strip():
        return True
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())


def header_error(headers: Mapping[str, str], request_id: str | None = None) -> SimResponse | None:
    """The API's answer to a request missing a required header, or None."""
    if not has_credentials(headers):
        return api_error(401, "authentication_error", NO_API_KEY, request_id=request_id)
    if not headers.get("anthropic-version", "").strip():
        return api_error(400, "invalid_request_error", NO_VERSION, request_id=request_id)
    return None


def replay_headers(recorded: Mapping[str, str] | None) -> dict[str, str]:
    """Recorded request headers with :data:`REPLAY_HEADERS` where the recorder dropped them."""
    out = {str(k).lower(): str(v) for k, v in (recorded or {}).items()}
    for k, v in REPLAY_HEADERS.items():
        out.setdefault(k, v)
    return out


__all__ = ["CHECKS_ENV", "NO_API_KEY", "NO_VERSION", "REPLAY_HEADERS", "checks_on_by_default",
           "has_credentials", "header_error", "replay_headers"]
