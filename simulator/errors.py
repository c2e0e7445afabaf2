"""API-shaped error responses and request ids.

Every error the simulator produces has the API's shape (PROTOCOL.md §5)::

    HTTP <status>, headers {"request-id": "req_...", "content-type": "application/json"}
    {"type": "error", "error": {"type": <error type>, "message": ...}, "request_id": "req_..."}

Use :func:`api_error` (any status) or :func:`invalid_request` (400). :data:`STATUS_TYPES` maps the
documented statuses to their error types.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import string
from collections.abc import Mapping

from .http import SimResponse, json_headers

#: Documented status → error type (PROTOCOL.md §5, ERR).
STATUS_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_ALPHABET = string.ascii_letters + string.digits
#: Byte -> base62 character (256 = 4 * 62 + 8: the first 8 characters are a little likelier,
#: which an id does not mind).
_TO_BASE62 = bytes(ord(_ALPHABET[b % 62]) for b in range(256))


class RequestIds:
    """Request ids shaped like the API's (``req_011C`` + 20 base62 chars), reproducible by seed:
    the n-th id of a seed is a keyed BLAKE2b hash of n (no random generator to set up)."""

    def __init__(self, seed: int | None = None) -> None:
        self._key = b"%d" % seed if seed is not None else os.urandom(16)
        self._count = itertools.count(1)  # next() is atomic: ids stay unique across threads

    def new(self) -> str:
        digest = hashlib.blake2b(next(self._count).to_bytes(8, "little"), digest_size=20,
                                 key=self._key).digest()
        return "req_011C" + digest.translate(_TO_BASE62).decode("ascii")


_default_ids = RequestIds()


def new_request_id() -> str:
    return _default_ids.new()


def error_body(error_type: str, message: str, request_id: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": error_type, "message": message},
            "request_id": request_id}


def api_error(status: int, error_type: str | None, message: str, *, request_id: str | None = None,
              headers: Mapping[str, str] | None = None) -> SimResponse:
    """An error response in the API's shape; ``error_type`` defaults from the status."""
    rid = request_id or new_request_id()
    etype = error_type or STATUS_TYPES.get(status, "api_error" if status >= 500
                                           else "invalid_request_error")
    h = json_headers({"request-id": rid})
    if headers:
        h.update({k.lower(): v for k, v in headers.items()})
    return SimResponse(status=status, headers=h, body=error_body(etype, message, rid))


def invalid_request(message: str, *, request_id: str | None = None) -> SimResponse:
    """HTTP 400 ``invalid_request_error``: how the API answers a rule violation."""
    return api_error(400, "invalid_request_error", message, request_id=request_id)


def not_found(message: str = "The requested resource could not be found.", *,
              request_id: str | None = None) -> SimResponse:
    """HTTP 404 ``not_found_error`` with the documented message (PROTOCOL.md §5)."""
    return api_error(404, "not_found_error", message, request_id=request_id)
