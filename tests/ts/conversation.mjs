// A whole tool-use conversation with the TypeScript SDK against `tooluse serve`.
// Usage: TOOLUSE_BASE_URL=http://127.0.0.1:PORT node conversation.mjs
// Prints one JSON line: what the conversation saw, for tests/test_ts_sdk.py to check.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ apiKey: "placeholder", baseURL: process.env.TOOLUSE_BASE_URL, maxRetries: 0 });
const model = process.env.TOOLUSE_MODEL;
const tools = JSON.parse(process.env.TOOLUSE_TOOLS);
const question = { role: "user", content: process.env.TOOLUSE_QUESTION };

const first = await client.messages.create({ model, max_tokens: 1024, tools, messages: [question] });
const toolUse = first.content.find((block) => block.type === "tool_use");
const followUp = [
  question,
  { role: "assistant", content: first.content },
  { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: process.env.TOOLUSE_RESULT }] },
];
const stream = client.messages.stream({ model, max_tokens: 1024, tools, messages: followUp });
const eventTypes = [];
stream.on("streamEvent", (event) => eventTypes.push(event.type));
const final = await stream.finalMessage();
const info = await client.models.retrieve(model);

console.log(JSON.stringify({
  firstStop: first.stop_reason,
  toolInput: toolUse.input,
  finalStop: final.stop_reason,
  finalText: final.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
  eventTypes,
  modelId: info.id,
}));
