// The bash tool docs' own BashSession: the Node/TypeScript example of "Bash 도구 구현하기 (Implement the
// bash tool)" (its types removed to run as plain JavaScript), completed only with what the docs'
// prose asks. The documented design is the floor of MUST (docs/checks.md, the calibration rule):
// this subject must pass every MUST check. Run by the suite as an out-of-process subject:
//   tooluse run --bash-cmd "node bash_tool.mjs"   (`tooluse init bash --lang node` writes it)
// Protocol (the suite's command subjects): one JSON tool input per line on stdin, one JSON
// result per line on stdout.
//
// Kept as the docs write it: spawn("/bin/bash", { detached: true }), "exec 2>&1", a
// randomUUID() sentinel echoed after each command, readline over the shell's stdout,
// executeWithTimeout ("명령 타임아웃 사용하기 (Use command timeouts)") and truncateOutput ("큰 출력
// 처리하기 (Handle large outputs)") as written, and the handler of "Claude의 도구 호출 처리하기"
// ("Bash session restarted"). A command reading stdin reads the tool's own next line and is
// ended by the deadline ("제한 사항 (Limitations)": the session cannot run a command that waits
// for input on stdin).
//
// Each addition, with the sentence it comes from:
// [1] a deadline that kills the shell and everything it started and restarts the session: "The
//     examples leave out what a complete implementation needs: a timeout that kills the shell and
//     every process it started and restarts the session when a command hangs." (예시는 완전한
//     구현에 필요한 것, 즉 명령이 멈출 때 셸과 그것이 시작한 모든 프로세스를 죽이고 세션을
//     재시작하는 타임아웃을 생략해요.) -- the docs' own executeWithTimeout;
// [2] is_error for a failed command, so the exit status rides on the sentinel (`echo S $?`):
//     "When a command fails or the session breaks, tell Claude what happened. Return the message
//     as the tool_result content and set is_error to true to mark that the tool call failed."
//     (명령이 실패하거나 세션이 깨지면 ...; "오류 처리하기 (Handle errors)");
// [3] a broken session (the shell ended: `echo )`, `exit`) restarted at once and said so, with
//     is_error: the same sentence ("or the session breaks");
// [4] the timeout's answer is an error: "Return the message as an error tool_result (see Handle
//     errors) so the tool call is marked as failed.";
// [5] restart kills the process group, not only the shell: "The restarted session starts clean:
//     the working directory, environment variables, and running processes are all gone."
//     (... 실행 중인 프로세스가 모두 사라져요.) The example's process.kill("SIGKILL") leaves a
//     background job running;
// [6] large outputs truncated with the docs' truncateOutput: "To avoid token limit problems,
//     truncate large outputs" (토큰 한도 문제를 막으려면 큰 출력을 자릅니다).
// [fix] the example's one bug that loses output: a last line without a newline (`printf abc`)
//     shares its line with the sentinel and the example drops the whole line; here the text
//     before the sentinel is kept ("Your application returns the command's output", 작동 방식
//     (How it works)). Kept as written, the subject fails bash.output.partial_last_line.
// Harness plumbing, not behaviour: the shell starts in the case's directory, the deadline is the
// run's --timeout, and the shell's group is stopped when the suite closes stdin.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";

const workdir = process.env.TOOLUSE_WORKDIR ?? process.cwd();
const timeoutMs = Number(process.env.TOOLUSE_TIMEOUT ?? "30") * 1000;

// A bash process that stays alive between commands so state persists.
class BashSession {
  constructor() {
    this.start();
  }

  start() {
    this.process = spawn("/bin/bash", {
      detached: true, // own process group: a timeout can kill every child
      cwd: workdir // [plumbing] the case's directory
    });
    this.process.stdin.on("error", () => {}); // a dead shell's pipe: seen as [3] below
    this.process.stdin.write("exec 2>&1\n"); // interleave errors with output, in order
    this.lines = createInterface({ input: this.process.stdout });
  }

  // Run a command in the session and return its output and exit status (null: the shell ended).
  executeCommand(command) {
    const sentinel = `__CLAUDE_BASH_DONE_${randomUUID()}__`; // unique per call
    const output = [];
    const lines = this.lines;
    const result = new Promise((resolve) => {
      const onLine = (line) => {
        const at = line.indexOf(sentinel);
        if (at >= 0) {
          // this command's output is complete
          lines.off("line", onLine);
          lines.off("close", onClose);
          output.push(line.slice(0, at)); // [fix] a last line without a newline is output too
          const status = line.slice(at + sentinel.length).trim();
          resolve({ output: output.join(""), status: /^\d+$/.test(status) ? Number(status) : 1 });
        } else {
          output.push(`${line}\n`);
        }
      };
      const onClose = () => {
        // [3] end of file before the sentinel: the shell has ended
        lines.off("line", onLine);
        resolve({ output: output.join(""), status: null });
      };
      lines.on("line", onLine);
      lines.on("close", onClose);
    });
    this.process.stdin.write(`${command}\necho ${sentinel} $?\n`); // [2] the exit status
    return result;
  }

  restart() {
    try {
      process.kill(-this.process.pid, "SIGKILL"); // [5] the whole group
    } catch {
      // already gone
    }
    this.process.kill("SIGKILL");
    this.lines.close();
    this.start();
  }
}

// Run a command in the session, replacing the session if the command hangs.
async function executeWithTimeout(session, command, timeoutMs = 30000) {
  let timer;
  const timedOut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
  });
  try {
    return await Promise.race([session.executeCommand(command), timedOut]);
  } catch {
    // The group is the shell and every process the command started
    if (session.process.pid !== undefined) {
      try {
        process.kill(-session.process.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    session.restart();
    return `Error: command did not finish within ${timeoutMs / 1000} seconds`;
  } finally {
    clearTimeout(timer);
  }
}

function truncateOutput(output, maxLines = 100) {
  const lines = output.split("\n");
  if (lines.length > maxLines) {
    const truncated = lines.slice(0, maxLines).join("\n");
    return `${truncated}\n\n... Output truncated (${lines.length} total lines) ...`;
  }
  return output;
}

const bashSession = new BashSession();

// The handler of "Claude의 도구 호출 처리하기 (Handle Claude's tool calls)".
async function handle(input) {
  if (input && input.restart) {
    bashSession.restart();
    return { content: "Bash session restarted", is_error: false };
  }
  const answer = await executeWithTimeout(bashSession, input?.command ?? "", timeoutMs);
  if (typeof answer === "string") return { content: answer, is_error: true }; // [4]
  const { output, status } = answer;
  if (status === null) {
    // [3] the session broke: restart it and say so
    bashSession.restart();
    const note = "Error: the bash session ended; it was restarted: the working directory, " +
      "environment variables and running processes are reset";
    const sep = !output || output.endsWith("\n") ? "" : "\n";
    return { content: `${output}${sep}${note}`, is_error: true };
  }
  let result = truncateOutput(output); // [6]
  if (status !== 0 && !result.trim()) result = `Error: the command exited with status ${status}`;
  return { content: result, is_error: status !== 0 };
}

const requests = createInterface({ input: process.stdin });
let queue = Promise.resolve();
requests.on("line", (line) => {
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
requests.on("close", () => queue.then(() => {
  // [plumbing] the suite closed the session: stop the shell and everything it started
  try {
    process.kill(-bashSession.process.pid, "SIGKILL");
  } catch {
    // already gone
  }
  process.exit(0);
}));
