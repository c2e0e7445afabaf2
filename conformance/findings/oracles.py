"""What a reproducer asserts, per check: the check's verdict on the counterexample, restated with
the standard library (a reproducer imports nothing of the suite).

Each oracle is the source of ``def judge(results)``, run after the steps (the tool still open;
``close_tool()`` closes it, for the checks about what is left after close). ``results`` holds one
dict per step: the tool's answer (``content``, ``is_error``) or ``{"raised": "Type: message"}``.
It returns ``(defect, what_happened)``: ``defect`` true while the implementation still does what
the check failed it for. Helpers the reproducer defines: ``text(result)``, ``read(path)`` (bytes,
None when missing), ``alive(pid)``, ``LEFT_RUNNING`` (pids killed at exit), ``here(text)``,
``W``, ``STEPS``, ``DOCUMENTED`` and ``RECEIVED`` (the cell's values as the report prints them),
``TIMEOUT`` (the column's command timeout).

A check with no oracle here gets ``repro: null`` and the reason (never a reproducer that would
exit 1 whatever the implementation does).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["ORACLES", "Oracle", "oracle_for"]


@dataclass(frozen=True)
class Oracle:
    #: ``def judge(results)`` (see the module docstring).
    source: str
    #: What the docs expect, as the reproducer prints it.
    expected: str
    #: Seconds a step may take before it counts as a hang: ``None`` for the default (60 s), or
    #: ``"timeout"``: the column's command timeout plus 10 s (a timeout check).
    deadline: str | None = None


_IS_ERROR = '''\
def judge(results):
    last = results[-1]
    if "raised" in last:
        return False, f"the call raised {last['raised']} (an error, not a success)"
    return not last.get("is_error"), f"is_error: {last.get('is_error')!r}, content: {text(last)[:300]!r}"
'''

_FILE_BYTES = '''\
import ast


def judge(results):
    path = here(next(s["path"] for s in reversed(STEPS) if "path" in s))
    want, got = ast.literal_eval(DOCUMENTED), read(path)
    return got != want, f"{path.replace(W, '$TOOLUSE_WORKDIR')} holds {got!r}, documented {want!r}"
'''

_NOT_RAISED = '''\
def judge(results):
    raised = [(i + 1, r["raised"]) for i, r in enumerate(results) if "raised" in r]
    if raised:
        return True, f"input {raised[0][0]} raised {raised[0][1]}"
    return False, f"every input was answered: {[r.get('is_error') for r in results]}"
'''

_LINES_SHOWN = '''\
import ast


def judge(results):
    shown = text(results[-1])
    want = ast.literal_eval(DOCUMENTED.removeprefix("the lines "))
    at = 0
    for line in want:
        found = shown.find(line, at)
        if line and found < 0:
            return True, f"the answer does not show the line {line!r} (in order): {shown[:400]!r}"
        at = found + len(line) if line else at
    return False, "every line shown, in order"
'''

_BYTES_ONE_OF = '''\
def judge(results):
    path = here(next(s["path"] for s in reversed(STEPS) if "path" in s))
    allowed = ALLOWED
    got = read(path)
    return got not in allowed, f"the file holds {got!r}; documented: one of {allowed!r}"
'''

_OUTPUT_LINES = '''\
def judge(results):
    shown = text(results[-1])
    missing = [line for line in DOCUMENTED.splitlines() if line and line not in shown]
    if missing:
        return True, f"the line {missing[0]!r} is not in the answer: {shown[:300]!r}"
    return False, "every printed line came back"
'''

_IN_ORDER = '''\
def judge(results):
    shown = text(results[-1])
    want = [line for line in DOCUMENTED.splitlines() if line]
    order = sorted(want, key=lambda line: shown.find(line))
    if any(line not in shown for line in want) or order != want:
        return True, f"came back as {shown!r}, written as {want!r}"
    return False, "in the order written"
'''

_ALL_LINES = '''\
def judge(results):
    shown = text(results[-1])
    lines = len(shown.splitlines())
    return lines >= 100000, f"{lines} lines ({len(shown)} characters) returned"
'''

_RECOVERED = '''\
import re


def judge(results):
    marker = re.search(r"recovered-[0-9a-f]+", STEPS[-1].get("command", "")).group(0)
    last = results[-1]
    if "raised" in last or last.get("is_error") or marker not in text(last):
        return True, (f"the next command `echo {marker}` got {last.get('raised') or text(last)[:300]!r}"
                      f" (is_error: {last.get('is_error')!r})")
    return False, f"`echo {marker}` ran"
'''

_BG_PID = '''\
import re
import time


def background_pid(results):
    for r in results:
        m = re.search(r"bg-pid=(\\d+)", text(r))
        if m:
            LEFT_RUNNING.append(int(m.group(1)))
            return int(m.group(1))
    return None
'''

_SURVIVES_RESTART = _BG_PID + '''

def judge(results):
    pid = background_pid(results)
    if pid is None:
        return False, "no background job was started"
    time.sleep(1.0)
    return alive(pid), f"the background job (pid {pid}) is {'still running' if alive(pid) else 'gone'} after the restart"
'''

_SURVIVES_CLOSE = _BG_PID + '''

def judge(results):
    pid = background_pid(results)
    if pid is None:
        return False, "no background job was started"
    close_tool()
    time.sleep(1.0)
    return alive(pid), f"the background job (pid {pid}) is {'still running' if alive(pid) else 'gone'} after close"
'''

_NOHUP_AFTER_RESTART = '''\
import glob
import time


def judge(results):
    time.sleep(1.0)
    pids = []
    for name in glob.glob(os.path.join(W, "heartbeat-*.pid")):
        with open(name) as f:
            pids.append(int(f.read().split()[0]))
    LEFT_RUNNING.extend(pids)
    running = [pid for pid in pids if alive(pid)]
    return bool(running), (f"the nohup job (pid {running[0]}) still runs 1 s after the restart"
                           if running else f"the nohup job {pids} is gone")
'''

_NOT_EXECUTED = '''\
import ast


def judge(results):
    made = [name for name in ast.literal_eval(RECEIVED) if os.path.exists(os.path.join(W, name))]
    if made:
        return True, f"viewing the directory ran a shell command: it created {made}"
    return False, "nothing was run"
'''

_CREATE_REFUSED = '''\
def judge(results):
    path = here(STEPS[-1]["path"])
    last = results[-1]
    if os.path.exists(path):
        return True, f"create without file_text left {path.replace(W, '$TOOLUSE_WORKDIR')} ({read(path)!r}); the call: {last.get('raised') or text(last)[:200]!r}"
    return False, "no file was created"
'''

ORACLES: dict[str, Oracle] = {
    "bash.errors.failure_flagged": Oracle(_IS_ERROR, "is_error: true for a command that fails"),
    "bash.timeout.returns_error_in_time": Oracle(
        _IS_ERROR, "an error result (is_error: true) within the timeout", deadline="timeout"),
    "editor.view.view_range_out_of_range_is_error": Oracle(
        _IS_ERROR, "an error result: the range is outside the file"),
    "editor.paths.outside_workdir_refused": Oracle(
        _IS_ERROR, "an error result: the path is outside the working directory"),
    "editor.bytes.crlf_preserved": Oracle(_FILE_BYTES, "the file's other bytes unchanged (CRLF kept)"),
    "editor.bytes.trailing_newline_preserved": Oracle(
        _FILE_BYTES, "the file's other bytes unchanged (no final newline added)"),
    "editor.str_replace.whitespace_exact": Oracle(
        _FILE_BYTES, "the file unchanged: old_str is not in it byte for byte"),
    "editor.errors.returned_not_raised": Oracle(
        _NOT_RAISED, "an error result ({'content': 'Error: ...', 'is_error': true}), not an exception"),
    "editor.errors.invalid_input_answered": Oracle(
        _CREATE_REFUSED, "an error result, and no file: create needs file_text"),
    "editor.paths.never_executed_by_directory_view": Oracle(
        _NOT_EXECUTED, "a plain directory listing; the name is never shell input"),
    "bash.output.roundtrip": Oracle(_OUTPUT_LINES, "the printed lines, unchanged"),
    "bash.output.interleaved_in_order": Oracle(
        _IN_ORDER, "stdout and stderr lines in the order they were written"),
    "bash.output.large_output_truncated": Oracle(
        _ALL_LINES, "a truncated output that says so, not all 100,000 lines"),
    "bash.timeout.session_usable_after": Oracle(
        _RECOVERED, "the next command runs", deadline="timeout"),
    "bash.stdin.does_not_hang": Oracle(_RECOVERED, "the next command runs", deadline="timeout"),
    "bash.restart.clears_state": Oracle(
        _SURVIVES_RESTART, "running processes are gone after a restart"),
    "bash.session.no_processes_left_after_close": Oracle(
        _SURVIVES_CLOSE, "no process of the session left running after close"),
}


def oracle_for(check_id: str, documented: str, message: str) -> Oracle | None:
    """The oracle for a failing cell (the model checks' depends on what their example found)."""
    if check_id in ORACLES:
        return ORACLES[check_id]
    if check_id == "bash.model.agrees_with_session_model" and "nohup" in message:
        return Oracle(_NOHUP_AFTER_RESTART, "running processes are gone after a restart")
    if check_id == "editor.model.agrees_with_reference_model":
        if documented.startswith("the lines "):
            return Oracle(_LINES_SHOWN, "view shows every line of the file")
        allowed = documented_files(documented)
        if allowed:
            return Oracle(f"#: the file's documented contents (any of them)\nALLOWED = {allowed!r}"
                          "\n\n\n" + _BYTES_ONE_OF, "the file holds what the documented insert makes")
    return None


#: One documented alternative as the model check words it (conformance.wording): ``success, file
#: "a\\n"``, ``error, file empty``, ``success, file absent``.
_ALTERNATIVE = re.compile(r'(\w+), file (empty|absent|"(?:[^"\\]|\\.)*")(?:; |$)')
_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}


