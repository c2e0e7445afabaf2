// Seed 003's own BashSession: the Node/TypeScript example of "Bash 도구 구현하기 (Implement the
// bash tool)" (its types removed to run as plain JavaScript), completed only with what the seed's
// prose asks. The documented design is the floor of MUST (docs/checks.md, the calibration rule):
// this subject must pass every MUST check. Run by the suite as an out-of-process subject:
//   tooluse run --bash-cmd "node tests/conformant/bash_seed003_session.mjs"
// Protocol (the suite's command subjects): one JSON tool input per line on stdin, one JSON
// result per line on stdout.
//
// Kept as the seed writes it: spawn("/bin/bash", { detached: true }), "exec 2>&1", a
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
//     재시작하는 타임아웃을 생략해요.) -- the seed's own executeWithTimeout;
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
// [6] large outputs truncated with the seed's truncateOutput: "To avoid token limit problems,
//     truncate large outputs" (토큰 한도 문제를 막으려면 큰 출력을 자릅니다).
// [fix] the example's one bug that loses output: a last line without a newline (`printf abc`)
//     shares its line with the sentinel and the example drops the whole line; here the text
//     before the sentinel is kept ("Your application returns the command's output", 작동 방식
//     (How it works)). Kept as written, the subject fails bash.output.partial_last_line.
// Harness plumbing, not behaviour: the shell starts in the case's directory, the deadline is the
// run's --timeout, and the shell's group is stopped when the suite closes stdin.
// The implementation is the package's bash starter, conformance/starters/bash_tool.mjs (what
// `tooluse init bash --lang node` writes out), so the starter is held to this floor.
import "../../conformance/starters/bash_tool.mjs";
