"""The TypeScript SDK (``@anthropic-ai/sdk`` from npm, pinned in ``tests/ts/package.json``)
completes a tool-use conversation against ``tooluse serve``.

``.ci/setup-extras`` runs ``npm install`` in ``tests/ts``; without Node.js or that install the
test skips with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sim_cassettes as sc

TS = Path(__file__).parent / "ts"


def _skip_reason() -> str | None:
    if shutil.which("node") is None:
        return "Node.js is not installed (the TypeScript SDK test needs `node`)"
    if not (TS / "node_modules" / "@anthropic-ai" / "sdk").is_dir():
        return f"{TS}/node_modules is absent: run `npm install` in tests/ts (.ci/setup-extras does)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def test_typescript_sdk_completes_a_conversation_against_tooluse_serve(tmp_path: Path) -> None:
    cassette = tmp_path / "weather.json"
    cassette.write_text(json.dumps(sc.weather().raw))
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    server = subprocess.Popen([sys.executable, "-c", code, "serve", str(cassette), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), server.stderr.read() if server.stderr else ""
        env = {**os.environ, "TOOLUSE_BASE_URL": base_url, "TOOLUSE_MODEL": sc.MODEL,
               "TOOLUSE_TOOLS": json.dumps([sc.WEATHER_TOOL]),
               "TOOLUSE_QUESTION": str(sc.QUESTION["content"]), "TOOLUSE_RESULT": "18°C, sunny"}
        node = subprocess.run(["node", "conversation.mjs"], cwd=TS, env=env, capture_output=True,
                              text=True, timeout=60)
    finally:
        server.terminate()
        server.wait(10)
    assert node.returncode == 0, node.stderr
    seen = json.loads(node.stdout.strip().splitlines()[-1])
    assert seen["firstStop"] == "tool_use" and seen["toolInput"] == {"city": "Paris"}
    assert seen["finalStop"] == "end_turn" and seen["finalText"] == sc.ANSWER
    assert seen["eventTypes"][0] == "message_start" and seen["eventTypes"][-1] == "message_stop"
    assert seen["modelId"] == sc.MODEL
