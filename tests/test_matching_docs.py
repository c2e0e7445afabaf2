"""Issue 14, point 6: the request-matching rules documented for users (docs/serve-and-record.md,
"How a request is matched to a recording") are the engine's. The worked example is run as
written and must print what the page says; the other statements are checked against the engine.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest

import simulator
from simulator.matchers import DEFAULT_MATCHERS, TOLERANT_MATCHERS, matchers_by_name

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "serve-and-record.md").read_text()
SECTION = DOC.split("## How a request is matched to a recording", 1)[1].split("\n## ", 1)[0]
CASSETTE = "bash/bash_20250124/one_command.json"
TOOLS = [{"type": "bash_20250124", "name": "bash"}]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, re.S)


def normal(text: str) -> str:
    text = re.sub(r"\(/[^()]*?/fixtures/", "(…/fixtures/", text)
    return re.sub(r"req_[A-Za-z0-9]+", "req_…", text)


def test_the_worked_example_prints_what_the_page_says(tmp_path: Path) -> None:
    code, expected = blocks("python")[0], blocks("text")[0]
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert normal(proc.stdout) == normal(expected)


def test_the_matcher_table_is_the_default_matchers() -> None:
    exact, tolerant = SECTION.split("### The tolerant set")
    table = re.findall(r"^\| `([a-z_.]+)` \|", exact, re.M)
    assert table == [m.name for m in DEFAULT_MATCHERS]
    replaced = re.findall(r"^\| `([a-z_.]+)` \|", tolerant, re.M)
    assert replaced == [m.name for m in TOLERANT_MATCHERS if m not in DEFAULT_MATCHERS]


def _conversation(first: Any, prompt: str, extra: list[dict[str, Any]] | None = None
                  ) -> list[dict[str, Any]]:
    call = first.content[1]
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                          "content": "app.py"}, *(extra or [])]}]


def test_the_shape_mismatch_text_is_the_engines() -> None:
    with simulator.mock(CASSETTE) as api:
        client = anthropic.Anthropic(max_retries=0)
        first = client.messages.create(model="claude-opus-4-7", max_tokens=1024, tools=TOOLS,
                                       messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.BadRequestError) as e:
            client.messages.create(model="claude-opus-4-7", max_tokens=1024, tools=TOOLS,
                                   messages=_conversation(first, "hi", [
                                       {"type": "text", "text": "also count them"}]))
        assert api.simulator.mismatches[0].matcher == "messages.shape"
    said = str(e.value.body["error"]["message"])  # type: ignore[index]
    documented = re.search(r"matcher `messages\.shape`: .*?\.\n", SECTION)
    assert documented and documented.group(0).strip() in said


def test_a_request_after_the_last_exchange_gets_the_documented_message() -> None:
    with simulator.mock(CASSETTE):
        client = anthropic.Anthropic(max_retries=0)
        first = client.messages.create(model="claude-opus-4-7", max_tokens=1024, tools=TOOLS,
                                       messages=[{"role": "user", "content": "hi"}])
        client.messages.create(model="claude-opus-4-7", max_tokens=1024, tools=TOOLS,
                               messages=_conversation(first, "hi"))
        with pytest.raises(anthropic.BadRequestError) as e:
            client.messages.create(model="claude-opus-4-7", max_tokens=1024, tools=TOOLS,
                                   messages=[{"role": "user", "content": "hi"}])
    said = " ".join(str(e.value.body["error"]["message"]).split())  # type: ignore[index]
    assert said in " ".join(SECTION.split())


def test_the_messages_matcher_pins_the_prompt_and_strict_matching_off_serves_anyway() -> None:
    pinned = matchers_by_name(["method", "path", "model", "tools", "messages"])
    body = {"model": "claude-opus-4-7", "max_tokens": 1024, "tools": TOOLS,
            "messages": [{"role": "user", "content": "Show me the Python files, please."}]}
    with simulator.mock(CASSETTE, matchers=pinned) as api:
        with pytest.raises(anthropic.BadRequestError, match="matcher `messages`"):
            anthropic.Anthropic(max_retries=0).messages.create(**body)
        assert api.simulator.mismatches[0].matcher == "messages"
    with simulator.mock(CASSETTE, matchers=pinned, strict_matching=False) as api:
        reply = anthropic.Anthropic(max_retries=0).messages.create(**body)
        assert reply.stop_reason == "tool_use"
        assert api.simulator.mismatches and api.simulator.mismatches[0].refused is False
    assert "`messages`" in SECTION and "strict_matching=False" in SECTION
