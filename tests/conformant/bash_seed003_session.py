"""Seed 003's own ``BashSession``: the Python example of "Bash 도구 구현하기 (Implement the bash
tool)", completed only with what the seed's prose asks. The documented design is the floor of
MUST (docs/checks.md, the calibration rule): this subject must pass every MUST check.

Kept as the seed writes it: one ``/bin/bash`` fed through a pipe, ``stderr=subprocess.STDOUT``,
``start_new_session=True``, ``text=True``, a unique sentinel echoed after each command and the
output read line by line until it; ``execute_with_timeout`` ("명령 타임아웃 사용하기 (Use command
timeouts)") as written; ``truncate_output`` ("큰 출력 처리하기 (Handle large outputs)") as written;
the handler of "Claude의 도구 호출 처리하기" (``restart`` -> ``"Bash session restarted"``). So a
command reading stdin reads the tool's own next line (``echo <sentinel>``), as the seed says
("제한 사항 (Limitations)": "the session cannot run vim, less, password prompts, or any command
that waits for input on stdin"), and is ended by the deadline; a syntax error ends the
non-interactive shell, or (an open quote, an open ``for``) waits for more input until the
deadline.

Each addition, with the sentence it comes from (English, the seed's Korean beside it):

1. **A deadline on every command** that kills the shell and everything it started and restarts
   the session: "The examples leave out what a complete implementation needs: a timeout that
   kills the shell and every process it started and restarts the session when a command
   hangs." (예시는 완전한 구현에 필요한 것, 즉 명령이 멈출 때 셸과 그것이 시작한 모든 프로세스를
   죽이고 세션을 재시작하는 타임아웃을 생략해요.) -- the seed's own ``execute_with_timeout``.
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
6. **Large outputs truncated** with the seed's ``truncate_output``: "To avoid token limit
   problems, truncate large outputs" (토큰 한도 문제를 막으려면 큰 출력을 자릅니다).

Two bugs of the example itself are fixed, each a one-line change, because each loses the user's
output (the calibration rule: data loss is a MUST) and the seed's own words ask for the output
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

The implementation is the package's bash starter, ``conformance/starters/bash_tool.py`` (what
``tooluse init bash`` writes out for a user to edit), so the starter is held to this floor.
"""

from conformance.starters.bash_tool import Tool, factory

__all__ = ["Tool", "factory"]
