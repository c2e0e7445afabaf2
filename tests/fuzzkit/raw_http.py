"""Raw HTTP/1.1 over a socket, for fuzzing ``tooluse serve`` below any client library."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


def request_bytes(method: str, path: str, headers: dict[str, str], body: bytes, *,
                  content_length: bool = True) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "host: 127.0.0.1", "connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if content_length:
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def exchange(base_url: str, data: bytes | list[bytes], *, timeout: float = 20.0,
             shut_write: bool = False) -> RawResponse:
    """Send ``data`` and read until the server closes. Raises ``TimeoutError`` on a hung
    connection and ``ValueError`` when the reply is not HTTP."""
    host, _, port = base_url.removeprefix("http://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        try:
            for part in data if isinstance(data, list) else [data]:
                sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered (e.g. 413) and closed before taking everything
        if shut_write:
            sock.shutdown(socket.SHUT_WR)
        raw = b""
        try:
            while chunk := sock.recv(65536):
                raw += chunk
        except ConnectionResetError:
            pass
    return parse(raw)


def parse(raw: bytes) -> RawResponse:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1.1 "):
        raise ValueError(f"not an HTTP response: {raw[:200]!r}")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return RawResponse(int(status_line.split()[1]), headers, body)


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2:]
    return out
