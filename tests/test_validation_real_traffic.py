"""Every capture of live API traffic in ``../shared/real_traffic`` validates.

All 863 captures validate in lenient mode except the ones that are not Messages API objects
(``SKIPPED``: Files API calls). ``LENIENT_ONLY`` lists, as data, every capture that fails strict
mode, with the findings that make it fail; ``WHY`` says what each kind of finding means. The test
recomputes the findings, so the table cannot go stale.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from simulator.validation import Violation, errors, unwrap_capture, validate

WHY = {
    "tool_type": "a tool type outside the registry (tool search, advisor, memory): the schemas "
                 "model the tool types of the five seeds, PROTOCOL.md and the web tool versions "
                 "live traffic uses",
    "server_tool": "a server tool name outside the registry (tool search, advisor)",
    "block_type": "a content block type outside the features modelled here (tool search, MCP "
                  "connector, advisor, compaction, fallback, tool_addition/tool_removal)",
    "tool_result_content": "tool_result content other than text/image/document (tool_reference "
                           "from tool search, search_result)",
    "delta_type": "a beta delta type (compaction_delta)",
    "role": "a beta 'system' turn carrying tool_addition/tool_removal blocks",
    "field": "a field no documented shape has (output_format, the structured-output beta "
             "parameter, is modelled now: issue 25); abort_reason and usage.iterations are "
             "modelled from live traffic",
    "required": "a documented required field is missing: stop_sequence in two vercel/ai "
                "recordings",
    "stream_order": "the events break the documented order (PROTOCOL.md § 6 Grammar): a stream "
                    "cut short (pysdk__003, the SDK's incomplete-JSON fixture), block indices "
                    "that skip (vercel__022), message_start/message_stop pairs with no "
                    "message_delta while programmatic calls run (vercel__065)",
}
#: Captures that are not Messages API objects: id -> what they are.
SKIPPED = {
    **{f"pydai__{n:03d}": "Files API request (download)" for n in (11, 17, 23, 29, 35, 41, 47, 53)},
    **{f"pydai__{n:03d}": "Files API response (file_deleted)" for n in (12, 18, 24, 30, 36, 42, 48,
                                                                         54)},
    "pydai__328": "Files API response (file metadata)",
    "pydai__330": "Files API response (file metadata)",
}


def finding(v: Violation) -> str:
    """``family:value`` naming why a strict violation happened (see ``WHY``)."""
    value = re.match(r"'([^']*)' is not one of", v.message)
    extra = re.search(r"\('([^']*)' was unexpected\)", v.message)
    missing = re.match(r"'([^']*)' is a required property", v.message)
    family = {"tools/tool_definition:enum": "tool_type", "blocks/server_tool_use:enum": "server_tool",
              "blocks/response_block:enum": "block_type", "blocks/block:enum": "block_type",
              "blocks/tool_result:enum": "tool_result_content", "streaming/delta:enum": "delta_type",
              "messages/message:enum": "role"}.get(v.rule)
    if family and value:
        return f"{family}:{value.group(1)}"
    if v.rule == "sse.order":
        return "stream_order:" + ("message_stop" if "message_stop" in v.message else "blocks")
    if extra:
        return f"field:{extra.group(1)}"
    if missing:
        return f"required:{missing.group(1)}"
    return f"unexplained:{v.rule}:{v.pointer}"


def capture_id(path: Path) -> str:
    return "__".join(path.name.split("__")[:2])


@cache
def _load(root: str) -> list[tuple[str, str, Any]]:
    out = []
    for path in sorted(Path(root).glob("*.json")):
        unwrapped = unwrap_capture(json.loads(path.read_text(encoding="utf-8")))
        assert unwrapped is not None, f"{path.name} is not a capture"
        kind, data, _ = unwrapped
        out.append((capture_id(path), kind, data))
    return out


@pytest.fixture(scope="module")
def captures(shared_dir: Path) -> list[tuple[str, str, Any]]:
    root = shared_dir / "real_traffic"
    if not root.is_dir():
        pytest.skip(f"{root} is absent (captures of live traffic live outside the project)")
    return _load(str(root))


def test_all_captures_are_read(captures: list[tuple[str, str, Any]]) -> None:
    assert len(captures) == 863
    assert {i for i, kind, _ in captures if kind == "unknown"} == set(SKIPPED)


def test_every_capture_validates_in_lenient_mode(captures: list[tuple[str, str, Any]]) -> None:
    failures = [f"{i}: {v}" for i, kind, data in captures if kind != "unknown"
                for v in errors(validate(data, kind))]
    assert not failures, "\n".join(failures[:20])


def test_strict_mode_findings_are_the_recorded_ones(captures: list[tuple[str, str, Any]]) -> None:
    found = {}
    for i, kind, data in captures:
        if kind == "unknown":
            continue
        vs = errors(validate(data, kind, strict=True))
        if vs:
            found[i] = " ".join(sorted({finding(v) for v in vs}))
    assert found == LENIENT_ONLY
    families = {f.split(":")[0] for r in LENIENT_ONLY.values() for f in r.split()}
    assert families <= set(WHY), families - set(WHY)


def test_legacy_error_codes_do_not_occur_in_live_traffic(
        captures: list[tuple[str, str, Any]]) -> None:
    notes = [v for i, kind, data in captures if kind != "unknown" for v in validate(data, kind)
             if v.severity == "info" and "legacy" in v.message]
    assert notes == []


#: Every capture that fails strict mode -> its findings (``family:value``, see ``WHY``).
LENIENT_ONLY: dict[str, str] = {
    "pysdk__003": "stream_order:blocks",
    "vercel__022": "stream_order:blocks",
    "vercel__065": "stream_order:message_stop",
    "pydai__057": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__058": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__073": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__075": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__077": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__079": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__081": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__082": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__083": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__085": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__088": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__089": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__090": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__091": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__092": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__093": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__095": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__096": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__098": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__099": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__102": "tool_result_content:tool_reference",
    "pydai__104": "tool_result_content:tool_reference",
    "pydai__106": "tool_type:tool_search_tool_regex_20251119",
    "pydai__108": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__109": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__110": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__112": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__113": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__114": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__116": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__118": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__120": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__122": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__124": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__126": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__128": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__130": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__132": "tool_result_content:tool_reference",
    "pydai__134": "tool_result_content:tool_reference",
    "pydai__136": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__138": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__140": "block_type:tool_addition role:system",
    "pydai__142": "block_type:tool_addition role:system",
    "pydai__144": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__145": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__146": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__148": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__150": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__152": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "pydai__153": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25 tool_type:tool_search_tool_bm25_20251119",
    "pydai__155": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__157": "tool_result_content:tool_reference tool_type:tool_search_tool_bm25_20251119",
    "pydai__179": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__181": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__183": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__185": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__245": "block_type:mcp_tool_use",
    "pydai__246": "block_type:mcp_tool_result",
    "pydai__261": "tool_type:advisor_20260301",
    "pydai__262": "block_type:advisor_tool_result server_tool:advisor",
    "pydai__263": "block_type:advisor_tool_result server_tool:advisor",
    "pydai__264": "block_type:advisor_tool_result server_tool:advisor tool_type:advisor_20260301",
    "pydai__266": "tool_type:advisor_20260301",
    "pydai__267": "block_type:advisor_tool_result server_tool:advisor",
    "pydai__268": "tool_type:advisor_20260301",
    "pydai__269": "block_type:advisor_tool_result server_tool:advisor",
    "pydai__313": "block_type:compaction",
    "pydai__314": "block_type:compaction",
    "pydai__316": "block_type:compaction",
    "pydai__319": "block_type:compaction",
    "pydai__321": "block_type:compaction delta_type:compaction_delta",
    "pydai__327": "tool_type:memory_20250818",
    "pydai__329": "tool_result_content:tool_reference",
    "pydai__331": "tool_result_content:tool_reference",
    "pydai__333": "tool_result_content:tool_reference",
    "pydai__335": "tool_result_content:tool_reference",
    "pydai__337": "tool_result_content:tool_reference",
    "pydai__339": "tool_result_content:tool_reference",
    "pydai__341": "tool_result_content:tool_reference",
    "pydai__343": "tool_result_content:tool_reference",
    "pydai__345": "tool_result_content:tool_reference",
    "pydai__347": "tool_result_content:tool_reference",
    "pydai__349": "tool_result_content:tool_reference",
    "pydai__351": "tool_result_content:tool_reference",
    "pydai__353": "tool_result_content:tool_reference",
    "pydai__355": "tool_result_content:tool_reference",
    "pydai__357": "tool_result_content:tool_reference",
    "pydai__370": "tool_result_content:tool_reference",
    "pydai__372": "tool_result_content:tool_reference",
    "pydai__374": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__376": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__378": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__380": "tool_type:tool_search_tool_bm25_20251119",
    "pydai__382": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__384": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__395": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "pydai__396": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "pydai__397": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "pydai__399": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "pydai__400": "tool_type:memory_20250818",
    "pydai__402": "tool_type:memory_20250818",
    "pydai__490": "tool_type:tool_search_tool_regex_20251119",
    "pydai__491": "block_type:tool_search_tool_result server_tool:tool_search_tool_regex",
    "pydai__492": "tool_type:tool_search_tool_regex_20251119",
    "pydai__516": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__518": "block_type:tool_addition role:system tool_type:tool_search_tool_bm25_20251119",
    "pydai__520": "block_type:tool_addition block_type:tool_removal role:system",
    "pydai__522": "block_type:tool_addition block_type:tool_removal role:system tool_type:tool_search_tool_bm25_20251119",
    "rubyllm__016": "block_type:compaction",
    "vercel__001": "block_type:advisor_tool_result server_tool:advisor",
    "vercel__002": "block_type:advisor_tool_result server_tool:advisor",
    "vercel__003": "block_type:advisor_tool_result server_tool:advisor",
    "vercel__025": "block_type:compaction delta_type:compaction_delta",
    "vercel__026": "block_type:compaction",
    "vercel__027": "block_type:fallback",
    "vercel__056": "required:stop_sequence",
    "vercel__060": "required:stop_sequence",
    "vercel__061": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "vercel__062": "block_type:mcp_tool_result block_type:mcp_tool_use",
    "vercel__082": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "vercel__083": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "vercel__084": "block_type:tool_search_tool_result",
    "vercel__085": "block_type:tool_search_tool_result server_tool:tool_search_tool_bm25",
    "vercel__086": "block_type:tool_search_tool_result",
    "vercel__087": "block_type:tool_search_tool_result server_tool:tool_search_tool_regex",
    "vercel__088": "block_type:tool_search_tool_result server_tool:tool_search_tool_regex",
    "vercel__089": "block_type:tool_search_tool_result server_tool:tool_search_tool_regex",
}
