"""A Node framework's loop reproducer (``repro.mjs``, the Vercel AI SDK column): it imports only
``node:`` builtins and the column's pinned npm packages; it judges from what ``tooluse serve``
served (exit 0 when the loop resends after pause_turn, 1 when it stops); and, where node and the
matrix's npm environment are on this machine, it reproduces the committed finding (exit 1)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.findings.loops_node import SCRIPT, describe_of, render_node_repro

ROOT = Path(__file__).resolve().parent.parent
PINS = ["ai@6.0.325", "@ai-sdk/anthropic@3.0.140"]
IMPL = {"spec": "cmd:python -m conformance.adapters.vercel_ai", "npm": PINS, "env": {}}
#: every module specifier a file names: static imports, dynamic import(), the adapter's load()
_SPECIFIER = re.compile(r"""(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\bload\(\s*|\bresolve\(\s*)"""
                        r"""["']([^"']+)["']""")


def _specifiers(source: str) -> set[str]:
    return set(_SPECIFIER.findall(source))


def _render(folder: Path, check_id: str = "loop.pause_turn.resend") -> str:
    why = render_node_repro(folder, check_id, IMPL, title="t", header="h", sentence="s",
                            statement="r", url="u")
    assert why == ""
    return (folder / "repro.mjs").read_text()


def _allowed(spec: str) -> bool:
    return spec.startswith("node:") or spec in {p.rpartition("@")[0] for p in PINS}


@pytest.mark.parametrize("check_id", ["loop.pause_turn.resend", "loop.ptc.pause_resume"])
def test_rendered_repro_imports_only_builtins_and_the_pinned_packages(tmp_path: Path,
                                                                      check_id: str) -> None:
    source = _render(tmp_path, check_id)
    found = _specifiers(source)
    assert {"ai", "@ai-sdk/anthropic", "node:child_process"} <= found
    assert all(_allowed(s) for s in found), found
    assert (tmp_path / "cassette.json").is_file() and (tmp_path / "params.json").is_file()


def test_committed_node_reproducers_import_only_builtins_and_the_pinned_packages() -> None:
    folder = ROOT / "reports" / "frameworks" / "findings"
    files = sorted(folder.glob("*/*/repro.mjs"))
    if not files:
        pytest.skip("reports/frameworks/findings has no repro.mjs")
    for repro in files:
        assert all(_allowed(s) for s in _specifiers(repro.read_text())), repro


def test_the_adapters_describe_answer_is_read_from_its_source() -> None:
    assert describe_of(SCRIPT.read_text()) == {
        "matching": "tolerant",
        "variants": {"client_tool": "custom", "code_execution": "code_execution_20260120"}}
    node = shutil.which("node")
    if node is None:
        return
    done = subprocess.run([node, str(SCRIPT)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TOOLUSE_LOOP_DESCRIBE": "1"}, check=True)
    import json

    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert describe_of(SCRIPT.read_text()) == {k: answer[k] for k in ("matching", "variants")}


_FETCH_LOOP = """async function frameworkLoop(doc) {
  // a minimal loop on fetch: resends after pause_turn (RESEND) or stops
  for (const params of doc.conversations) {
    const { extra_headers, extra_body, ...first } = params;
    let body = first;
    const headers = { "content-type": "application/json", "x-api-key": process.env.ANTHROPIC_API_KEY,
      "anthropic-version": "2023-06-01", ...(extra_headers ?? {}) };
    for (;;) {
      const r = await fetch(`${process.env.ANTHROPIC_BASE_URL}/v1/messages`,
        { method: "POST", headers, body: JSON.stringify(body) });
      const response = await r.json();
      if (response.stop_reason !== "pause_turn" || !RESEND) break;
      body = { ...body, messages: [...body.messages, { role: "assistant", content: response.content }] };
    }
  }
}
"""


def _tooluse() -> str:
    return str(Path(sys.executable).parent / "tooluse")


@pytest.mark.parametrize("resend", [True, False])
def test_node_repro_judges_by_what_the_server_served(tmp_path: Path, resend: bool) -> None:
    """With the framework's loop swapped for a fetch loop (no package needed) that resends after
    pause_turn it exits 0; one that stops, 1."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    source = _render(tmp_path)
    loop = re.compile(r"async function frameworkLoop\(doc\) \{\n.*?\n\}\n", re.DOTALL)
    assert loop.search(source)
    source = loop.sub(lambda _: f"const RESEND = {str(resend).lower()};\n" + _FETCH_LOOP, source)
    source = re.sub(r"^const PACKAGES = .*$", "const PACKAGES = [];", source, flags=re.MULTILINE)
    (tmp_path / "repro.mjs").write_text(source)
    done = subprocess.run([node, "repro.mjs"], cwd=tmp_path, text=True, capture_output=True,
                          timeout=120, check=False, env={**os.environ, "TOOLUSE": _tooluse()})
    assert done.returncode == (0 if resend else 1), done.stdout + done.stderr


def test_node_repro_cannot_run_without_its_packages(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    _render(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLUSE_NODE_MODULES", "NODE_PATH")}
    done = subprocess.run([node, "repro.mjs"], cwd=tmp_path, text=True, capture_output=True,
                          timeout=120, check=False, env={**env, "TOOLUSE": _tooluse()})
    assert done.returncode == 2 and "is not installed" in done.stdout, done.stdout + done.stderr


def _cached_node_modules() -> Path | None:
    """A matrix environment's node_modules with the pinned packages (None: not built here)."""
    from conformance.matrix.envs import default_envs_dir

    for modules in sorted(default_envs_dir().glob("*/node/node_modules")):
        ok = True
        for pin in PINS:
            name, _, version = pin.rpartition("@")
            manifest = modules / name / "package.json"
            ok = ok and manifest.is_file() and f'"version": "{version}"' in manifest.read_text()
        if ok:
            return modules
    return None


def test_node_repro_reproduces_at_the_pinned_versions(tmp_path: Path) -> None:
    node, modules = shutil.which("node"), _cached_node_modules()
    if node is None or modules is None:
        pytest.skip("node or the matrix's npm environment (ai, @ai-sdk/anthropic) is absent")
    _render(tmp_path)
    done = subprocess.run([node, "repro.mjs"], cwd=tmp_path, text=True, capture_output=True,
                          timeout=300, check=False,
                          env={**os.environ, "TOOLUSE": _tooluse(),
                               "TOOLUSE_NODE_MODULES": str(modules)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "were never requested" in done.stdout
