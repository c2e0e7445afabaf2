"""Reproducers of a Node framework's loop findings (``repro.mjs``): the Vercel AI SDK column.

As :mod:`conformance.findings.loops` does for a Python adapter: the folder ships the one cassette
(``cassette.json``) and the loop's start (``params.json``); ``repro.mjs`` starts
``tooluse serve cassette.json --port 0`` (``$TOOLUSE`` or ``tooluse`` on ``PATH``: the only use of
the suite), runs the adapter's own loop (``conformance/adapters/node/vercel_ai.mjs``, its source
embedded: ``ai`` and ``@ai-sdk/anthropic`` at the pinned versions and ``node:`` builtins only) and
judges from the server's ``--log`` the same way: the defect is there while the API refused a request
or an exchange of the recording was never requested. The packages are found next to the file
(``npm install`` in its folder) or in ``$TOOLUSE_NODE_MODULES`` (the matrix environment's
``node/node_modules``, which ``tooluse findings --verify`` passes).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from pathlib import Path
from typing import Any

__all__ = ["SCRIPT", "describe_of", "is_node", "render_node_repro"]

SCRIPT = Path(__file__).parents[1] / "adapters" / "node" / "vercel_ai.mjs"
#: the adapter module that starts SCRIPT
_MODULE = "conformance.adapters.vercel_ai"

_MAIN = r'''
function cannotRun(why) {
  console.log(`cannot run: ${why}`);
  process.exit(2);
}

function findTooluse() {
  if (process.env.TOOLUSE) return process.env.TOOLUSE;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "tooluse");
    if (dir && existsSync(candidate)) return candidate;
  }
  return cannotRun("tooluse (the simulated API: pip install 'tooluse-conformance[serve]') is not on PATH; set TOOLUSE");
}

function serve(cassette, log) {
  const proc = spawn(findTooluse(), ["serve", cassette, "--port", "0", "--matching", MATCHING,
    "--quiet", "--log", log], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  return new Promise((resolve) => {
    let buffered = "";
    let started = false;
    proc.stdout.on("data", (chunk) => {
      if (started) return;
      buffered += chunk.toString();
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      started = true;
      const base = buffered.slice(0, newline).trim();
      if (!base.startsWith("http")) { proc.kill("SIGKILL"); cannotRun("tooluse serve did not start"); }
      resolve({ proc, base });
    });
    proc.on("error", (err) => cannotRun(`tooluse serve did not start: ${err.message}`));
    proc.on("exit", () => { if (!started) cannotRun("tooluse serve did not start"); });
  });
}

function stop(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.on("exit", () => resolve());
    proc.kill("SIGTERM");
  });
}

function packagesInstalled() {
  const modules = process.env.TOOLUSE_NODE_MODULES;
  const requireFrom = createRequire(modules ? join(modules, "_") : import.meta.url);
  for (const pin of PACKAGES) {
    const name = pin.slice(0, pin.lastIndexOf("@"));
    try { requireFrom.resolve(name); } catch {
      cannotRun(`${name} is not installed: npm install ${PACKAGES.join(" ")} next to this file, or set TOOLUSE_NODE_MODULES`);
    }
  }
}

async function main() {
  packagesInstalled();
  const here = dirname(fileURLToPath(import.meta.url));
  const doc = JSON.parse(readFileSync(join(here, "params.json"), "utf8"));
  const exchanges = JSON.parse(readFileSync(join(here, "cassette.json"), "utf8")).exchanges.length;
  for (const [name, value] of ENV) process.env[name] ??= value;
  const box = mkdtempSync(join(tmpdir(), "repro-"));
  const log = join(box, "served.jsonl");
  const { proc, base } = await serve(join(here, "cassette.json"), log);
  process.env.ANTHROPIC_BASE_URL = base;
  process.env.ANTHROPIC_API_KEY = "sk-tooluse-simulator";
  let raised = null;
  try {
    await frameworkLoop(doc);
  } catch (exc) { // what the framework raised to its application
    raised = `${exc?.name ?? "Error"}: ${String(exc?.message ?? exc).slice(0, 300)}`;
  } finally {
    await stop(proc);
  }
  const served = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)) : [];
  rmSync(box, { recursive: true, force: true });
  const status = (s) => Number(s.status ?? 0);
  const refused = served.filter((s) => status(s) >= 400);
  const answered = new Set(served.filter((s) => status(s) < 400 && s.exchange != null).map((s) => s.exchange));
  const missing = [...Array(exchanges).keys()].filter((i) => !answered.has(i));
  for (const s of served) {
    console.log(`request: ${s.status} ${String(s.outcome).slice(0, 100)} ${String(s.detail ?? "").slice(0, 160)}`);
  }
  const happened = [];
  if (refused.length) {
    const first = refused[0];
    happened.push(`the API refused a request: ${first.status} ${String(first.outcome).slice(0, 200)} ${String(first.detail ?? "").slice(0, 300)}`);
  }
  if (missing.length) happened.push(`exchanges [${missing.join(", ")}] of the ${exchanges} recorded were never requested`);
  if (raised) happened.push(`the framework raised ${raised}`);
  const defect = refused.length > 0 || missing.length > 0;
  console.log();
  console.log(`the docs (${URL}): ${DOCS}`);
  console.log(`the rule: ${RULE}`);
  console.log(`happened: ${happened.join("; ") || "every recorded exchange was requested and served"}`);
  console.log(defect ? "defect present: exit 1" : "not reproduced (fixed?): exit 0");
  return defect ? 1 : 0;
}

main().then((code) => process.exit(code), (exc) => {
  console.log(exc?.stack ?? String(exc));
  cannotRun(`${exc?.name ?? "Error"}: ${exc?.message ?? exc}`);
});
'''

_IMPORTS = """\
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
"""


def is_node(impl: dict[str, Any]) -> bool:
    """Whether the column's loop is the Node adapter (an npm column)."""
    return bool(impl.get("npm")) or str(impl.get("spec") or "").removeprefix("cmd:") \
        == f"python -m {_MODULE}"


