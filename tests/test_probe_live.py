"""``tooluse probe`` against the live API: runs only with TOOLUSE_LIVE=1 and ANTHROPIC_API_KEY
(skipped otherwise). Drives two small scenarios (no tools; a custom tool) with
$TOOLUSE_LIVE_MODEL (default claude-sonnet-4-6) under a small budget, and checks what a live
probe must give: final statuses, usage counted, a redacted recording, no credential on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conformance.cli import main

DATA = Path(__file__).parent / "data" / "probe" / "model_a" / "probe_demo"

pytestmark = pytest.mark.skipif(
    os.environ.get("TOOLUSE_LIVE") != "1" or not os.environ.get("ANTHROPIC_API_KEY"),
    reason="live API test: set TOOLUSE_LIVE=1 and ANTHROPIC_API_KEY to run it")


def test_live_probe(tmp_path: Path) -> None:
    model = os.environ.get("TOOLUSE_LIVE_MODEL", "claude-sonnet-4-6")
    out = tmp_path / "live"
    code = main(["probe", "--model", model, "--out", str(out), "--budget", "20000",
                 "--max-turns", "4", "--max-output-tokens", "600", "--concurrency", "2",
                 "--base-url", "https://api.anthropic.com",
                 str(DATA / "messages/greeting.json"), str(DATA / "custom/weather.json")])
    index = json.loads((out / "probe.json").read_text())
    assert code == 0, index
    assert index["complete"] is True
    for sid in ("probe_demo/messages/greeting", "probe_demo/custom/weather"):
        doc = json.loads((out / "scenarios" / f"{sid}.json").read_text())
        assert doc["status"] in ("completed", "max_turns", "max_output_tokens"), doc
        assert doc["usage"]["input_tokens"] > 0 and doc["model"] == model
    key = os.environ["ANTHROPIC_API_KEY"]
    for p in out.rglob("*.json"):
        assert key not in p.read_text(), p
