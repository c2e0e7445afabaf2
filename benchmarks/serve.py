"""``tooluse serve`` throughput: requests per second and latency under concurrent load.

The server (``tooluse serve --repeat --port 0``, engine log bounded by ``tooluse serve``'s
``log_limit``) runs in its own process; :mod:`benchmarks.loadgen` drives it from a second process
over loopback with keep-alive HTTP/1.1 connections. Every client sends the first request of the
benchmark conversation again and again (``--repeat`` serves an already-served exchange again), with
full rule checking on each request. Non-streamed and streamed (the same request with
``"stream": true``: SSE synthesized from the recorded message), each bounded in count and time,
after a short warm-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import conversation

TARGET_RPS = 2000
ROOT = Path(__file__).resolve().parents[1]


def _start_server(cassette: Path) -> tuple[subprocess.Popen[str], str]:
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--repeat", "--port", "0",
                             str(cassette)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("http"):
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"tooluse serve did not start: {line!r} {err[-500:]}")
    return proc, line


def _load(url: str, body: Path, concurrency: int, requests: int, seconds: float) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.loadgen", url, str(body),
                          "--concurrency", str(concurrency), "--requests", str(requests),
                          "--max-seconds", str(seconds)],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure(smoke: bool = False, concurrency: int = 16) -> list[dict[str, Any]]:
    # smoke: a few requests per client (the count ends it; the time cap is only a backstop, so
    # that a loaded machine cannot leave a run with no request done)
    requests, seconds = (48, 30.0) if smoke else (20_000, 10.0)
    pairs = conversation.build(2)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cassette = Path(tmp) / "serve.json"
        cassette.write_text(json.dumps(conversation.as_cassette(pairs, "serve")))
        proc, base = _start_server(cassette)
        try:
            for stream in (False, True):
                body = Path(tmp) / f"body_{int(stream)}.json"
                request = dict(pairs[0][0], stream=True) if stream else pairs[0][0]
                body.write_bytes(json.dumps(request).encode())
                url = base + "/v1/messages"
                _load(url, body, concurrency, 16 if smoke else 1000, seconds)  # warm-up
                t0 = time.perf_counter()
                result = _load(url, body, concurrency, requests, seconds)
                row: dict[str, Any] = {
                    "section": "serve", "stream": stream, "concurrency": concurrency,
                    "requests": result["requests"], "errors": result["errors"],
                    "error_statuses": result["error_statuses"],
                    "wall_seconds": result["wall_seconds"], "rps": result["rps"],
                    "latency_ms": result["latency_ms"],
                    "elapsed_with_process_start": round(time.perf_counter() - t0, 3),
                }
                if not stream:
                    row["target"] = f"rps >= {TARGET_RPS} (non-streamed)"
                    row["met"] = result["rps"] >= TARGET_RPS and result["errors"] == 0
                rows.append(row)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return rows
