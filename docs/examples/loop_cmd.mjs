// A complete `--loop-cmd` agent loop in Node.js (18 or later), on plain `fetch`: no package to
// install, so every step of the protocol is in view (docs/loops.md).
//
//     tooluse run --loop-cmd "node docs/examples/loop_cmd.mjs" --check 'loop.*'
//
// It reads the conversations to drive from the file $TOOLUSE_LOOP_PARAMS names, talks to the
// simulation at $ANTHROPIC_BASE_URL, drives each conversation to its end, and exits 0.
// tests/test_loop_docs.py runs it through every loop check but the corpus one (it passes that too).
import { readFileSync } from "node:fs";

if (process.env.TOOLUSE_LOOP_DESCRIBE === "1") {
  // What this loop cannot express (check id -> why), the variants it can, its matching.
  console.log(JSON.stringify({ unsupported: {} }));
  process.exit(0);
}

const doc = JSON.parse(readFileSync(process.env.TOOLUSE_LOOP_PARAMS, "utf8"));
const BASE = process.env.ANTHROPIC_BASE_URL.replace(/\/$/, "");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class ApiError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}: ${JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
  }
}

// One request; 429, 529 and 5xx answers are retried after what `retry-after` says (seconds).
async function send(body, headers) {
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(`${BASE}/v1/messages`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": process.env.ANTHROPIC_API_KEY,
          "anthropic-version": "2023-06-01",
          ...headers,
        },
        body: JSON.stringify(body),
      });
    } catch (e) {
      if (attempt < 4) { await sleep(500); continue; } // a dropped connection
      throw e;
    }
    if (response.ok) return body.stream ? await assemble(response) : await response.json();
    const error = await response.json().catch(() => ({}));
    const transient = response.status === 429 || response.status >= 500;
    if (!transient || attempt >= 4) throw new ApiError(response.status, error);
    const wait = Number(response.headers.get("retry-after") ?? "1");
    await sleep(1000 * (Number.isFinite(wait) ? wait : 1));
  }
}

// A streamed response (server-sent events) assembled into the message it carries.
async function assemble(response) {
  const text = await response.text();
  let message = null;
  const json = {}; // block index -> the input_json_delta parts
  for (const chunk of text.split("\n\n")) {
    const line = chunk.split("\n").find((l) => l.startsWith("data:"));
    if (!line) continue;
    const event = JSON.parse(line.slice(5));
    if (event.type === "message_start") message = event.message;
    else if (event.type === "content_block_start") message.content[event.index] = event.content_block;
    else if (event.type === "content_block_delta") {
      const block = message.content[event.index];
      const d = event.delta;
      if (d.type === "text_delta") block.text += d.text;
      else if (d.type === "input_json_delta") (json[event.index] ??= []).push(d.partial_json);
      else if (d.type === "thinking_delta") block.thinking += d.thinking;
      else if (d.type === "signature_delta") block.signature = d.signature;
      else if (d.type === "citations_delta") (block.citations ??= []).push(d.citation);
    } else if (event.type === "content_block_stop") {
      // A block's input comes in deltas, or whole in content_block_start (no delta): keep that.
      const parts = (json[event.index] ?? []).join("");
      if (parts) message.content[event.index].input = JSON.parse(parts);
    } else if (event.type === "message_delta") {
      Object.assign(message, event.delta);
      if (event.usage) message.usage = { ...message.usage, ...event.usage };
    } else if (event.type === "error") throw new ApiError(529, event);
  }
  return message;
}

function expiredContainer(error) {
  const text = JSON.stringify(error.body ?? {}).toLowerCase();
  return error.status === 400 && text.includes("container")
    && (text.includes("expired") || text.includes("not found"));
}

// One conversation, from its first request's parameters to a response that ends it.
async function drive(params) {
  const { messages: first, container: c0, extra_headers: headers, extra_body: extra, ...base } = params;
  const messages = [...first];
  let container = c0 ?? null;
  for (;;) {
    const body = { ...base, ...extra, messages };
    if (container !== null) body.container = container; // every request after a response named one
    let message;
    try {
      message = await send(body, headers ?? {});
    } catch (e) {
      if (container !== null && e instanceof ApiError && expiredContainer(e)) {
        container = null; // documented: send it again without `container`
        continue;
      }
      throw e;
    }
    if (message.container) container = message.container.id;
    // The assistant turn goes back as it was served: every block, in order, inputs unchanged.
    const content = message.content;
    if (message.stop_reason !== "pause_turn" && message.stop_reason !== "tool_use") return;
    const last = messages[messages.length - 1];
    if (last.role === "assistant") { // continuing a paused turn: extend it
      const previous = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
      messages[messages.length - 1] = { role: "assistant", content: [...previous, ...content] };
    } else messages.push({ role: "assistant", content });
    if (message.stop_reason === "pause_turn") continue; // the server paused its tool loop: resend
    // Every client tool_use of the turn (programmatic calls included) answered in ONE user
    // message of tool_result blocks only; server tools (server_tool_use) are never answered.
    messages.push({
      role: "user",
      content: content.filter((b) => b.type === "tool_use").map((b) => ({
        type: "tool_result", tool_use_id: b.id, content: doc.tool_results[b.id] ?? "ok",
      })),
    });
  }
}

for (const params of doc.conversations) await drive(params);
