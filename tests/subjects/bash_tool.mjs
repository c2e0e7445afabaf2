// A bash tool in Node.js, run by the suite as an out-of-process subject:
//   tooluse run --bash-cmd "node tests/subjects/bash_tool.mjs"
// Protocol: one JSON tool input per line on stdin, one JSON result per line on stdout.
// The seed 003 TypeScript session, with a timeout, exit status, stdin from /dev/null and
// truncation added.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";

const workdir = process.env.TOOLUSE_WORKDIR ?? process.cwd();
const timeoutMs = Number(process.env.TOOLUSE_TIMEOUT ?? "30") * 1000;
const MAX_LINES = 100;

let shell;
let buffer = "";
let pending = null; // { marker, resolve, timer }

function start() {
  shell = spawn("/bin/bash", ["--noprofile", "--norc"], { cwd: workdir, detached: true });
  shell.stdin.write("exec 2>&1\n"); // interleave errors with output, in order
  shell.stdout.setEncoding("utf8");
  buffer = "";
  const mine = shell;
  shell.stdout.on("data", (chunk) => { if (mine === shell) { buffer += chunk; check(); } });
  shell.on("exit", (code) => { if (mine === shell && pending) finish(`${buffer}\nbash exited (status ${code})`, code || 1, true); });
}

function killShell() {
  try { process.kill(-shell.pid, "SIGKILL"); } catch { /* already gone */ }
}

function restart() {
  killShell();
  start();
}

function finish(output, status, restartAfter) {
  const p = pending;
  pending = null;
  clearTimeout(p.timer);
  if (restartAfter) restart();
  p.resolve({ output, status });
}

function check() {
  if (!pending) return;
  const at = buffer.indexOf(pending.marker);
  if (at < 0) return;
  const rest = buffer.slice(at + pending.marker.length);
  const nl = rest.indexOf("\n");
  if (nl < 0) return;
  const output = buffer.slice(0, at);
  buffer = rest.slice(nl + 1);
  finish(output, Number(rest.slice(0, nl)), false);
}

const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

function run(command) {
  const sentinel = `__NODE_BASH_DONE_${randomBytes(16).toString("hex")}__`;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending = null;
      restart();
      resolve({ output: `Error: command did not finish within ${timeoutMs / 1000} seconds`, status: null });
    }, timeoutMs);
    pending = { marker: `\n${sentinel} `, resolve, timer };
    shell.stdin.write(`eval ${quote(command)} </dev/null\nprintf '\\n%s %s\\n' ${sentinel} "$?"\n`);
  });
}

function truncate(output) {
  const lines = output.split("\n");
  if (lines.length <= MAX_LINES) return output;
  return `${lines.slice(0, MAX_LINES).join("\n")}\n\n... Output truncated (${lines.length} total lines) ...`;
}

async function handle(input) {
  if (input && input.restart === true) {
    restart();
    return { content: "Bash session restarted", is_error: false };
  }
  if (!input || typeof input.command !== "string" || input.command.trim() === "") {
    return { content: "Error: send `command` or `restart: true`", is_error: true };
  }
  const { output, status } = await run(input.command);
  return { content: truncate(output), is_error: status !== 0 };
}

start();
const lines = createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => {
  if (!line.trim()) return;
  queue = queue.then(async () => {
    let result;
    try {
      result = await handle(JSON.parse(line));
    } catch (e) {
      result = { content: `Error: ${e}`, is_error: true };
    }
    process.stdout.write(JSON.stringify(result) + "\n");
  });
});
lines.on("close", () => queue.then(() => { killShell(); process.exit(0); }));