def documented_files(documented: str) -> list[bytes | None] | None:
    """The file contents a model check's "documented" text allows, exactly: from the words of
    ``conformance.wording`` (``one of: success, file "…"; …`` or one alternative), or the older
    Python repr (``one of [('success', b'…'), …]``). ``None`` when the text is not one of those or
    a content was cut short ("… (N more characters)"): then no oracle, never a guessed one."""
    if documented.startswith("one of ["):
        try:
            return [b for _, b in ast.literal_eval(documented.removeprefix("one of "))]
        except (ValueError, SyntaxError, TypeError):
            return None
    text = documented.removeprefix("one of: ")
    found: list[bytes | None] = []
    at = 0
    for m in _ALTERNATIVE.finditer(text):
        if m.start() != at:
            return None
        at = m.end()
        content = m.group(2)
        found.append(None if content == "absent" else b"" if content == "empty"
                     else _unquoted(content[1:-1]))
    return found if found and at == len(text) else None


def _unquoted(text: str) -> bytes:
    """The bytes ``conformance.wording.quoted`` showed (``\\xNN`` above 0x7f: a byte that was
    not UTF-8)."""
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] == "x" and len(e) == 3:
            n = int(e[1:], 16)
            return chr(0xDC00 + n) if n >= 0x80 else chr(n)
        if e[0] in "uU" and len(e) > 1:
            return chr(int(e[1:], 16))
        return _SIMPLE.get(e, e)
    return _ESCAPE.sub(one, text).encode("utf-8", "surrogateescape")
