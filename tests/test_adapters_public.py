"""The adapters of public implementations (``conformance/adapters/``): openhands-aci,
openhands-tools, swe-rex and the anthropic SDK's tools.

Each adapter module imports without its implementation and, when a subject is made without it,
raises :class:`~conformance.adapters._lazy.ImplementationMissing` naming the pip requirement.
The behaviour tests run where the implementation is importable and skip with the reason
otherwise (OpenHands needs Python 3.12; ``tooluse matrix matrix.toml`` builds those environments).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters._lazy import ImplementationMissing, require
from conformance.adapters.openhands_aci import parse_output

#: adapter module, factory, the top-level package to hide, the requirement the error must name
ADAPTERS = [
    ("conformance.adapters.openhands_aci", "file_editor", "openhands_aci", "openhands-aci"),
    ("conformance.adapters.openhands_tools", "file_editor", "openhands", "openhands-tools"),
    ("conformance.adapters.openhands_tools", "terminal_tmux", "openhands", "openhands-tools"),
    ("conformance.adapters.openhands_tools", "terminal_subprocess", "openhands",
     "openhands-tools"),
    ("conformance.adapters.swe_rex", "local_runtime_bash", "swerex", "swe-rex"),
    ("conformance.adapters.anthropic_sdk", "memory_tool_editor", "anthropic", "anthropic"),
    ("conformance.adapters.anthropic_sdk", "async_memory_tool_editor", "anthropic", "anthropic"),
    ("conformance.adapters.anthropic_sdk", "agent_toolset_bash", "anthropic", "anthropic"),
    ("conformance.adapters.anthropic_sdk", "agent_toolset_editor", "anthropic", "anthropic"),
]

_HIDDEN = textwrap.dedent("""
    import importlib, json, sys, tempfile
    from pathlib import Path

    class Hide:
        def find_spec(self, name, path=None, target=None):
            if name == HIDE or name.startswith(HIDE + "."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, Hide())
    for name in list(sys.modules):
        if name == HIDE or name.startswith(HIDE + "."):
            del sys.modules[name]
    module = importlib.import_module(MODULE)
    try:
        with tempfile.TemporaryDirectory() as where:  # nothing left behind (issue 26)
            getattr(module, FACTORY)(Path(where))
    except Exception as e:
        print(json.dumps({"type": type(e).__name__, "message": str(e)}))
    else:
        print(json.dumps({"type": None}))
