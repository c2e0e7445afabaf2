"""The fixture corpus covers what the docs define, and its coverage table is current.

``REQUIRED`` below is derived from :mod:`simulator.registry` (tool versions, error codes, stop
reasons, commands) plus the scenarios issue 4 lists; a combination missing from the corpus fails
here with the combination named. ``fixtures/COVERAGE.md`` is regenerated in memory and must equal
the committed file; the builder must reproduce the committed cassettes byte for byte.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.cassette import Cassette, iter_corpus
from simulator.lint import CassetteFacts, cassette_facts
from simulator.registry import (
    API_ERROR_TYPES,
    STOP_REASONS,
    TOOLS,
    WEB_FETCH_ERROR_CODES,
    WEB_SEARCH_ERROR_CODES,
    of_family,
)
from simulator.rules import RULES

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.build_fixtures import stale_files  # noqa: E402
from scripts.build_fixtures.coverage import coverage_markdown  # noqa: E402

#: Rules whose rejection is documented or recorded (PROTOCOL.md §1-§5, seeds 000/002/003); each
#: needs an ``expect_rule`` exchange. ``messages.roles.alternate`` is tagged [?] (the API merges
#: consecutive turns rather than refusing them), so no cassette claims its error.
DOCUMENTED_REJECTIONS = (
    "container.unknown_or_expired", "pause_turn.resend_assistant_content",
    "server_tool_use.pending.same_tools", "ptc.container.required", "ptc.pending.only_tool_results",
    "ptc.tool_result.text_content_only", "tool_choice.requires_direct_caller",
    "ptc.strict_unsupported", "ptc.disable_parallel_tool_use_unsupported", "ptc.recursive_ref",
    "ptc.mcp_not_code_callable", "messages.tool_result.answers_previous_tool_use",
    "messages.tool_use.answered_once_in_next_message", "messages.tool_result.before_other_content",
    "tools.fixed_type_name", "beta.legacy_header_required", "tools.model_compatibility",
    "tools.web_tools_need_code_execution_20260120", "request.schema", "beta.header_known",
    # closed sets and ranges, worded as live answers quoted in public reports show them
    "tool_choice.type_known", "messages.roles.known", "content.block_type_known",
    "sampling.temperature_range", "sampling.top_p_range", "request.known_fields",
)
CE_SCENARIOS = ("bash_run", "bash_output_files", "editor_view", "editor_create_new",
                "editor_create_update", "editor_str_replace", "pause_turn", "container_reuse",
                "container_expired", "container_upload")
PTC_SCENARIOS = ("pause_resume", "parallel_calls", "several_pauses", "pending_call_timeout",
                 "repl_state", "haiku_without_ptc", "reject_missing_container",
                 "reject_text_next_to_results", "reject_non_text_result",
                 "reject_tool_choice_code_only", "reject_strict", "reject_disable_parallel_tool_use",
                 "reject_recursive_ref", "reject_mcp_code_callable")
BASH_SCENARIOS = ("one_command", "several_tool_uses", "restart", "error_timeout",
                  "error_command_not_found", "error_permission_denied")
EDITOR_SCENARIOS = ("view", "str_replace", "create", "insert_at_0", "view_range_to_end",
                    "view_directory", "error_file_not_found", "error_multiple_matches",
                    "error_no_match", "error_permission_denied")
API_STATUSES = (400, 401, 403, 404, 413, 429, 500, 529)
MA_SCENARIOS = ("one_tool_use", "several_tool_uses", "requires_action_unanswered", "error_result",
                "mcp_wrapped_tool_fails")


def _required() -> Iterator[tuple[str, str, str, bool]]:
    """(kind, tool_type, what, streamed) combinations the corpus must hold."""
    for tv in of_family("code_execution"):
        for sub, result_block in tv.sub_tools.items():
            for code in tv.error_codes[sub]:
                for streamed in (False, True):
                    yield "error_result", tv.type, f"{result_block}:{code}", streamed
        if not tv.legacy:
            for scen in CE_SCENARIOS:
                for streamed in (False, True):
                    yield "scenario", tv.type, scen, streamed
    for v in ("code_execution_20260120", "code_execution_20260521"):
        for scen in PTC_SCENARIOS:
            yield "scenario", v, scen, False
        yield "scenario", v, "pause_resume", True
    yield "scenario", "code_execution_20260521", "detection_timeout", False
    for tv in of_family("bash"):
        for scen in BASH_SCENARIOS:
            yield "scenario", tv.type, scen, False
        for kind in ("timeout", "command_not_found", "permission_denied"):
            yield "client_error", tv.type, kind, False
    for tv in of_family("text_editor"):
        for scen in EDITOR_SCENARIOS:
            yield "scenario", tv.type, scen, False
        for kind in ("file_not_found", "multiple_matches", "no_match", "permission_denied"):
            yield "client_error", tv.type, kind, False
        yield "scenario", tv.type, "undo_edit" if "undo_edit" in tv.command_names else \
            "undo_edit_unavailable", False
        if "insert_text" in tv.insert_text_fields:
            yield "scenario", tv.type, "insert_text_at_0", False
        if "max_characters" in tv.definition_fields:
            yield "scenario", tv.type, "max_characters", False
    for t, codes in (("web_search_20260209", WEB_SEARCH_ERROR_CODES),
                     ("web_fetch_20260209", WEB_FETCH_ERROR_CODES)):
        block = TOOLS[t].sub_tools[t.rsplit("_", 1)[0]]
        for code in codes:
            yield "error_result", t, f"{block}:{code}", False
    yield "scenario", "code_execution_20250825", "deferred_server_result", False
    yield "scenario", "code_execution_20250825", "deferred_server_result", True
    for status in API_STATUSES:
        yield "status", "messages", str(status), False
        yield "api_error", "messages", API_ERROR_TYPES[status], False
    yield "scenario", "messages", "mid_stream_error", True
    yield "api_error", "messages", "overloaded_error", True  # the error event after HTTP 200
    for scen in MA_SCENARIOS:
        yield "scenario", "custom", scen, False
    for kind in ("tool_error", "mcp_tool_error"):
        yield "client_error", "custom", kind, False


REQUIRED = tuple(_required())


@pytest.fixture(scope="module")
def corpus() -> list[Cassette]:
    return list(iter_corpus(FIXTURES))


@pytest.fixture(scope="module")
def facts(corpus: list[Cassette]) -> list[CassetteFacts]:
    return [cassette_facts(c) for c in corpus]


def _has(facts: list[CassetteFacts], kind: str, tool_type: str, what: str, streamed: bool) -> bool:
    for f in facts:
        if f.tool_type != tool_type or f.streamed != streamed:
            continue
        if kind == "error_code" and what in f.error_codes:
            return True
        if kind == "api_error" and what in f.api_errors:
            return True
        if kind == "client_error" and what in f.client_errors:
            return True
        if kind == "error_result" and tuple(what.split(":", 1)) in f.error_results:
            return True
        if kind == "scenario" and f.scenario == what:
            return True
        if kind == "status" and int(what) in f.statuses:
            return True
    return False


def test_required_combinations_are_covered(facts: list[CassetteFacts]) -> None:
    missing = [r for r in REQUIRED if not _has(facts, *r)]
    assert not missing, "combinations missing from fixtures/: " + "; ".join(
        f"{k} {t} {w}{' (streamed)' if s else ''}" for k, t, w, s in missing)


def test_every_stop_reason_is_covered(facts: list[CassetteFacts]) -> None:
    seen = {s for f in facts for s in f.stop_reasons}
    assert set(STOP_REASONS) - seen == set()


def test_every_documented_rejection_has_an_expect_rule_exchange(facts: list[CassetteFacts]) -> None:
    seen = {r for f in facts for r in f.rules}
    assert set(DOCUMENTED_REJECTIONS) - seen == set()
    assert seen <= set(RULES), f"expect_rule names unknown rules: {sorted(seen - set(RULES))}"


def test_every_messages_tool_version_has_cassettes(facts: list[CassetteFacts]) -> None:
    wanted = {t for t, tv in TOOLS.items() if tv.family not in ("custom", "agent_toolset")}
    assert wanted - {f.tool_type for f in facts} == set()


def test_required_list_fails_on_a_missing_combination(facts: list[CassetteFacts]) -> None:
    """The check can fail: drop the cassettes of one error code and it is reported."""
    without = [f for f in facts if "output_file_too_large" not in f.error_codes]
    wanted = ("error_result", "code_execution_20250825",
              "bash_code_execution_tool_result:output_file_too_large", False)
    assert wanted in REQUIRED
    assert _has(facts, *wanted)
    assert not _has(without, *wanted)


def test_coverage_md_is_current(corpus: list[Cassette]) -> None:
    committed = (FIXTURES / "COVERAGE.md").read_text(encoding="utf-8")
    assert coverage_markdown(corpus) == committed, (
        "fixtures/COVERAGE.md is stale: run `python -m scripts.build_fixtures`")


def test_builder_reproduces_the_committed_corpus() -> None:
    stale = stale_files(FIXTURES)
    assert not stale, "fixtures/ differs from the scenario definitions (run `python -m " \
                      f"scripts.build_fixtures`): {stale[:5]}"


def test_the_builder_notices_a_hand_edit(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    target = tmp_path / "fixtures" / "bash" / "bash_20250124" / "one_command.json"
    target.write_text(target.read_text(encoding="utf-8").replace("app.py", "main.py"), encoding="utf-8")
    assert stale_files(tmp_path / "fixtures") == [
        "bash/bash_20250124/one_command.json: differs from its scenario (hand-edited or stale)"]
