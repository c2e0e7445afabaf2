// The documented agent loop (conformance/reference/loop.py) written with the TypeScript SDK, run
// by `tooluse run --loop-cmd "node tests/ts/loop.mjs"` (tests/test_loop_cmd.py). It reads the
// scenario from TOOLUSE_LOOP_PARAMS and talks to ANTHROPIC_BASE_URL (docs/loops.md).
// TOOLUSE_TEST_BROKEN=stop_on_pause makes it stop at pause_turn (a defect the suite must catch).
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";

if (process.env.TOOLUSE_LOOP_DESCRIBE === "1") {
  // Nothing this loop cannot express; a framework adapter would list checks here.
  console.log(JSON.stringify({ unsupported: {} }));
  process.exit(0);
}

const doc = JSON.parse(readFileSync(process.env.TOOLUSE_LOOP_PARAMS, "utf8"));
const broken = process.env.TOOLUSE_TEST_BROKEN || "";
const client = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL, apiKey: process.env.ANTHROPIC_API_KEY });

async function send(request, stream, headers) {
  if (stream) {
    const s = client.messages.stream(request, { headers });
    return await s.finalMessage();
  }
  return await client.messages.create(request, { headers });
}

function answer(use) {
  const content = doc.tool_results[use.id] ?? "ok";
  return { type: "tool_result", tool_use_id: use.id, content };
}

async function conversation(params) {
  const { messages: first, stream, container: c0, extra_headers: headers, ...base } = params;
  const messages = [...first];
  let container = c0 ?? null;
  for (;;) {
    const request = { ...base, messages: [...messages] };
    if (container !== null) request.container = container;
    let message;
    try {
      message = await send(request, Boolean(stream), headers);
    } catch (e) {
      const text = String(e?.message ?? e).toLowerCase();
      if (e instanceof Anthropic.BadRequestError && container !== null && text.includes("container")
          && (text.includes("expired") || text.includes("not found"))) {
        container = null;
        continue;
      }
      throw e;
    }
    if (message.container) container = message.container.id;
    const content = message.content;
    const addAssistant = () => {
      const last = messages[messages.length - 1];
      if (last && last.role === "assistant") {
        const previous = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
        messages[messages.length - 1] = { role: "assistant", content: [...previous, ...content] };
      } else {
        messages.push({ role: "assistant", content });
      }
    };
    if (message.stop_reason === "pause_turn" && broken !== "stop_on_pause") {
      addAssistant();
      continue;
    }
    if (message.stop_reason === "tool_use") {
      addAssistant();
      const uses = content.filter((b) => b.type === "tool_use");
      messages.push({ role: "user", content: uses.map(answer) });
      continue;
    }
    return message;
  }
}

for (const params of doc.conversations) {
  await conversation(params);
}
