"""The Files API as a client of the code execution tool sees it (beta ``files-api-2025-04-14``).

``POST /v1/files`` (multipart upload), ``GET /v1/files`` (list), ``GET /v1/files/{id}``
(metadata), ``GET /v1/files/{id}/content`` (download), ``DELETE /v1/files/{id}``.

:meth:`FilesAPI.from_cassettes` registers every ``file_id`` a cassette mentions, so the documented
loop that downloads each ``file_id`` of a code execution result works. Files the model created
(``file_id`` in a response) are downloadable; files a client uploaded are not (only files created
by the code execution tool or skills can be downloaded). Contents come from the cassette's
optional top-level ``"files": {file_id: {"filename", "mime_type", "content" | "content_base64"}}``,
else a short placeholder text.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from .cassette import Cassette
from .errors import api_error, invalid_request, not_found
from .http import SimRequest, SimResponse, json_headers

_FILE_PATH = re.compile(r"^/v1/files/(?P<id>[^/]+)(?P<content>/content)?/?$")


@dataclass
class StoredFile:
    id: str
    filename: str
    mime_type: str
    content: bytes
    downloadable: bool
    created_at: str

    def metadata(self) -> dict[str, Any]:
        return {"type": "file", "id": self.id, "filename": self.filename,
                "mime_type": self.mime_type, "size_bytes": len(self.content),
                "created_at": self.created_at, "downloadable": self.downloadable}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _file_ids(obj: Any) -> Iterator[str]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "file_id" and isinstance(value, str):
                yield value
            else:
                yield from _file_ids(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _file_ids(item)


def _multipart_file(request: SimRequest) -> tuple[str, str, bytes] | None:
    """(filename, content type, bytes) of the ``file`` part of a multipart upload."""
    ctype = request.headers.get("content-type", "")
    if not ctype.startswith("multipart/form-data"):
        return None
    head = f"Content-Type: {ctype}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return (part.get_filename() or "upload", part.get_content_type(),
                    payload if isinstance(payload, bytes) else b"")
    return None


class FilesAPI:
    """An in-memory Files API; a :data:`~simulator.http.Handler`."""

    def __init__(self, files: Iterable[StoredFile] = ()) -> None:
        self.files: dict[str, StoredFile] = {f.id: f for f in files}

    @classmethod
    def from_cassettes(cls, cassettes: Iterable[Cassette]) -> FilesAPI:
        api = cls()
        for cassette in cassettes:
            raw_files = cassette.raw.get("files")
            described: dict[str, Any] = raw_files if isinstance(raw_files, dict) else {}
            for ex in cassette.exchanges:
                for fid in _file_ids(ex.request.get("body")):
                    api.files.setdefault(fid, api._described(fid, described, downloadable=False))
                for fid in _file_ids([ex.response.get("body"), ex.response.get("events")]):
                    api.files[fid] = api._described(fid, described, downloadable=True)
            for fid in described:  # files the cassette carries (a recording's downloads)
                api.files.setdefault(fid, api._described(fid, described, downloadable=True))
        return api

    @staticmethod
    def _described(fid: str, described: dict[str, Any], *, downloadable: bool) -> StoredFile:
        entry = described.get(fid)
        d: dict[str, Any] = entry if isinstance(entry, dict) else {}
        if "content_base64" in d:
            content = base64.b64decode(str(d["content_base64"]))
        else:
            content = str(d.get("content", f"simulated content of {fid}\n")).encode()
        return StoredFile(fid, str(d.get("filename", f"{fid}.txt")),
                          str(d.get("mime_type", "text/plain")), content,
                          bool(d.get("downloadable", downloadable)),
                          str(d.get("created_at", "2026-01-01T00:00:00Z")))

    def add(self, content: bytes, filename: str, mime_type: str = "application/octet-stream",
            *, downloadable: bool = False) -> StoredFile:
        f = StoredFile("file_011" + secrets.token_hex(11), filename, mime_type, content,
                       downloadable, _now())
        self.files[f.id] = f
        return f

    def __call__(self, request: SimRequest) -> SimResponse:
        path, method = request.path.rstrip("/") or "/", request.method
        if path == "/v1/files":
            if method == "POST":
                return self._upload(request)
            if method == "GET":
                return self._list(request)
        elif (m := _FILE_PATH.match(path)) is not None:
            stored = self.files.get(m["id"])
            if stored is None:
                return not_found(f"File not found: {m['id']}")
            if m["content"] and method == "GET":
                return self._download(stored)
            if not m["content"] and method == "GET":
                return SimResponse(200, headers=json_headers(), body=stored.metadata())
            if not m["content"] and method == "DELETE":
                del self.files[stored.id]
                return SimResponse(200, headers=json_headers(), body={"id": stored.id, "type": "file_deleted"})
        else:
            return not_found()
        return api_error(405, "invalid_request_error", f"Method {method} is not allowed on {path}")

    def _upload(self, request: SimRequest) -> SimResponse:
        part = _multipart_file(request)
        if part is None:
            return invalid_request("Upload a file as multipart/form-data with a part named 'file'.")
        stored = self.add(part[2], part[0], part[1])
        return SimResponse(200, headers=json_headers(), body=stored.metadata())

    def _download(self, stored: StoredFile) -> SimResponse:
        if not stored.downloadable:
            # [I] The exact message is not documented; only model-created files are downloadable.
            return invalid_request(f"File {stored.id} is not downloadable: only files created by "
                                   "the code execution tool or skills can be downloaded.")
        return SimResponse(200, headers={"content-type": stored.mime_type}, body=stored.content)

    def _list(self, request: SimRequest) -> SimResponse:
        return SimResponse(200, headers=json_headers(), body=paginate(
            [f.metadata() for f in reversed(self.files.values())], request.query))


def paginate(items: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    """The API's list page (``data``, ``first_id``, ``last_id``, ``has_more``) over ``items``."""
    try:
        limit = max(1, min(1000, int(query.get("limit", "20"))))
    except ValueError:
        limit = 20
    ids = [i["id"] for i in items]
    if (after := query.get("after_id")) in ids:
        items = items[ids.index(after) + 1:]
    elif (before := query.get("before_id")) in ids:
        items = items[:ids.index(before)][-limit:]
    page = items[:limit]
    return {"data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None, "has_more": len(items) > len(page)}
