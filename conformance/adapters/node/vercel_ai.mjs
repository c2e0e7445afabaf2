// The Vercel AI SDK (`ai` 6, `@ai-sdk/anthropic` 3) as a `--loop-cmd` program
// (conformance/adapters/vercel_ai.py starts it; docs/frameworks.md). Wired as a user would:
// createAnthropic({ baseURL }) pointed at ANTHROPIC_BASE_URL + "/v1", generateText (streamText when
// the scenario streams) with the scenario's custom tools as `tool({ inputSchema: jsonSchema(...) })`
// answering with the recorded results, code execution as `anthropic.tools.codeExecution_20260120()`,
// `stopWhen: stepCountIs(20)` so tool calls loop, and nothing else (retries: the SDK's default).
// Programmatic calling: a custom tool's `allowed_callers` goes in providerOptions.anthropic.allowedCallers.
// The AI SDK does not send a response's container back by default; its opt-in helper
// `forwardAnthropicContainerIdFromLastStep` (as `prepareStep`) does: TOOLUSE_VERCEL_CONTAINER_HELPER=1
// wires it (a column of its own: the default and the helper are two integrations).
// Matching: tolerant (the AI SDK adds `eager_input_streaming` to streamed tools, a formatting choice).
// The packages are found in TOOLUSE_NODE_MODULES (the matrix environment's node/node_modules).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const CODE_EXECUTION = "code_execution_20260120";

if (process.env.TOOLUSE_LOOP_DESCRIBE === "1") {
  console.log(JSON.stringify({
    matching: "tolerant",
    variants: { client_tool: "custom", code_execution: CODE_EXECUTION },
    unsupported: {
      "loop.container.expired": "the AI SDK has no setting for a container id sent on the first request of a conversation other than providerOptions.anthropic.container, and no recovery from its expiry: the adapter would have to implement it",
    },
  }));
  process.exit(0);
}

const modules = process.env.TOOLUSE_NODE_MODULES;
const requireFrom = createRequire(modules ? join(modules, "_") : import.meta.url);
const load = async (name) => import(pathToFileURL(requireFrom.resolve(name)).href);
const { generateText, streamText, tool, jsonSchema, stepCountIs } = await load("ai");
const { createAnthropic, forwardAnthropicContainerIdFromLastStep } = await load("@ai-sdk/anthropic");
const containerHelper = process.env.TOOLUSE_VERCEL_CONTAINER_HELPER === "1";

const doc = JSON.parse(readFileSync(process.env.TOOLUSE_LOOP_PARAMS, "utf8"));
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
