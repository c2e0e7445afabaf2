"""The bash tool docs' own ``BashSession``: the Python example of "Bash 도구 구현하기 (Implement the bash
tool)", completed only with what the docs' prose asks. The documented design is the floor of
MUST (docs/checks.md, the calibration rule): this subject must pass every MUST check.

Kept as the docs write it: one ``/bin/bash`` fed through a pipe, ``stderr=subprocess.STDOUT``,
``start_new_session=True``, ``text=True``, a unique sentinel echoed after each command and the
output read line by line until it; ``execute_with_timeout`` ("명령 타임아웃 사용하기 (Use command
timeouts)") as written; ``truncate_output`` ("큰 출력 처리하기 (Handle large outputs)") as written;
the handler of "Claude의 도구 호출 처리하기" (``restart`` -> ``"Bash session restarted"``). So a
command reading stdin reads the tool's own next line (``echo <sentinel>``), as the docs say
("제한 사항 (Limitations)": "the session cannot run vim, less, password prompts, or any command
that waits for input on stdin"), and is ended by the deadline; a syntax error ends the
non-interactive shell, or (an open quote, an open ``for``) waits for more input until the
deadline.

Each addition, with the sentence it comes from (English, the docs' Korean beside it):

1. **A deadline on every command** that kills the shell and everything it started and restarts
   the session: "The examples leave out what a complete implementation needs: a timeout that
   kills the shell and every process it started and restarts the session when a command
   hangs." (예시는 완전한 구현에 필요한 것, 즉 명령이 멈출 때 셸과 그것이 시작한 모든 프로세스를
   죽이고 세션을 재시작하는 타임아웃을 생략해요.) -- the docs' own ``execute_with_timeout``.
2. **``is_error: true`` for a failed command**, so the exit status is echoed with the sentinel
   (``echo <sentinel> $?``): "When a command fails or the session breaks, tell Claude what
   happened. Return the message as the tool_result content and set is_error to true to mark
   that the tool call failed." (명령이 실패하거나 세션이 깨지면 ... is_error를 true로 설정해 ...)
   and the "Command not found" example (``bash: nonexistentcommand: command not found``,
   ``is_error: true``). An empty output of a failed command gets a one-line message (the same
   sentence: tell Claude what happened).
3. **A broken session is restarted and said so**, with ``is_error: true``: the same sentence
   ("or the session breaks"). When the shell has died (a syntax error such as ``echo )`` ends a
   non-interactive bash; ``exit``), the read loop sees end of file before the sentinel; the
   session is restarted at once (so the next command runs in a fresh session) and the answer
   says so.
4. **The timeout's answer is an error**: "Return the message as an error tool_result (see Handle
   errors) so the tool call is marked as failed." (메시지를 오류 tool_result로 반환하세요 ...)
5. **``restart`` kills the process group**, not only the shell: "To handle restart: true, kill
   the shell process and start a new one ... The restarted session starts clean: the working
   directory, environment variables, and running processes are all gone." (... 실행 중인
   프로세스가 모두 사라져요.) The example's ``self.process.kill()`` leaves a background job
   running; the prose says running processes are gone.
6. **Large outputs truncated** with the docs' ``truncate_output``: "To avoid token limit
   problems, truncate large outputs" (토큰 한도 문제를 막으려면 큰 출력을 자릅니다).

Two bugs of the example itself are fixed, each a one-line change, because each loses the user's
output (the calibration rule: data loss is a MUST) and the docs' own words ask for the output
("Your application returns the command's output (stdout and stderr together) to Claude as a
tool_result block", 작동 방식 (How it works)):

- a last line without a newline (``printf abc``) is printed on the sentinel's line, and the
  example drops that whole line (``if sentinel in line: break``): here the text before the
  sentinel is kept. Kept as written, the subject fails ``bash.output.partial_last_line``;
- ``text=True`` decodes strictly, so output that is not UTF-8 raises ``UnicodeDecodeError`` in
  the read loop and leaves the rest of the output, the sentinel included, in the pipe for the
  next command: here the pipe is decoded with ``errors="replace"``.

A third bug of the example hangs the tool, so it is fixed too (the calibration rule: hangs are a
MUST; "Give every command a deadline", 모든 명령에 마감 시간을 주세요, Use command timeouts):
``execute_with_timeout``'s ``with`` block waits for the reader thread when it ends, and the
reader reads the old shell's output pipe until end of file. A job that left the shell's process
group (``setsid cmd &``, its output not redirected) survives ``killpg`` and holds that pipe, so
a later command past the timeout is never answered. Kept as written, the subject fails
``bash.timeout.returns_error_in_time``; here the pool is shut down without waiting.

Harness plumbing, not behaviour: the shell starts in the case's directory (``cwd``), the
deadline is the run's ``--timeout``, and ``close`` stops the process group when the case ends.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

RESTARTED = "Bash session restarted"
BROKEN = ("Error: the bash session ended (bash exited with status {status}); it was restarted: "
          "the working directory, environment variables and running processes are reset")


class BashSession:
    """A bash process that stays alive between commands so state persists."""

    def __init__(self, workdir: Path | None = None) -> None:
        self.workdir = workdir if workdir is not None else getattr(self, "workdir", None)
        self.process = subprocess.Popen(
            ["/bin/bash"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # interleave errors with output, in order
            start_new_session=True,  # own process group: a timeout can kill every child
            text=True,
            errors="replace",  # [fix] output that is not UTF-8 must not break the read loop
            cwd=self.workdir,  # [plumbing] the case's directory
        )

    def execute_command(self, command: str) -> tuple[str, int | None]:
        """Run a command in the session; its output and exit status (None: the shell ended)."""
        sentinel = f"__CLAUDE_BASH_DONE_{uuid.uuid4().hex}__"  # unique per call
        assert self.process.stdin is not None and self.process.stdout is not None
        # [2] the exit status rides on the sentinel's line
        self.process.stdin.write(f"{command}\necho {sentinel} $?\n")
        self.process.stdin.flush()

        output = []
        for line in self.process.stdout:
            if sentinel in line:  # this command's output is complete
                before, _, status = line.partition(sentinel)
                output.append(before)  # [fix] a last line without a newline is output too
                return "".join(output), int(status) if status.strip().isdigit() else 1
            output.append(line)
        return "".join(output), None  # [3] end of file: the shell has ended

    def restart(self) -> None:
        try:  # [5] the whole group: running processes are gone
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.kill()
        self.process.wait()
        self.__init__()  # type: ignore[misc]


def execute_with_timeout(session: BashSession, command: str,
                         timeout: float = 30) -> tuple[str, int | None] | str:
    """Run a command in the session, replacing the session if the command hangs."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # [fix] not `with`: see above
    try:
        future = pool.submit(session.execute_command, command)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            # The group is the shell and every process the command started
            os.killpg(session.process.pid, signal.SIGKILL)
            session.restart()
            return f"Error: command did not finish within {timeout:g} seconds"
    finally:
        pool.shutdown(wait=False)  # [fix] the old reader may wait on a pipe a job still holds


