"""The rules against every request of live traffic (``../shared/real_traffic``, issue 16).

Each captured request is paired with its real answer by recording (the capture's ``source``) and
interaction/exchange index (:mod:`simulator.captures`), replayed in its recording's order with
the state learned from the earlier real answers (:mod:`simulator.fidelity`), and judged by the
default rules. The API's verdict is the truth:

- every request it accepted (2xx) passes every default rule, except where a recorder dropped the
  headers a rule reads (``HEADER_GAPS``, with the recorder's source code as evidence);
- every request it refused with 400/404 is refused with the same status and error type, and the
  same message where the rule's message is the API's verbatim, except ``FALSE_ACCEPTS`` (each
  with the reason the simulator cannot refuse it);
- ``count_tokens`` requests get the API's status (200, or its 404 for an unknown model).

401 and 429 answers say nothing about a request's validity (the key or the rate limit); they are
shown in the table, not judged. Run with ``-s`` to see the agreement table.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from simulator.captures import Capture, load_captures
from simulator.fidelity import COUNT_TOKENS, MESSAGES, Replay, Verdict, agreement_table, judge
from simulator.rules import RULES

pytestmark = pytest.mark.shared

#: Capture prefix -> (evidence, the rules whose input the recorder dropped).
HEADER_GAPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pydai": ("pydantic/pydantic-ai tests/json_body_serializer.py: FILTERED_HEADER_PREFIXES = "
              "['anthropic-', 'cf-', 'x-'] removes anthropic-beta from every recorded request, so "
              "a legacy tool's beta header (code-execution-2025-05-22, sent by pydantic-ai's "
              "Anthropic model for code_execution_20250522) is never in the capture",
              ("beta.legacy_header_required",)),
}

#: Live 400/404 requests the rules accept -> why the simulator cannot refuse them.
FALSE_ACCEPTS: dict[str, str] = {
    "pydai__514": "a document whose URL the API fetched and could not decode ('The file format is "
                  "invalid or unsupported'): the simulator fetches no URLs and decodes no files",
    "rubyllm__057": "prompt is too long: the recorder replaced the 3.3M-token prompt with the "
                    "placeholder '<MASSIVE_TEXT>' (ruby_llm VCR filter_sensitive_data), so the "
                    "captured body is 11 short messages",
}

#: Rules whose message is not the API's verbatim (status and type still are).
NOT_VERBATIM: dict[str, str] = {
    "request.prompt_within_context_window": "the token count is the simulator's estimate",
}


@cache
def _captures(root: str) -> tuple[Capture, ...]:
    return tuple(load_captures(Path(root)))


@pytest.fixture(scope="module")
def verdicts(shared_dir: Path) -> list[Verdict]:
    root = shared_dir / "real_traffic"
    if not root.is_dir():
        pytest.skip(f"{root} is absent (captures of live traffic live outside the project)")
    gaps = {prefix: rules for prefix, (_, rules) in HEADER_GAPS.items()}
    out = judge(_captures(str(root)), Replay(header_gaps=gaps))
    for path in (MESSAGES, COUNT_TOKENS):
        print(f"\nPOST {path}: the simulator (rows) against the live API's answer (columns)\n"
              + agreement_table(v for v in out if v.exchange.path == path))
    return out


def _messages(verdicts: list[Verdict], *statuses: int) -> list[Verdict]:
    return [v for v in verdicts if v.exchange.path == MESSAGES and v.real_status is not None
            and (v.real_status < 300 if not statuses else v.real_status in statuses)]


def test_every_request_is_paired_by_recording_and_index(verdicts: list[Verdict]) -> None:
    msgs = [v for v in verdicts if v.exchange.path == MESSAGES]
    assert len(_messages(verdicts)) == 310
    assert len(_messages(verdicts, 400, 404)) == 12
    for v in msgs:
        if v.exchange.answer is not None:
            assert v.exchange.answer.source == v.exchange.request.source  # type: ignore[union-attr]
            assert v.exchange.answer.index == v.exchange.request.index  # type: ignore[union-attr]


def test_no_request_the_api_accepted_is_refused(verdicts: list[Verdict]) -> None:
    false_refusals = {v.id: f"{v.first.rule_id}: {v.first.message}"
                      for v in _messages(verdicts) if v.first is not None}
    assert false_refusals == {}


def test_every_refused_request_is_refused_alike(verdicts: list[Verdict]) -> None:
    refused = _messages(verdicts, 400, 404)
    accepted = {v.id for v in refused if v.accepted}
    assert accepted == set(FALSE_ACCEPTS)
    for v in refused:
        if v.accepted:
            continue
        real = v.real_error or {}
        assert v.first is not None
        assert (v.first.status, v.first.error_type) == (v.real_status, real.get("type")), v.id
        if v.first.rule_id not in NOT_VERBATIM:
            assert v.first.message == real.get("message"), v.id


def test_false_accepts_are_at_most_two_and_named(verdicts: list[Verdict]) -> None:
    assert len(FALSE_ACCEPTS) <= 2
    real = {v.id for v in _messages(verdicts, 400, 404)}
    assert set(FALSE_ACCEPTS) <= real, "a listed false accept is no longer a live 400/404"


def test_count_tokens_is_answered_as_the_api_does(verdicts: list[Verdict]) -> None:
    counted = [v for v in verdicts if v.exchange.path == COUNT_TOKENS]
    assert len(counted) == 3
    for v in counted:
        assert v.sim_status == v.real_status, v.id
        if v.first is not None:
            assert v.first.message == (v.real_error or {}).get("message"), v.id


def test_header_gaps_are_real_and_only_header_rules(shared_dir: Path,
                                                    verdicts: list[Verdict]) -> None:
    """Without the gaps, the extra refusals are exactly the listed rules on requests of the
    listed recorders, which the recorder saved without headers: the list is neither stale nor
    a way to hide a rule that is wrong."""
    plain = {v.id: v for v in judge(_captures(str(shared_dir / "real_traffic")))}
    fired: dict[str, set[str]] = {}
    for v in verdicts:
        p = plain[v.id]
        if [x.rule_id for x in p.violations] == [x.rule_id for x in v.violations]:
            continue
        prefix = v.id.split("__")[0]
        assert prefix in HEADER_GAPS and v.exchange.headers is None, v.id
        extra = {x.rule_id for x in p.violations} - {x.rule_id for x in v.violations}
        assert extra <= set(HEADER_GAPS[prefix][1]), (v.id, extra)
        fired.setdefault(prefix, set()).update(extra)
    assert {p: set(r) for p, (_, r) in HEADER_GAPS.items()} == fired
    for _, rules in HEADER_GAPS.values():
        assert set(rules) <= set(RULES)


#: What strict validation still refuses in live traffic -> why it is outside the seeds' scope.
#: Keys are the finding families of tests/test_validation_real_traffic.py (``family:value``).
OUT_OF_SCOPE: dict[str, str] = {
    "tool_type:tool_search_tool_bm25_20251119": "tool search (not in the seeds)",
    "tool_type:tool_search_tool_regex_20251119": "tool search (not in the seeds)",
    "server_tool:tool_search_tool_bm25": "tool search",
    "server_tool:tool_search_tool_regex": "tool search",
    "block_type:tool_search_tool_result": "tool search",
    "tool_result_content:tool_reference": "tool search (tool_reference results)",
    "block_type:tool_addition": "tool availability deltas (beta system turns)",
    "block_type:tool_removal": "tool availability deltas (beta system turns)",
    "role:system": "tool availability deltas (beta system turns)",
    "tool_type:advisor_20260301": "advisor tool (not in the seeds)",
    "server_tool:advisor": "advisor tool",
    "block_type:advisor_tool_result": "advisor tool",
    "block_type:compaction": "compaction (beta context management)",
    "delta_type:compaction_delta": "compaction (beta context management)",
    "block_type:mcp_tool_use": "MCP connector (not in the seeds)",
    "block_type:mcp_tool_result": "MCP connector",
    "tool_type:memory_20250818": "memory tool (not in the seeds)",
    "block_type:fallback": "server-side model fallback (beta)",
    "required:stop_sequence": "two vercel/ai recordings drop stop_sequence (a recorder gap)",
    "stream_order:blocks": "recordings cut or spliced (pysdk__003 incomplete JSON, vercel__022)",
    "stream_order:message_stop": "vercel__065 splices message_start/stop pairs of code calls",
}


def test_strict_validation_fails_only_outside_the_seeds_scope(shared_dir: Path) -> None:
    from test_validation_real_traffic import LENIENT_ONLY
    findings = {f for r in LENIENT_ONLY.values() for f in r.split()}
    assert findings - set(OUT_OF_SCOPE) == set()
    assert set(OUT_OF_SCOPE) - findings == set(), "a listed reason no longer occurs"
    web = [i for i, r in LENIENT_ONLY.items() if "web_search" in r or "web_fetch" in r
           or "abort_reason" in r or "iterations" in r]
    assert web == []