def describe_of(source: str) -> dict[str, Any] | None:
    """The adapter's ``TOOLUSE_LOOP_DESCRIBE`` answer read from its source (matching and
    variants), None when its shape is not the one read here."""
    matching = re.search(r'\bmatching: "(\w+)"', source)
    code = re.search(r'^const CODE_EXECUTION = "(\w+)";', source, re.MULTILINE)
    client = re.search(r'variants: \{ client_tool: "(\w+)", code_execution: CODE_EXECUTION \}',
                       source)
    if not (matching and code and client):
        return None
    return {"matching": matching.group(1),
            "variants": {"client_tool": client.group(1), "code_execution": code.group(1)}}


def _loop_source(source: str) -> str | None:
    """The adapter's loop as ``async function frameworkLoop(doc)``: its body from the packages'
    loading on, reading the conversations from ``doc`` (params.json) instead of its env var."""
    body = source.split("\nconst modules = ", 1)
    reading = "const doc = JSON.parse(readFileSync(process.env.TOOLUSE_LOOP_PARAMS, \"utf8\"));\n"
    if len(body) != 2 or reading not in body[1]:
        return None
    text = ("const modules = " + body[1]).replace(reading, "")
    indented = "\n".join(("  " + line) if line.strip() else "" for line in text.splitlines())
    return "async function frameworkLoop(doc) {\n" + indented + "\n}\n"


def _scenario(check_id: str, variants: dict[str, str]) -> Any:
    """The check's scenario resolved for the adapter's variants, or why there is no reproducer
    (the same cells :func:`conformance.findings.loops.loop_repro` renders for Python)."""
    from conformance.findings.loops import LOOP_CHECKS
    from conformance.loops.scenarios import SCENARIOS

    if not any(fnmatch.fnmatchcase(check_id, p) for p in LOOP_CHECKS):
        return ("its verdict is the suite's judge of the requests (or a scenario with a setup "
                "conversation or planned faults), which `tooluse serve` alone does not give: "
                "replay it with the rerun command")
    scenario = next((s for s in SCENARIOS if s.id == check_id), None)
    if scenario is None:
        return f"no scenario named {check_id}"
    if scenario.setup or scenario.faults or scenario.dropped or scenario.then:
        return "its scenario has a setup conversation or planned faults"
    return scenario.for_variants(dict(variants))


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_node_repro(folder: Path, check_id: str, impl: dict[str, Any], *, title: str,
                      header: str, sentence: str, statement: str, url: str) -> str:
    """Write ``repro.mjs``, ``cassette.json`` and ``params.json`` into ``folder``; returns ""
    (written) or why there is no reproducer."""
    from conformance.loops.command import params_document
    from conformance.loops.run import Harness
    from simulator.cassette import default_fixtures_root

    source = SCRIPT.read_text()
    described = describe_of(source)
    loop = _loop_source(source)
    if described is None or loop is None:
        return (f"the Node adapter ({SCRIPT.name}) is not in the shape its reproducer is "
                "rendered from; replay it with the rerun command")
    found = _scenario(check_id, described["variants"])
    if isinstance(found, str):
        return found
    scenario = found
    harness = Harness(scenario, matching=described["matching"])
    shutil.copyfile(default_fixtures_root() / scenario.cassette, folder / "cassette.json")
    (folder / "params.json").write_text(
        json.dumps(params_document(harness), indent=1, ensure_ascii=False) + "\n")
    packages = [str(p) for p in impl.get("npm") or []]
    if not all(p.rpartition("@")[0] for p in packages) or not packages:
        return "its npm packages are not pinned (npm = [...] in the matrix config)"
    env = sorted([str(k), str(v)] for k, v in (impl.get("env") or {}).items())
    comment = (title + "\n\n" + header.rstrip()
               + f"\nThe recording: cassette.json ({scenario.cassette}); the loop's start: "
               "params.json.\nThe packages: next to this file (npm install here) or in "
               "$TOOLUSE_NODE_MODULES.")
    parts = [
        "#!/usr/bin/env node",
        "\n".join(("// " + line).rstrip() for line in comment.splitlines()),
        _IMPORTS,
        f"const DOCS = {_js(sentence)};",
        f"const RULE = {_js(statement)};",
        f"const URL = {_js(url)};",
        f"const MATCHING = {_js(described['matching'])};",
        "// the pinned packages (the matrix's column)",
        f"const PACKAGES = {_js(packages)};",
        "// the column's settings (its integration's options)",
        f"const ENV = {_js(env)};",
        "",
        "// --- the framework's loop, as the column wires it "
        "(conformance/adapters/node/vercel_ai.mjs) ---",
        f"const CODE_EXECUTION = {_js(described['variants']['code_execution'])};",
        loop,
        "// --- the reproducer ---",
        _MAIN,
    ]
    (folder / "repro.mjs").write_text("\n".join(parts))
    return ""