def truncate_output(output: str, max_lines: int = 100) -> str:
    lines = output.split("\n")
    if len(lines) > max_lines:
        truncated = "\n".join(lines[:max_lines])
        return f"{truncated}\n\n... Output truncated ({len(lines)} total lines) ..."
    return output


class Tool:
    """The handler of "Claude의 도구 호출 처리하기 (Handle Claude's tool calls)"."""

    def __init__(self, workdir: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.bash_session = BashSession(workdir)

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        if tool_input.get("restart"):
            self.bash_session.restart()
            return {"content": RESTARTED, "is_error": False}
        command = tool_input.get("command")
        answer = execute_with_timeout(self.bash_session, command, self.timeout)
        if isinstance(answer, str):  # [4] the deadline passed: an error
            return {"content": answer, "is_error": True}
        output, status = answer
        if status is None:  # [3] the session broke: restart it and say so
            ended = self.bash_session.process.wait()
            self.bash_session.restart()
            note = BROKEN.format(status=ended)
            return {"content": f"{output}{note}" if output.endswith("\n") or not output
                    else f"{output}\n{note}", "is_error": True}
        result = truncate_output(output)  # [6]
        if status != 0 and not result.strip():  # [2] tell Claude what happened
            result = f"Error: the command exited with status {status}"
        return {"content": result, "is_error": status != 0}

    def close(self) -> None:
        """[plumbing] the case ended: stop the shell and everything it started."""
        try:
            os.killpg(self.bash_session.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.bash_session.process.kill()
        self.bash_session.process.wait()


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)
