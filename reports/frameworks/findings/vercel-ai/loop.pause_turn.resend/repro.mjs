#!/usr/bin/env node
// @ai-sdk/anthropic 3.0.140: the loop stopped before the conversation ended (exchanges [1] of the recording were never requested)
//
// vercel-ai (@ai-sdk/anthropic 3.0.140), check loop.pause_turn.resend (MUST).
// The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): You can pass the response back as-is in the next request to let Claude continue its turn, or modify its content if you want to interrupt the conversation.
// Needs: npm install ai@6.0.325 @ai-sdk/anthropic@3.0.140 and this suite's `tooluse serve` (the simulated API: $TOOLUSE or PATH) (this file installs nothing).
// Run: node repro.mjs  (exit 1 while the defect is there, 0 once fixed, 2 when it cannot run)
// The recording: cassette.json (code_execution/code_execution_20260120/pause_turn.json); the loop's start: params.json.
// The packages: next to this file (npm install here) or in $TOOLUSE_NODE_MODULES.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const DOCS = "You can pass the response back as-is in the next request to let Claude continue its turn, or modify its content if you want to interrupt the conversation.";
const RULE = "after stop_reason pause_turn the assistant content is sent back as-is to continue the turn";
const URL = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool";
const MATCHING = "tolerant";
// the pinned packages (the matrix's column)
const PACKAGES = ["ai@6.0.325", "@ai-sdk/anthropic@3.0.140"];
// the column's settings (its integration's options)
const ENV = [];

// --- the framework's loop, as the column wires it (conformance/adapters/node/vercel_ai.mjs) ---
const CODE_EXECUTION = "code_execution_20260120";
async function frameworkLoop(doc) {
  const modules = process.env.TOOLUSE_NODE_MODULES;
  const requireFrom = createRequire(modules ? join(modules, "_") : import.meta.url);
  const load = async (name) => import(pathToFileURL(requireFrom.resolve(name)).href);
  const { generateText, streamText, tool, jsonSchema, stepCountIs } = await load("ai");
  const { createAnthropic, forwardAnthropicContainerIdFromLastStep } = await load("@ai-sdk/anthropic");
  const containerHelper = process.env.TOOLUSE_VERCEL_CONTAINER_HELPER === "1";

  const anthropic = createAnthropic({ baseURL: `${process.env.ANTHROPIC_BASE_URL}/v1`, apiKey: process.env.ANTHROPIC_API_KEY });

  function recorded(name, input) {
    const key = JSON.stringify(input);
    const hit = doc.tool_results_by_call.find((c) => c.name === name && JSON.stringify(c.input) === key);
    const content = hit ? hit.content : "ok";
    return typeof content === "string" ? content : JSON.stringify(content);
  }

  function promptOf(params) {
    const content = params.messages[0].content;
    return typeof content === "string" ? content : content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
  }

  for (const params of doc.conversations) {
    const tools = {};
    for (const t of params.tools ?? []) {
      const kind = t.type ?? "custom";
      if (kind === "custom") {
        const options = t.allowed_callers ? { anthropic: { allowedCallers: t.allowed_callers } } : undefined;
        tools[t.name] = tool({
          description: t.description,
          inputSchema: jsonSchema(t.input_schema),
          providerOptions: options,
          execute: async (input) => recorded(t.name, input),
        });
      } else if (kind.startsWith("code_execution_")) {
        tools.code_execution = anthropic.tools.codeExecution_20260120();
      } else {
        throw new Error(`the Vercel AI SDK adapter has no mapping for a ${kind} tool`);
      }
    }
    const providerOptions = params.container ? { anthropic: { container: { id: params.container } } } : undefined;
    const request = {
      model: anthropic(params.model), prompt: promptOf(params), tools, maxOutputTokens: params.max_tokens,
      stopWhen: stepCountIs(20), providerOptions, headers: params.extra_headers,
    };
    if (containerHelper) request.prepareStep = forwardAnthropicContainerIdFromLastStep;
    if (params.stream) {
      const result = streamText({ ...request, onError: () => {} });
      await result.consumeStream();
      await result.text;
    } else {
      await generateText(request);
    }
  }
}

// --- the reproducer ---

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
