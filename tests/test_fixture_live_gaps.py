"""The corpus lacks nothing live traffic has but what ``fixtures/COVERAGE.md`` explains: every
block type, block field, message shape, tool type and block sent back that ``tooluse diff
fixtures ../shared/real_traffic`` shows only in live traffic is listed, with its reason, in the
builder's :data:`scripts.build_fixtures.coverage.LIVE_GAPS` (which COVERAGE.md prints), and every
listed one still differs (issue 16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.reports.diff import diff_paths
from conformance.reports.diff_traffic import message_shapes
from scripts.build_fixtures.coverage import LIVE_GAP_SECTIONS, LIVE_GAPS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _appeared(d: dict[str, Any], section: str) -> set[str]:
    if section == "block_fields":
        return {f"{t}.{f}" for t, v in d["block_fields"].items() for f in v["appeared"]}
    return set(d[section]["appeared"])


@pytest.mark.shared
def test_every_live_only_shape_is_explained(shared_dir: Path) -> None:
    real = shared_dir / "real_traffic"
    if not real.is_dir():
        pytest.skip(f"{real} is absent")
    d = diff_paths(FIXTURES, real, refusals=False)
    for section in LIVE_GAP_SECTIONS:
        explained = {v for s, v in LIVE_GAPS if s == section}
        appeared = _appeared(d, section)
        assert appeared <= explained, f"{section}: not in the corpus, not explained: " \
                                      f"{sorted(appeared - explained)}"
        assert explained <= appeared, f"{section}: explained but the corpus has them now: " \
                                      f"{sorted(explained - appeared)}"


def test_coverage_md_lists_the_explanations() -> None:
    text = (FIXTURES / "COVERAGE.md").read_text(encoding="utf-8")
    assert "## Live traffic the corpus does not cover" in text
    for (_, value), why in LIVE_GAPS.items():
        assert f"`{value}` | {why} |" in text


def test_message_shapes_name_the_forms_clients_parse() -> None:
    msg = {"id": "msg_011CWHPPTDTn1XufeRB9uHeH", "type": "message", "stop_details": None,
           "usage": {"input_tokens": 1, "iterations": []},
           "container": {"id": "container_1", "expires_at": "2025-12-20T05:33:35.789626Z"},
           "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {},
                        "caller": {"type": "direct"}},
                       {"type": "server_tool_use", "id": "s", "name": "web_fetch", "input": {},
                        "caller": {"type": "code_execution_20260120", "tool_id": "x"}},
                       {"type": "text", "text": "x",
                        "citations": [{"type": "web_search_result_location"}]}]}
    shapes = message_shapes(msg)
    assert {"id: msg_011C…", "message.stop_details", "usage.iterations", "container.expires_at",
            "container.expires_at: fractional seconds", "tool_use.caller: direct",
            "server_tool_use.caller: code execution",
            "text.citations: web_search_result_location"} <= shapes
    older = message_shapes({"id": "msg_01Abc", "container": {"expires_at": "2025-12-20T05:33:35Z"},
                            "content": [{"type": "tool_use"}]})
    assert {"id: msg_01…", "container.expires_at: whole seconds", "tool_use.caller: absent"} <= older
