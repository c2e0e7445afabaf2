"""A small HTTP/1.1 keep-alive load generator, run as a second process on loopback.

``python -m benchmarks.loadgen URL BODY_FILE --concurrency C --requests N --max-seconds S``
prints one JSON object: requests done, errors, wall time, requests per second and latency
percentiles. Bounded in count and time. Understands Content-Length and chunked bodies (SSE).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from urllib.parse import urlsplit


async def _read_response(reader: asyncio.StreamReader) -> int:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("connection closed")
    status = int(status_line.split()[1])
    length = None
    chunked = False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def _worker(host: str, port: int, request: bytes, deadline: float, budget: list[int],
                  latencies: list[float], errors: list[str]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while budget[0] > 0 and time.perf_counter() < deadline:
            budget[0] -= 1
            t0 = time.perf_counter()
            writer.write(request)
            status = await _read_response(reader)
            latencies.append(time.perf_counter() - t0)
            if status != 200:
                errors.append(str(status))
    finally:
        writer.close()


async def run(url: str, body: bytes, concurrency: int, requests: int, max_seconds: float) -> dict:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = (f"POST {parts.path or '/'} HTTP/1.1\r\nhost: {host}:{port}\r\n"
            "content-type: application/json\r\nanthropic-version: 2023-06-01\r\n"
            "x-api-key: placeholder-not-a-key\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode()
    request = head + body
    latencies: list[float] = []
    errors: list[str] = []
    budget = [requests]
    t0 = time.perf_counter()
    deadline = t0 + max_seconds
    await asyncio.gather(*(_worker(host, port, request, deadline, budget, latencies, errors)
                           for _ in range(concurrency)))
    wall = time.perf_counter() - t0
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 3) if lat else 0.0

    return {"requests": len(lat), "errors": len(errors), "error_statuses": sorted(set(errors)),
            "wall_seconds": round(wall, 3), "rps": round(len(lat) / wall, 1) if wall else 0.0,
            "latency_ms": {"p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99),
                           "mean": round(statistics.mean(lat) * 1000, 3) if lat else 0.0}}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("body_file")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--requests", type=int, default=5000)
    p.add_argument("--max-seconds", type=float, default=10.0)
    a = p.parse_args()
    with open(a.body_file, "rb") as f:
        body = f.read()
    print(json.dumps(asyncio.run(run(a.url, body, a.concurrency, a.requests, a.max_seconds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
