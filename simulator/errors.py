"""API-shaped error responses and request ids.

Every error the simulator produces has the API's shape (PROTOCOL.md §5)::

    HTTP <status>, headers {"request-id": "req_...", "content-type": "application/json",
                            "x-should-retry": "false"}
    {"type": "error", "error": {"type": <error type>, "message": ...}, "request_id": "req_..."}

Use :func:`api_error` (any status) or :func:`invalid_request` (400). :data:`STATUS_TYPES` maps the
documented statuses to their error types.
"""

from __future__ import annotations

import hashlib
import itertools
import os
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

#: The base58 alphabet (no ``0``, ``O``, ``I``, ``l``): every live request and message id of the
#: ``011C`` form uses it (real_traffic: 36 ``req_011C…`` and 154 ``msg_011C…`` ids, none with
#: those four characters).
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
#: Byte -> base58 character (256 = 4 * 58 + 24: the first 24 characters are a little likelier,
#: which an id does not mind).
_TO_BASE58 = bytes(ord(BASE58[b % 58]) for b in range(256))
#: The id forms of the live API: prefix + ``011C`` + 20 base58 characters (28 in all).
ID_BODY = 20


class RequestIds:
    """Ids shaped like the API's (``req_011C`` + 20 base58 chars; :meth:`message` gives
    ``msg_011C…``), reproducible by seed: the n-th id of a seed is a keyed BLAKE2b hash of n (no
    random generator to set up)."""

    def __init__(self, seed: int | None = None) -> None:
        self._key = b"%d" % seed if seed is not None else os.urandom(16)
        self._count = itertools.count(1)  # next() is atomic: ids stay unique across threads

    def _body(self) -> str:
        digest = hashlib.blake2b(next(self._count).to_bytes(8, "little"), digest_size=ID_BODY,
                                 key=self._key).digest()
        return digest.translate(_TO_BASE58).decode("ascii")

    def new(self) -> str:
        return "req_011C" + self._body()

    def message(self) -> str:
        """A message id of the newer models' form (``msg_011C…``: 154 of 462 live messages)."""
        return "msg_011C" + self._body()


_default_ids = RequestIds()


def new_request_id() -> str:
    return _default_ids.new()


def error_body(error_type: str, message: str, request_id: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": error_type, "message": message},
            "request_id": request_id}


#: Statuses the API marks retryable (``x-should-retry: true``: 429 in real_traffic pysdk__066;
#: 408/409/5xx as the SDK retries them [S ``_base_client.py``]); every other error says
#: ``false`` (400 pysdk__112, rubyllm__058; 401 rubyllm__030). Successes carry no such header.
RETRYABLE = frozenset({408, 409, 429})


def should_retry(status: int) -> str:
    """The ``x-should-retry`` value the API sends with an error of ``status``."""
    return "true" if status in RETRYABLE or status >= 500 else "false"


def api_error(status: int, error_type: str | None, message: str, *, request_id: str | None = None,
              headers: Mapping[str, str] | None = None) -> SimResponse:
    """An error response in the API's shape (with ``x-should-retry``); ``error_type`` defaults
    from the status."""
    rid = request_id or new_request_id()
    etype = error_type or STATUS_TYPES.get(status, "api_error" if status >= 500
                                           else "invalid_request_error")
    h = json_headers({"request-id": rid, "x-should-retry": should_retry(status)})
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
