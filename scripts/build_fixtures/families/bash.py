"""Bash client tool 20250124 and 20241022 (seed 003, PROTOCOL.md §4): one command, several
tool_use blocks answered in one message, restart, the documented error results; the Messages
pairing rules each shown by a refused request."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.sources import SEED_BASH, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

VERSIONS = {"bash_20250124": ("claude-opus-4-7", None),
            "bash_20241022": ("claude-3-5-sonnet-20241022", "computer-use-2024-10-22")}
S_TOOL = seed(SEED_BASH, "Bash 도구 (Bash tool)")
S_HOW = seed(SEED_BASH, "작동 방식 (How it works)")
S_PARAMS = seed(SEED_BASH, "파라미터 (Parameters)")
S_VER = seed(SEED_BASH, "도구 버전 (Tool versions)")
S_ERR = seed(SEED_BASH, "오류 처리하기 (Handle errors)")
S_ERRS = protocol("1. Programmatic tool calling: Error texts and conditions")
S_STREAM = protocol("6. Streaming (SSE): Grammar")

ERRORS = {
    "timeout": ("sleep 120 && echo done", "Error: command did not finish within 30 seconds"),
    "command_not_found": ("nonexistentcommand", "bash: nonexistentcommand: command not found"),
    "permission_denied": ("cat /root/sensitive-file", "bash: /root/sensitive-file: Permission denied"),
}


def _cb(v: str, scenario: str, title: str, sources: list, streamed: bool = False) -> tuple[CassetteBuilder, Conversation]:
    model, beta = VERSIONS[v]
    srcs = [*sources, S_VER] if beta else list(sources)
    cb = CassetteBuilder("bash", v, scenario, f"{v}: {title}", [*srcs, S_STREAM] if streamed else srcs,
                         model=model, tools=[{"type": v, "name": "bash"}], streamed=streamed)
    return cb, Conversation(cb, max_tokens=1024, beta=beta)


def one_command(v: str, streamed: bool) -> CassetteBuilder:
    cb, c = _cb(v, "one_command", "one command and its output", [S_TOOL, S_HOW], streamed)
    c.user("List all Python files in the current directory.")
    tid = cb.ids.make("toolu")
    c.turn([b.text("I'll list the Python files."), b.tool_use(tid, "bash", {"command": "ls -la *.py"})],
           "tool_use")
    c.tool_results(b.tool_result(tid, "-rw-r--r-- 1 user user 1024 Aug 20 10:00 app.py\n"
                                      "-rw-r--r-- 1 user user  512 Aug 20 10:00 test_app.py"))
    c.turn([b.text("There are two Python files: `app.py` and `test_app.py`.")], "end_turn")
    return cb


def _two_uses(cb: CassetteBuilder, c: Conversation) -> tuple[str, str]:
    t1, t2 = cb.ids.make("toolu"), cb.ids.make("toolu")
    c.turn([b.text("I'll check the Python version and the disk usage."),
            b.tool_use(t1, "bash", {"command": "python3 --version"}),
            b.tool_use(t2, "bash", {"command": "df -h . | tail -1"})], "tool_use")
    return t1, t2


def several(v: str) -> CassetteBuilder:
    cb, c = _cb(v, "several_tool_uses", "several tool_use blocks in one turn, answered in one message",
                [S_HOW])
    c.user("Which Python version is installed, and how much disk is free?")
    t1, t2 = _two_uses(cb, c)
    c.tool_results(b.tool_result(t1, "Python 3.11.9"), b.tool_result(t2, "/dev/sda1  50G  20G  30G  40% /"))
    c.turn([b.text("Python 3.11.9 is installed and 30 GB of disk is free.")], "end_turn")
    return cb


def restart(v: str) -> CassetteBuilder:
    cb, c = _cb(v, "restart", "restart: true and the confirming result", [S_PARAMS])
    c.user("The shell seems stuck; restart it and show the working directory.")
    t1 = cb.ids.make("toolu")
    c.turn([b.tool_use(t1, "bash", {"restart": True})], "tool_use")
    c.tool_results(b.tool_result(t1, "Bash session restarted"))
    t2 = cb.ids.make("toolu")
    c.turn([b.tool_use(t2, "bash", {"command": "pwd"})], "tool_use")
    c.tool_results(b.tool_result(t2, "/home/user"))
    c.turn([b.text("The session was restarted; the working directory is /home/user.")], "end_turn")
    return cb


def error(v: str, kind: str) -> CassetteBuilder:
    command, message = ERRORS[kind]
    cb, c = _cb(v, f"error_{kind}", f"error result: {kind.replace('_', ' ')}", [S_ERR])
    c.user("Run the maintenance command.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "bash", {"command": command})], "tool_use")
    c.tool_results(b.tool_result(tid, message, is_error=True))
    c.turn([b.text("The command failed: " + message.split(": ", 1)[-1])], "end_turn")
    cb.extra_tags["client_errors"] = [kind]
    return cb


def output_truncated(v: str) -> CassetteBuilder:
    cb, c = _cb(v, "output_truncated", "a long output truncated by the application (the API does not "
                "truncate)", [seed(SEED_BASH, "큰 출력 처리하기 (Handle large outputs)"),
                              protocol("4. Bash tool: Output")])
    c.user("Show me the application log.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "bash", {"command": "cat /var/log/app.log"})], "tool_use")
    head = "\n".join(f"2026-08-20 09:{i // 60:02d}:{i % 60:02d} INFO request {i} ok" for i in range(100))
    c.tool_results(b.tool_result(tid, head + "\n\n... Output truncated (2500 total lines) ..."))
    c.turn([b.text("The first 100 of 2500 log lines are routine INFO entries; nothing failed.")],
           "end_turn")
    return cb


def pairing_rejections(v: str) -> Iterator[CassetteBuilder]:
    cb, c = _cb(v, "reject_unanswered_tool_use", "one of two tool_use blocks left unanswered", [S_HOW, S_ERRS])
    c.user("Which Python version is installed, and how much disk is free?")
    t1, t2 = _two_uses(cb, c)
    c.tool_results(b.tool_result(t1, "Python 3.11.9"))
    c.reject("messages.tool_use.answered_once_in_next_message", "")
    yield cb
    cb, c = _cb(v, "reject_unknown_tool_use_id", "a tool_result answering an id the assistant never used",
                [S_ERRS, protocol("1. Programmatic tool calling: Error texts and conditions", "3P")])
    c.user("List all Python files in the current directory.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "bash", {"command": "ls *.py"})], "tool_use")
    c.tool_results(b.tool_result(cb.ids.make("toolu"), "app.py"))
    c.reject("messages.tool_result.answers_previous_tool_use", "")
    yield cb
    cb, c = _cb(v, "reject_text_before_results", "text placed before the tool_result blocks", [S_ERRS])
    c.user("List all Python files in the current directory.")
    tid = cb.ids.make("toolu")
    c.turn([b.tool_use(tid, "bash", {"command": "ls *.py"})], "tool_use")
    c.user([b.text("Here is the output:"), b.tool_result(tid, "app.py")])
    c.reject("messages.tool_result.before_other_content", "")
    yield cb


def reject_name(v: str) -> CassetteBuilder:
    cb, c = _cb(v, "reject_wrong_name", "the bash type with another name is refused", [S_PARAMS])
    c.user("List all Python files in the current directory.")
    c.reject("tools.fixed_type_name", "", mutate=lambda body: body.update(tools=[{"type": v, "name": "shell"}]))
    return cb


def reject_beta() -> CassetteBuilder:
    cb, c = _cb("bash_20241022", "reject_missing_beta_header", "bash_20241022 without "
                "computer-use-2024-10-22 is refused", [S_VER])
    c.user("List all Python files in the current directory.")
    c.reject("beta.legacy_header_required", "", headers={"anthropic-version": "2023-06-01",
                                                          "content-type": "application/json"})
    return cb


@family("bash")
def build() -> Iterator[CassetteBuilder]:
    for v in VERSIONS:
        yield one_command(v, False)
        yield one_command(v, True)
        yield several(v)
        yield restart(v)
        for kind in ERRORS:
            yield error(v, kind)
    yield output_truncated("bash_20250124")
    yield from pairing_rejections("bash_20250124")
    yield reject_name("bash_20250124")
    yield reject_beta()