""")


@pytest.mark.parametrize(("module", "factory", "hide", "requirement"), ADAPTERS,
                         ids=[f"{m.rsplit('.', 1)[1]}:{f}" for m, f, _, _ in ADAPTERS])
def test_adapter_imports_without_its_implementation_and_names_it(
        module: str, factory: str, hide: str, requirement: str) -> None:
    code = f"HIDE, MODULE, FACTORY = {hide!r}, {module!r}, {factory!r}\n" + _HIDDEN
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["type"] == "ImplementationMissing", got
    assert f"pip install '{requirement}" in got["message"], got["message"]
    assert hide in got["message"]


def test_require_names_the_python_it_needs() -> None:
    with pytest.raises(ImplementationMissing, match=r"pip install 'no-such-dist'.*Python 3\.12"):
        require("no_such_module_for_tooluse", "no-such-dist", python="3.12")
    assert require("json", "json") is json


# --- openhands-aci ---------------------------------------------------------------------------

def test_aci_output_is_parsed_as_openhands_parses_it() -> None:
    body = {"output": None, "error": "Invalid `path` parameter", "path": None,
            "formatted_output_and_error": "ERROR:\nInvalid `path` parameter"}
    raw = f"<oh_aci_output_ab12>\n{json.dumps(body)}\n</oh_aci_output_ab12>"
    assert parse_output(raw) == {"content": "ERROR:\nInvalid `path` parameter",
                                 "is_error": True}
    body = {"output": "File created", "error": None, "formatted_output_and_error": "File created"}
    raw = f"<oh_aci_output_ff>\n{json.dumps(body)}\n</oh_aci_output_ff>"
    assert parse_output(raw) == {"content": "File created", "is_error": False}
    with pytest.raises(ValueError, match="no <oh_aci_output_"):
        parse_output("plain text")
    with pytest.raises(ValueError):  # the closing marker must match the opening one
        parse_output(f"<oh_aci_output_ab>\n{json.dumps(body)}\n</oh_aci_output_cd>")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


needs_aci = pytest.mark.skipif(not _importable("openhands_aci"),
                               reason="openhands-aci is not installed (pip install openhands-aci; "
                                      "Python 3.12)")
needs_oh_tools = pytest.mark.skipif(not _importable("openhands.tools"),
                                    reason="openhands-tools is not installed (pip install "
                                           "openhands-tools; Python 3.12)")
needs_swerex = pytest.mark.skipif(not _importable("swerex"),
                                  reason="swe-rex is not installed (pip install swe-rex)")
needs_sdk = pytest.mark.skipif(not _importable("anthropic.lib.tools._beta_builtin_memory_tool"),
                               reason="the anthropic SDK's memory tool is not importable")
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _call(handler: Any, tool_input: dict[str, Any]) -> dict[str, Any]:
    out = handler(tool_input)
    if inspect.isawaitable(out):
        out = asyncio.run(_awaited(out))
    if isinstance(out, str):  # a plain string is a successful result (DESIGN.md "Subjects")
        return {"content": out, "is_error": False}
    assert isinstance(out, dict), out
    return out


async def _awaited(value: Any) -> Any:
    return await value


@needs_aci
def test_aci_file_editor(tmp_path: Path) -> None:
    from conformance.adapters.openhands_aci import file_editor

    ed = file_editor(tmp_path)
    f = str(tmp_path / "a.txt")
    assert _call(ed, {"command": "create", "path": f, "file_text": "x\ny\n"})["is_error"] is False
    out = _call(ed, {"command": "view", "path": f})
    assert not out["is_error"] and "x" in out["content"] and "<oh_aci_output" not in out["content"]
    out = _call(ed, {"command": "view", "path": str(tmp_path / "missing")})
    assert out["is_error"] and out["content"].startswith("ERROR:\n")
    with pytest.raises(TypeError):  # the function's own signature: not hidden by the adapter
        ed({})


# --- openhands-tools -------------------------------------------------------------------------

@needs_oh_tools
def test_oh_file_editor_executor(tmp_path: Path) -> None:
    from conformance.adapters.openhands_tools import file_editor

    ed = file_editor(tmp_path)
    f = str(tmp_path / "a.txt")
    assert _call(ed, {"command": "create", "path": f, "file_text": "x\ny\n"})["is_error"] is False
    out = _call(ed, {"command": "str_replace", "path": f, "old_str": "y", "new_str": "z"})
    assert not out["is_error"] and (tmp_path / "a.txt").read_text() == "x\nz\n"
    out = _call(ed, {"command": "view", "path": str(tmp_path / "missing")})
    assert out["is_error"]
    out = _call(ed, {})  # pydantic refuses it, as the SDK's agent does before running the tool
    assert out["is_error"] and "Error validating tool arguments" in out["content"]
    ed.close()


def _terminal_roundtrip(factory: Any, tmp_path: Path) -> None:
    t = factory(tmp_path, timeout=5.0)
    try:
        out = _call(t, {"command": "cd /; export X=7"})
        assert not out["is_error"], out
        out = _call(t, {"command": "echo value=$X; pwd"})
        assert "value=7" in out["content"] and "exit code 0" in out["content"], out
        out = _call(t, {"command": "false"})
        assert "exit code 1" in out["content"]  # reported in the text, not as is_error
        assert out["is_error"] is False
        assert not _call(t, {"restart": True})["is_error"]
        out = _call(t, {"command": "echo value=[$X]"})
        assert "value=7" not in out["content"], out
    finally:
        t.close()


@needs_oh_tools
@needs_tmux
def test_oh_terminal_tmux(tmp_path: Path) -> None:
    from conformance.adapters.openhands_tools import terminal_tmux

    _terminal_roundtrip(terminal_tmux, tmp_path)


@needs_oh_tools
def test_oh_terminal_subprocess(tmp_path: Path) -> None:
    from conformance.adapters.openhands_tools import terminal_subprocess

    _terminal_roundtrip(terminal_subprocess, tmp_path)


# --- swe-rex ---------------------------------------------------------------------------------

@needs_swerex
def test_swe_rex_session_as_swe_agent_drives_it(tmp_path: Path) -> None:
    from conformance.adapters.swe_rex import local_runtime_bash

    async def scenario() -> list[dict[str, Any]]:
        s = local_runtime_bash(tmp_path, timeout=2.0)
        try:
            return [await s(x) for x in (
                {"command": "pwd"}, {"command": "cd /; export X=7"}, {"command": "echo $X; pwd"},
                {"command": "false"}, {"command": "sleep 10"}, {"command": "echo after"},
                {"command": "echo 'unclosed"}, {"restart": True}, {"command": "echo [$X]; pwd"},
                {})]
        finally:
            await s.aclose()

    r = asyncio.run(scenario())
    assert str(tmp_path) in r[0]["content"] and not r[0]["is_error"]  # started in the workdir
    assert r[2]["content"].split() == ["7", "/"]
    assert r[3]["is_error"] is True  # exit code 1
    assert r[4]["is_error"] and "timeout" in r[4]["content"]  # CommandTimeoutError, interrupted
    assert "after" in r[5]["content"] and not r[5]["is_error"]
    assert r[6]["is_error"] and "while checking bash command" in r[6]["content"]  # bash -n
    assert r[7] == {"content": "tool has been restarted.", "is_error": False}
    assert r[8]["content"].split() == ["[]", str(tmp_path)]
    assert r[9]["is_error"]


# --- anthropic SDK ---------------------------------------------------------------------------

@needs_sdk
def test_async_memory_tool_maps_paths_and_shows_its_insert(tmp_path: Path) -> None:
    from conformance.adapters.anthropic_sdk import async_memory_tool_editor

    ed = async_memory_tool_editor(tmp_path)
    f = str(tmp_path / "notes.txt")
    assert not _call(ed, {"command": "create", "path": f, "file_text": "one\ntwo"})["is_error"]
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo"
    assert not (tmp_path / "memories").exists()  # rooted at the working directory itself
    _call(ed, {"command": "insert", "path": f, "insert_line": 1, "insert_text": "mid\n\n"})
    # the SDK strips the inserted text's newlines and adds a final one (not hidden)
    assert (tmp_path / "notes.txt").read_text() == "one\nmid\ntwo\n"
    out = _call(ed, {"command": "view", "path": str(tmp_path / "missing.txt")})
    assert out["is_error"]
