from __future__ import annotations

import pytest

from simulator import registry
from simulator.registry import TOOLS, ToolVersion


def test_every_documented_version_is_registered() -> None:
    expected = {
        "code_execution_20250522", "code_execution_20250825", "code_execution_20260120",
        "code_execution_20260521", "bash_20241022", "bash_20250124", "text_editor_20241022",
        "text_editor_20250124", "text_editor_20250429", "text_editor_20250728", "custom",
        "agent_toolset_20260401",
    }
    assert expected <= set(TOOLS)


def test_fixed_names() -> None:
    names = registry.fixed_names()
    assert names["text_editor_20250124"] == "str_replace_editor"
    assert names["text_editor_20250728"] == "str_replace_based_edit_tool"
    assert names["bash_20250124"] == "bash"
    assert names["code_execution_20260521"] == "code_execution"


def test_undo_edit_only_before_20250429() -> None:
    for t in registry.of_family("text_editor"):
        assert ("undo_edit" in t.command_names) == (t.type < "text_editor_20250429"), t.type


def test_max_characters_only_on_20250728() -> None:
    for t in registry.of_family("text_editor"):
        assert ("max_characters" in t.definition_fields) == (t.type == "text_editor_20250728")


def test_ptc_and_cell_limit() -> None:
    assert not TOOLS["code_execution_20250825"].programmatic_calling
    assert TOOLS["code_execution_20260120"].programmatic_calling
    assert TOOLS["code_execution_20260521"].cell_limit_seconds == 90
    assert TOOLS["code_execution_20260521"].detection_timeout
    assert TOOLS["code_execution_20260120"].cell_limit_seconds is None


def test_haiku_runs_new_versions_as_20250825() -> None:
    t = TOOLS["code_execution_20260120"]
    assert t.effective_type("claude-haiku-4-5-20251001") == "code_execution_20250825"
    assert t.effective_type("claude-haiku-4-5") == "code_execution_20250825"
    assert t.effective_type("claude-opus-5-5") == "code_execution_20260120"


def test_model_compatibility() -> None:
    assert TOOLS["bash_20241022"].accepts_model("claude-opus-5-5") is False
    assert TOOLS["bash_20241022"].accepts_model("claude-3-5-sonnet-20241022") is True
    assert TOOLS["text_editor_20250429"].accepts_model("claude-3-7-sonnet-20250219") is False
    assert TOOLS["text_editor_20250124"].accepts_model("claude-3-7-sonnet-20250219") is True
    assert TOOLS["code_execution_20250825"].accepts_model("some-future-model") is None


def test_legacy_beta_headers() -> None:
    assert TOOLS["code_execution_20250522"].beta_header == "code-execution-2025-05-22"
    assert TOOLS["bash_20241022"].beta_header == "computer-use-2024-10-22"
    assert TOOLS["text_editor_20241022"].beta_header == "computer-use-2024-10-22"
    assert TOOLS["bash_20250124"].beta_header is None


def test_registry_refuses_duplicates() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(ToolVersion(type="bash_20250124", family="bash", name="bash",
                                      side="client", source=TOOLS["bash_20250124"].source))


def test_every_fact_has_a_source() -> None:
    for t in TOOLS.values():
        assert t.source.section
        for f in t.facts:
            assert f.source.section, (t.type, f.text)


def test_web_versions_from_live_traffic() -> None:
    """The four web versions live traffic uses (issue 16) carry captures as their sources."""
    from simulator.sources import REAL_TRAFFIC
    for t in ("web_search_20250305", "web_fetch_20250910", "web_search_20260318",
              "web_fetch_20260318"):
        tv = TOOLS[t]
        assert tv.side == "server" and tv.name == t.rsplit("_", 1)[0]
        assert tv.source.document == REAL_TRAFFIC and tv.source.tag == "3P" and tv.facts
        assert tv.beta_header is None  # nothing the captures show is enforced
    # web search predates code execution: accepted on Sonnet 3.5 (real_traffic pydai__408)
    assert TOOLS["web_search_20250305"].accepts_model("claude-3-5-sonnet-20241022") is True
    assert TOOLS["web_search_20260209"].accepts_model("claude-3-5-sonnet-20241022") is False
    assert "use_cache" in TOOLS["web_fetch_20260318"].definition_fields
    assert "use_cache" not in TOOLS["web_fetch_20260209"].definition_fields
